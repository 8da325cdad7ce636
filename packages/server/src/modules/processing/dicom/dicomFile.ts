import { open, type FileHandle } from 'node:fs/promises';
import dicomParser, { type DataSet } from 'dicom-parser';
import { SlideRejectedError } from '../slideInfo.js';

/**
 * One DICOM Part 10 file of a whole-slide series, read without loading its pixels: the dataset up
 * to the Pixel Data element is parsed by `dicom-parser` (cornerstone), and the frames are located
 * by file offset — the value itself for native pixels, the item headers of the encapsulated pixel
 * data otherwise (walked with a file handle, 12 bytes read per fragment). dicom-parser's own
 * fragment helpers (`readEncapsulatedPixelDataFromFragments`, `createJPEGBasicOffsetTable`) need the
 * whole pixel data in memory, which a WSI instance of several GB must not be.
 */

/** VL Whole Slide Microscopy Image Storage (Supplement 145). */
export const WSI_SOP_CLASS = '1.2.840.10008.5.1.4.1.1.77.1.6';

export const TRANSFER_SYNTAXES = {
  '1.2.840.10008.1.2': 'implicit VR little endian',
  '1.2.840.10008.1.2.1': 'explicit VR little endian',
  '1.2.840.10008.1.2.4.50': 'JPEG baseline',
  '1.2.840.10008.1.2.4.90': 'JPEG 2000 (lossless only)',
  '1.2.840.10008.1.2.4.91': 'JPEG 2000',
} as const;

export type TransferSyntax = keyof typeof TRANSFER_SYNTAXES;
export type FrameCoding = 'native' | 'jpeg' | 'jpeg2000';

export function codingOf(syntax: TransferSyntax): FrameCoding {
  if (syntax === '1.2.840.10008.1.2.4.50') return 'jpeg';
  if (syntax === '1.2.840.10008.1.2.4.90' || syntax === '1.2.840.10008.1.2.4.91') return 'jpeg2000';
  return 'native';
}

/**
 * A file, series or frame that is not a whole slide Lamina can read: the job fails with this
 * message, without retrying (a {@link SlideRejectedError}, whose `name` it keeps).
 */
export class DicomRejectedError extends SlideRejectedError {}

/** 128-byte preamble then 'DICM' (PS3.10 7.1): the first 132 bytes of a file are enough. */
export function isDicomFile(head: Buffer): boolean {
  return head.length >= 132 && head.toString('latin1', 128, 132) === 'DICM';
}

/** Where the first header read stops; grown (x4) until the Pixel Data element is inside it. */
const FIRST_HEADER_BYTES = 1 << 20;
/** A dataset before its pixels larger than this (per-frame groups of ~1 M frames) is refused. */
const MAX_HEADER_BYTES = 256 << 20;
const PIXEL_DATA = 'x7fe00010';

export interface ParsedFile {
  dataSet: DataSet;
  transferSyntax: string;
  /** The Pixel Data element's value: its offset in the file and length (-1: undefined, encapsulated). */
  pixelData: { offset: number; length: number } | null;
  size: number;
}

/** The dataset of `file` up to its Pixel Data element (that element's header included). */
export async function readDataset(file: string): Promise<ParsedFile> {
  const name = file.split('/').pop() ?? file;
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    const head = Buffer.alloc(Math.min(132, size));
    await handle.read(head, 0, head.length, 0);
    if (!isDicomFile(head)) throw new DicomRejectedError(`${name} is not a DICOM file (no DICM preamble)`);
    for (let length = Math.min(FIRST_HEADER_BYTES, size); ; length = Math.min(length * 4, size)) {
      const bytes = Buffer.alloc(length);
      const { bytesRead } = await handle.read(bytes, 0, length, 0);
      let dataSet: DataSet | null = null;
      let failure: unknown = null;
      try {
        dataSet = dicomParser.parseDicom(bytes.subarray(0, bytesRead), { untilTag: PIXEL_DATA });
      } catch (error) {
        failure = error;
      }
      const element = dataSet?.elements[PIXEL_DATA];
      // A header cut by the read fails to parse or ends before the pixels: read more, unless all was read.
      if (dataSet && (element || length >= size)) {
        const transferSyntax = dataSet.string('x00020010') ?? '';
        const pixelData = element
          ? { offset: element.dataOffset, length: element.length === 0xffffffff ? -1 : element.length }
          : null;
        return { dataSet, transferSyntax, pixelData, size };
      }
      if (length >= size) throw new DicomRejectedError(`${name} could not be read as DICOM (${messageOf(failure)})`);
      if (length >= MAX_HEADER_BYTES)
        throw new DicomRejectedError(`${name} has a DICOM header larger than ${MAX_HEADER_BYTES >> 20} MiB`);
    }
  } finally {
    await handle.close();
  }
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  return typeof error === 'string' ? error : 'no pixel data';
}

