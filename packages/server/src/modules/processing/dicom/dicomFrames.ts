import sharp from 'sharp';
import { ADOBE_APP14_RGB } from '../../tiles/jpegTile.js';
import { CodestreamError, codestreamMismatch, readCodestreamHeader } from '../jp2kCodestream.js';
import { Jp2kTileError, type Jp2kDecoderPool } from '../jp2kPool.js';
import { codingOf, DicomRejectedError } from './dicomFile.js';
import type { DicomInstance } from './dicomInstance.js';

/**
 * One frame of a WSI instance decoded to 8-bit RGB (3 bytes a pixel, row-major, Columns x Rows):
 * JPEG baseline by sharp (libvips/libjpeg-turbo), JPEG 2000 by the worker's OpenJPEG thread pool
 * (jp2kPool.ts, the decoder of JPEG 2000 TIFF slides), native pixels copied. MONOCHROME2 becomes
 * grey RGB.
 */

export interface FrameDecoders {
  /** The JPEG 2000 pool, started on first use. */
  jp2k(): Jp2kDecoderPool;
}

const MARKER_SOI = 0xd8;
const MARKER_APP0 = 0xe0;
const MARKER_APP14 = 0xee;
const MARKER_SOS = 0xda;

/** Whether a JPEG stream says what its components are: a JFIF (APP0) or Adobe (APP14) segment before the scan. */
function declaresColour(jpeg: Buffer): boolean {
  let at = 2;
  while (at + 4 <= jpeg.length && jpeg[at] === 0xff) {
    const marker = jpeg[at + 1] ?? 0;
    if (marker === MARKER_SOS) return false;
    if (marker === MARKER_APP0 && jpeg.toString('latin1', at + 4, at + 8) === 'JFIF') return true;
    if (marker === MARKER_APP14 && jpeg.toString('latin1', at + 4, at + 9) === 'Adobe') return true;
    at += 2 + jpeg.readUInt16BE(at + 2);
  }
  return false;
}

/**
 * A JPEG frame as the decoder should read it. libjpeg takes three components as YCbCr unless a
 * JFIF/Adobe segment or component ids 'R','G','B' say otherwise, as YBR_FULL_422 frames are. A
 * frame whose dataset says RGB and whose stream does not say anything is RGB as stored: an Adobe
 * segment with transform 0 is put after SOI (as for Aperio's RGB tiles, tiles/jpegTile.ts). A
 * stream that does declare its colour is trusted over the dataset: the Google converter
 * (wsi2dcm) labels JFIF (YCbCr) frames RGB, and decoding them as RGB would give wrong colours.
 */
export function jpegForDecoder(jpeg: Buffer, photometric: string): Buffer {
  if (photometric !== 'RGB' || jpeg[0] !== 0xff || jpeg[1] !== MARKER_SOI || declaresColour(jpeg)) return jpeg;
  return Buffer.concat([jpeg.subarray(0, 2), ADOBE_APP14_RGB, jpeg.subarray(2)]);
}

/** A raw codestream: the frame itself, or the contents of the jp2c box of a JP2 file. */
function codestreamOf(data: Buffer): Buffer {
  if (data.length < 12 || data.readUInt32BE(0) !== 12 || data.toString('latin1', 4, 8) !== 'jP  ') return data;
  for (let at = 0; at + 8 <= data.length;) {
    let length = data.readUInt32BE(at);
    const type = data.toString('latin1', at + 4, at + 8);
    let start = at + 8;
    if (length === 1) {
      length = Number(data.readBigUInt64BE(at + 8));
      start = at + 16;
    } else if (length === 0) length = data.length - at;
    if (type === 'jp2c') return data.subarray(start, at + length);
    if (length < 8) break;
    at += length;
  }
  return data;
}

function toRgb(grey: Buffer): Buffer {
  const out = Buffer.alloc(grey.length * 3);
  for (let i = 0; i < grey.length; i++) out.fill(grey[i] ?? 0, i * 3, i * 3 + 3);
  return out;
}

/** JPEG's full-range YCbCr → RGB (ITU-T T.871), for native YBR_FULL frames. */
function ycbcrToRgb(pixels: Buffer): Buffer {
  const clamp = (v: number) => (v < 0 ? 0 : v > 255 ? 255 : Math.round(v));
  for (let i = 0; i + 2 < pixels.length; i += 3) {
    const y = pixels[i] ?? 0;
    const cb = (pixels[i + 1] ?? 0) - 128;
    const cr = (pixels[i + 2] ?? 0) - 128;
    pixels[i] = clamp(y + 1.402 * cr);
    pixels[i + 1] = clamp(y - 0.344136 * cb - 0.714136 * cr);
    pixels[i + 2] = clamp(y + 1.772 * cb);
  }
  return pixels;
}

