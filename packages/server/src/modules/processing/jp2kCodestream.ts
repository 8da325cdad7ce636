/**
 * JPEG 2000 in TIFF: what the worker checks of a tile's codestream before it is decoded. The main
 * header (SIZ, COD) is read here, in the main thread, so that a tile claiming another size, depth
 * or component layout than its TIFF directory is refused before OpenJPEG allocates anything for
 * it (a damaged SIZ could otherwise ask the decoder for gigabytes).
 */

/** Aperio's JPEG 2000 codes: 33003 YCbCr, 33005 RGB; 33004 is Aperio's unused variant, 34712 the registered one. */
export const JPEG2000_COMPRESSIONS: ReadonlySet<number> = new Set([33003, 33004, 33005, 34712]);

export function isJpeg2000(compression: number): boolean {
  return JPEG2000_COMPRESSIONS.has(compression);
}

export interface CodestreamHeader {
  /** Image size (Xsiz - XOsiz, Ysiz - YOsiz). */
  width: number;
  height: number;
  components: { depth: number; signed: boolean; dx: number; dy: number }[];
  /** The multiple component transform of the default coding style (COD SGcod): 1 = RCT/ICT, applied by OpenJPEG. */
  mct: number;
}

/** A codestream whose main header is missing or malformed. */
export class CodestreamError extends Error {
  override readonly name = 'CodestreamError';
}

const SOC = 0xff4f;
const SIZ = 0xff51;
const COD = 0xff52;
const SOT = 0xff90;

/**
 * The main header of a raw JPEG 2000 codestream (as TIFF stores it: SOC first, no JP2 boxes).
 * Reads up to the first tile-part (SOT); throws {@link CodestreamError} when SOC, SIZ or COD is
 * missing or a marker segment runs past the data.
 */
export function readCodestreamHeader(data: Uint8Array): CodestreamHeader {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const u16 = (at: number) => view.getUint16(at);
  const u32 = (at: number) => view.getUint32(at);
  if (data.length < 4 || u16(0) !== SOC) throw new CodestreamError('no start-of-codestream marker');
  let at = 2;
  let size: Omit<CodestreamHeader, 'mct'> | null = null;
  let mct: number | null = null;
  while (at + 4 <= data.length) {
    const marker = u16(at);
    if (marker === SOT) break;
    if (marker >>> 8 !== 0xff) throw new CodestreamError(`bad marker at byte ${at}`);
    const length = u16(at + 2);
    if (length < 2 || at + 2 + length > data.length) throw new CodestreamError(`marker segment at byte ${at} is cut`);
    const segment = at + 4;
    if (marker === SIZ) {
      if (length < 38) throw new CodestreamError('SIZ segment too short');
      const count = u16(segment + 34);
      if (count < 1 || length !== 38 + 3 * count) throw new CodestreamError('SIZ segment has a wrong length');
      const components = [];
      for (let c = 0; c < count; c++) {
        const ssiz = data[segment + 36 + 3 * c] ?? 0;
        components.push({
          depth: (ssiz & 0x7f) + 1,
          signed: (ssiz & 0x80) !== 0,
          dx: data[segment + 37 + 3 * c] ?? 0,
          dy: data[segment + 38 + 3 * c] ?? 0,
        });
      }
      size = {
        width: u32(segment + 2) - u32(segment + 10),
        height: u32(segment + 6) - u32(segment + 14),
        components,
      };
    } else if (marker === COD) {
      if (length < 12) throw new CodestreamError('COD segment too short');
      mct = data[segment + 4] ?? 0;
    }
    at += 2 + length;
  }
  if (!size) throw new CodestreamError('no SIZ segment');
  if (mct === null) throw new CodestreamError('no COD segment');
  return { ...size, mct };
}

/** How a tile's decoded components become RGB. */
export type Jp2kColour = 'rgb' | 'ycbcr';

/**
 * The colour of the decoded components (after OpenJPEG's own inverse component transform, when the
 * codestream has one): YCbCr for Aperio 33003 (OpenSlide converts its tiles whatever the stream's
 * transform) and for 33004, which libvips writes for lossy JPEG 2000 tiles after its own RGB → YCbCr
 * conversion (and on top of the stream's transform); for 34712 as the photometric tag says (6 is
 * YCbCr); RGB for Aperio 33005.
 */
export function jp2kColour(compression: number, photometric: number | null): Jp2kColour {
  if (compression === 33003 || compression === 33004) return 'ycbcr';
  if (compression === 34712 && photometric === 6) return 'ycbcr';
  return 'rgb';
}

/**
 * Why a tile's header does not fit its TIFF directory (null when it does): 3 unsigned 8-bit
 * components of the full size, at most the directory's tile size. Subsampled components (chroma at
 * half size) are refused: the WebAssembly codec interleaves every component as if it had the
 * image's size, which would read past the smaller ones.
 */
export function codestreamMismatch(header: CodestreamHeader, tileWidth: number, tileHeight: number): string | null {
  if (header.width < 1 || header.height < 1 || header.width > tileWidth || header.height > tileHeight)
    return `its size ${header.width} x ${header.height} does not fit the ${tileWidth} x ${tileHeight} tile`;
  if (header.components.length !== 3) return `it has ${header.components.length} components instead of 3`;
  for (const [c, component] of header.components.entries()) {
    if (component.depth !== 8 || component.signed) return `component ${c} is not unsigned 8-bit`;
    if (component.dx !== 1 || component.dy !== 1)
      return `component ${c} is sampled ${component.dx} x ${component.dy}; subsampled components are not supported`;
  }
  return null;
}