/** One frame's bytes in the file: its fragments (one for native pixels). */
export type FrameSpan = { offset: number; length: number }[];

const ITEM = 0xe000;
const SEQUENCE_DELIMITER = 0xe0dd;

/**
 * The frames of encapsulated pixel data starting at `offset` (the value of Pixel Data): the item
 * headers are walked, the Basic Offset Table read; fragments are grouped into frames by that table,
 * or one fragment a frame when their counts agree, or (no table, more fragments than frames) by
 * where a JPEG (FFD8) or JPEG 2000 (FF4F, or a JP2 signature box) stream starts.
 */
export async function locateFragments(
  handle: FileHandle,
  offset: number,
  fileSize: number,
  frames: number,
  label: string,
): Promise<FrameSpan[]> {
  const header = Buffer.alloc(12);
  const read = async (at: number) => {
    header.fill(0);
    await handle.read(header, 0, Math.min(12, fileSize - at), at);
    return { group: header.readUInt16LE(0), element: header.readUInt16LE(2), length: header.readUInt32LE(4) };
  };
  const bot = await read(offset);
  if (bot.group !== 0xfffe || bot.element !== ITEM)
    throw new DicomRejectedError(`The encapsulated pixel data of ${label} has no offset table item`);
  const table: number[] = [];
  if (bot.length > 0) {
    const values = Buffer.alloc(bot.length);
    await handle.read(values, 0, bot.length, offset + 8);
    for (let i = 0; i + 4 <= bot.length; i += 4) table.push(values.readUInt32LE(i));
  }
  const first = offset + 8 + bot.length;
  const fragments: { item: number; offset: number; length: number; starts: boolean }[] = [];
  for (let at = first; ;) {
    if (at + 8 > fileSize) break; // no delimiter: the file ends after the last fragment
    const item = await read(at);
    if (item.group === 0xfffe && item.element === SEQUENCE_DELIMITER) break;
    if (item.group !== 0xfffe || item.element !== ITEM || item.length === 0xffffffff)
      throw new DicomRejectedError(`The encapsulated pixel data of ${label} is damaged at byte ${at}`);
    if (at + 8 + item.length > fileSize)
      throw new DicomRejectedError(`The pixel data of ${label} is cut short (fragment at byte ${at})`);
    const b = header;
    const starts =
      (b[8] === 0xff && (b[9] === 0xd8 || b[9] === 0x4f)) ||
      (b[8] === 0 && b[9] === 0 && b[10] === 0 && b[11] === 0x0c);
    fragments.push({ item: at - first, offset: at + 8, length: item.length, starts });
    at += 8 + item.length;
  }
  let groups: number[]; // index of each frame's first fragment
  if (table.length === frames) {
    groups = table.map((position) => fragments.findIndex((f) => f.item === position));
    if (groups.some((g) => g < 0))
      throw new DicomRejectedError(`The offset table of ${label} does not point at its fragments`);
  } else if (fragments.length === frames) {
    groups = fragments.map((_, i) => i);
  } else if (frames === 1) {
    groups = fragments.length > 0 ? [0] : [];
  } else {
    groups = fragments.flatMap((f, i) => (f.starts ? [i] : []));
  }
  if (groups.length < frames)
    throw new DicomRejectedError(`${label} has ${groups.length} frames of pixel data where it declares ${frames}`);
  return groups.slice(0, frames).map((start, i) => {
    const end = groups[i + 1] ?? fragments.length;
    return fragments.slice(start, end).map(({ offset: o, length }) => ({ offset: o, length }));
  });
}

/** The bytes of one frame (its fragments joined). */
export async function readFrame(handle: FileHandle, span: FrameSpan, label: string): Promise<Buffer> {
  const total = span.reduce((sum, f) => sum + f.length, 0);
  const out = Buffer.alloc(total);
  let at = 0;
  for (const fragment of span) {
    const { bytesRead } = await handle.read(out, at, fragment.length, fragment.offset);
    if (bytesRead !== fragment.length) throw new DicomRejectedError(`The pixel data of ${label} is cut short`);
    at += fragment.length;
  }
  return out;
}