/** Bytes of one native frame. */
export function nativeFrameBytes(instance: DicomInstance): number {
  return instance.rows * instance.columns * instance.samplesPerPixel;
}

function decodeNative(instance: DicomInstance, data: Buffer): Buffer {
  const pixels = instance.rows * instance.columns;
  if (instance.samplesPerPixel === 1) return toRgb(data);
  let rgb = data;
  if (instance.planarConfiguration === 1) {
    rgb = Buffer.alloc(pixels * 3);
    for (let i = 0; i < pixels; i++) for (let c = 0; c < 3; c++) rgb[i * 3 + c] = data[c * pixels + i] ?? 0;
  }
  return instance.photometric === 'YBR_FULL' ? ycbcrToRgb(Buffer.from(rgb)) : rgb;
}

async function decodeJpeg(instance: DicomInstance, data: Buffer, label: string): Promise<Buffer> {
  let decoded;
  try {
    decoded = await sharp(jpegForDecoder(data, instance.photometric), { failOn: 'warning' })
      .raw()
      .toBuffer({ resolveWithObject: true });
  } catch (error) {
    throw new DicomRejectedError(
      `The JPEG data of ${label} could not be decoded (${error instanceof Error ? error.message.split('\n')[0] : String(error)})`,
    );
  }
  const { info } = decoded;
  if (info.width !== instance.columns || info.height !== instance.rows)
    throw new DicomRejectedError(
      `The JPEG data of ${label} is ${info.width} x ${info.height} px instead of ${instance.columns} x ${instance.rows}`,
    );
  if (info.channels === 1) return toRgb(decoded.data);
  if (info.channels !== 3) throw new DicomRejectedError(`The JPEG data of ${label} has ${info.channels} components`);
  return decoded.data;
}

async function decodeJpeg2000(
  instance: DicomInstance,
  data: Buffer,
  label: string,
  decoders: FrameDecoders,
): Promise<Buffer> {
  const codestream = codestreamOf(data);
  let header;
  try {
    header = readCodestreamHeader(codestream);
  } catch (error) {
    if (error instanceof CodestreamError)
      throw new DicomRejectedError(`The JPEG 2000 data of ${label} could not be decoded (${error.message})`);
    throw error;
  }
  const mismatch =
    codestreamMismatch(header, instance.columns, instance.rows) ??
    (header.width !== instance.columns || header.height !== instance.rows
      ? `its size ${header.width} x ${header.height} is not the frame's ${instance.columns} x ${instance.rows}`
      : null);
  if (mismatch) throw new DicomRejectedError(`The JPEG 2000 data of ${label} could not be decoded (${mismatch})`);
  // YCbCr components only when the dataset says YBR_FULL and the stream has no component transform
  // (with one, OpenJPEG's output is RGB: YBR_RCT/YBR_ICT). YBR_FULL_422 cannot describe a
  // codestream of full-size components; Orthanc's WSI dicomizer writes it for RGB components.
  const ycbcr = instance.photometric === 'YBR_FULL' && header.mct === 0;
  const bytes = new Uint8Array(codestream.length);
  bytes.set(codestream);
  try {
    const pixels = await decoders
      .jp2k()
      .decode({ data: bytes, width: header.width, height: header.height, ycbcr, label });
    return Buffer.from(pixels.buffer, pixels.byteOffset, pixels.byteLength);
  } catch (error) {
    if (error instanceof Jp2kTileError)
      throw new DicomRejectedError(`The JPEG 2000 data of ${error.label} could not be decoded (${error.reason})`);
    throw error;
  }
}

/** RGB pixels of one frame (Columns x Rows x 3), whatever its coding. */
export async function decodeFrame(
  instance: DicomInstance,
  data: Buffer,
  label: string,
  decoders: FrameDecoders,
): Promise<Buffer> {
  const coding = codingOf(instance.transferSyntax);
  if (coding === 'native') return decodeNative(instance, data);
  if (coding === 'jpeg') return decodeJpeg(instance, data, label);
  return decodeJpeg2000(instance, data, label, decoders);
}
