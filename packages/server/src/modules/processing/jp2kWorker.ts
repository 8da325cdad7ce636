import { createRequire } from 'node:module';
import type * as WorkerThreads from 'node:worker_threads';

/**
 * The code of a worker thread of the JPEG 2000 decoder pool (jp2kPool.ts): OpenJPEG built to
 * WebAssembly (`@cornerstonejs/codec-openjpeg`, its decode-only build), one tile per message. It
 * answers with the tile's pixels as interleaved 8-bit RGB, converted from YCbCr when asked, or with
 * the decoder's error.
 *
 * OpenJPEG reports damaged data through its message callbacks, not by failing (the codec then
 * keeps its previous output): every `[ERROR]` or `[WARNING]` it prints while decoding a tile fails
 * that tile, as libvips' `failOn: 'warning'` does for other slides, and each tile gets a fresh
 * decoder object, so a failed decode can never hand back another tile's pixels.
 *
 * {@link jp2kWorkerMain} runs in the thread as its source text (`new Worker(code, { eval: true })`):
 * a worker started from a `.ts` file would need the TypeScript loader, which Node 20 does not
 * carry into worker threads. So it is self-contained: it uses nothing from this module's scope.
 */

export interface DecodeRequest {
  id: number;
  data: Uint8Array;
  width: number;
  height: number;
  ycbcr: boolean;
}

export type DecodeResponse = { id: number; pixels: Uint8Array } | { id: number; error: string };

/** What the thread is started with (`workerData`). */
export interface Jp2kWorkerData {
  /** Absolute path of the codec's decode-only WebAssembly build (its JavaScript loader). */
  codecPath: string;
}

/** The codec's loader, resolved from this package. */
export function jp2kCodecPath(): string {
  return createRequire(import.meta.url).resolve('@cornerstonejs/codec-openjpeg/decodewasmjs');
}

/** The body of a decoder thread (CommonJS scope of an eval worker: `require` is the thread's). */
export function jp2kWorkerMain(): void {
  interface FrameInfo {
    width: number;
    height: number;
    componentCount: number;
  }
  interface J2KDecoder {
    getEncodedBuffer(length: number): Uint8Array;
    getDecodedBuffer(): Uint8Array;
    decode(): void;
    getFrameInfo(): FrameInfo;
    delete(): void;
  }
  interface OpenJpegModule {
    J2KDecoder: new () => J2KDecoder;
  }
  type Factory = (options: { print: (m: string) => void; printErr: (m: string) => void }) => Promise<OpenJpegModule>;

  // The thread's CommonJS scope (an eval worker) has require and no import.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const threads = require('node:worker_threads') as typeof WorkerThreads;
  const port = threads.parentPort;
  const { codecPath } = threads.workerData as Jp2kWorkerData;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const factory = require(codecPath) as Factory;

  let problems: string[] = [];
  const listen = (message: string) => {
    if (message.startsWith('[ERROR]') || message.startsWith('[WARNING]')) problems.push(message);
  };

  /** JPEG's full-range YCbCr → RGB (ITU-T T.871), as OpenSlide converts Aperio 33003 tiles. */
  const ycbcrToRgb = (pixels: Uint8Array) => {
    const clamp = (v: number) => (v < 0 ? 0 : v > 255 ? 255 : Math.round(v));
    for (let i = 0; i < pixels.length; i += 3) {
      const y = pixels[i] ?? 0;
      const cb = (pixels[i + 1] ?? 0) - 128;
      const cr = (pixels[i + 2] ?? 0) - 128;
      pixels[i] = clamp(y + 1.402 * cr);
      pixels[i + 1] = clamp(y - 0.344136 * cb - 0.714136 * cr);
      pixels[i + 2] = clamp(y + 1.772 * cb);
    }
  };

  const decode = (codec: OpenJpegModule, request: DecodeRequest): DecodeResponse => {
    const decoder = new codec.J2KDecoder();
    problems = [];
    try {
      decoder.getEncodedBuffer(request.data.length).set(request.data);
      decoder.decode();
      if (problems.length > 0) return { id: request.id, error: problems.join('; ').replace(/\s+/g, ' ').slice(0, 300) };
      const info = decoder.getFrameInfo();
      if (info.width !== request.width || info.height !== request.height || info.componentCount !== 3)
        return {
          id: request.id,
          error: `decoded ${info.width} x ${info.height} x ${info.componentCount} instead of ${request.width} x ${request.height} x 3`,
        };
      const pixels = new Uint8Array(decoder.getDecodedBuffer());
      if (pixels.length !== info.width * info.height * 3)
        return { id: request.id, error: `decoded ${pixels.length} bytes for ${info.width} x ${info.height} pixels` };
      if (request.ycbcr) ycbcrToRgb(pixels);
      return { id: request.id, pixels };
    } catch (error) {
      return { id: request.id, error: error instanceof Error ? error.message : String(error) };
    } finally {
      decoder.delete();
    }
  };

  const ready = factory({ print: listen, printErr: listen });
  port?.on('message', (request: DecodeRequest) => {
    void ready.then((codec) => {
      const response = decode(codec, request);
      if ('pixels' in response) port.postMessage(response, [response.pixels.buffer as ArrayBuffer]);
      else port.postMessage(response);
    });
  });
}
