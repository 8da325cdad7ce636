import { Zip, ZipPassThrough } from 'fflate';
import { UploadAbortedError } from './putWithProgress';

/**
 * Several .dcm files chosen together (issue 31): the instances of one DICOM series, which the
 * server reads as one slide from a .zip holding them. Uploaded one by one they would become one
 * slide per pyramid level.
 */
export interface DicomSeries {
  /** The name of the .zip they are uploaded as (seriesZipName). */
  name: string;
  files: File[];
}

/** What one upload sends: a chosen file as is, or a series bundled into one .zip first. */
export type UploadItem = File | DicomSeries;

export const isDicomSeries = (item: UploadItem): item is DicomSeries => !(item instanceof File);

/** Bytes of the chosen files: for a series, the sum of its instances (the .zip adds a few hundred). */
export const itemSize = (item: UploadItem): number =>
  isDicomSeries(item) ? item.files.reduce((sum, f) => sum + f.size, 0) : item.size;

const isDcm = (name: string) => name.toLowerCase().endsWith('.dcm');

/** The plain words the file list shows under a series: '3 DICOM files → one series: CMU-1.zip'. */
export const seriesNote = (series: DicomSeries): string =>
  `${series.files.length} DICOM files → one series: ${series.name}`;

/**
 * The uploads of a new upload's selection: two or more .dcm files become one series (in the
 * place of the first of them), every other file uploads as before. A single .dcm is a
 * one-instance series the server reads as is.
 */
export function groupDicomSeries(files: readonly File[]): UploadItem[] {
  const dcm = files.filter((f) => isDcm(f.name));
  const [first] = dcm;
  if (!first || dcm.length < 2) return [...files];
  const series: DicomSeries = { name: seriesZipName(dcm.map((f) => f.name)), files: dcm };
  return files.flatMap<UploadItem>((f) => (f === first ? [series] : isDcm(f.name) ? [] : [f]));
}

const SEPARATORS = /[-_.\s]+$/;
/** Trailing words that name one instance of a series, not the slide: 'CMU-1-level-0' → 'CMU-1'. */
const INSTANCE_WORD = /(^|[-_.\s])(level|lvl|layer|instance|inst|frame|part|image|img|file)$/i;
/** Characters no file name should hold on common systems (and control characters). */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f/\\:*?"<>|]+/g;
const MAX_STEM = 200;
export const FALLBACK_SERIES_NAME = 'dicom-series.zip';

/**
 * The name of a series' .zip: the common beginning of its files' names, cut back to whole words
 * ('slide10', 'slide11' → 'slide', not 'slide1'), without trailing separators and words that name
 * one level or instance; characters unsafe in a file name become '_'. 'dicom-series.zip' when
 * nothing is left.
 */
export function seriesZipName(fileNames: readonly string[]): string {
  const stems = fileNames.map((n) => (isDcm(n) ? n.slice(0, -4) : n));
  let prefix = stems.reduce((common, stem) => {
    let i = 0;
    while (i < common.length && i < stem.length && common[i] === stem[i]) i++;
    return common.slice(0, i);
  }, stems[0] ?? '');
  // A prefix ending inside a word or number that goes on in some name is cut to where that run began.
  const last = prefix.at(-1);
  const runClass = (c: string | undefined) =>
    c === undefined ? '' : /\d/.test(c) ? 'digit' : /\p{L}/u.test(c) ? 'letter' : '';
  const cls = runClass(last);
  if (cls && stems.some((s) => s.length > prefix.length && runClass(s[prefix.length]) === cls)) {
    let i = prefix.length;
    while (i > 0 && runClass(prefix[i - 1]) === cls) i--;
    prefix = prefix.slice(0, i);
  }
  for (;;) {
    const trimmed = prefix.replace(SEPARATORS, '').replace(INSTANCE_WORD, '');
    if (trimmed === prefix) break;
    prefix = trimmed;
  }
  const safe = prefix
    .replace(UNSAFE, '_')
    .replace(/^[.\s]+/, '')
    .slice(0, MAX_STEM)
    .trim();
  return /[\p{L}\p{N}]/u.test(safe) ? `${safe}.zip` : FALLBACK_SERIES_NAME;
}

/** fflate writes no ZIP64 records: sizes and offsets of the archive are 32-bit. */
const ZIP32_LIMIT = 0xffffffff;
/** Each file is read in slices of this size, so only one slice of it is in memory at a time. */
const READ_SLICE = 8 * 1024 * 1024;
/** The archive's pieces are gathered into a Blob every so many bytes, which the browser may keep on disk. */
const BLOB_FLUSH = 64 * 1024 * 1024;

/** Why a series could not be bundled (too large, a file unreadable), in words for the dialog. */
export class SeriesBundleError extends Error {
  override readonly name = 'SeriesBundleError';
}

/** The size of the stored .zip fflate writes: local header, data, data descriptor, central entry; end record. */
export function storedZipSize(files: readonly File[]): number {
  const encoder = new TextEncoder();
  const entries = files.reduce((sum, f) => {
    const nameBytes = encoder.encode(f.name).length;
    return sum + 30 + nameBytes + f.size + 16 + 46 + nameBytes;
  }, 0);
  return entries + 22;
}

/**
 * The series as one .zip File: its files at the root, stored without compression (the pixel data
 * of DICOM WSI is already JPEG / JPEG 2000). Streams with fflate's Zip + ZipPassThrough: each file
 * is read a slice at a time, and the archive's pieces go into Blob parts as they come, so the
 * chosen files are never all held in memory, nor twice. onProgress gets the bytes read so far.
 */
export async function bundleSeries(
  series: DicomSeries,
  onProgress: (loaded: number, total: number) => void,
  signal: AbortSignal,
): Promise<File> {
  if (storedZipSize(series.files) > ZIP32_LIMIT) {
    throw new SeriesBundleError(
      `${series.name}: the ${series.files.length} DICOM files together are over 4 GB, more than the browser can ` +
        'bundle; zip them yourself (ZIP64) and upload the .zip',
    );
  }
  const total = itemSize(series);
  const parts: Blob[] = [];
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  let failure: Error | null = null;
  const flush = () => {
    if (pending.length === 0) return;
    parts.push(new Blob(pending as BlobPart[]));
    pending = [];
    pendingBytes = 0;
  };
  // ZipPassThrough entries are written synchronously, as each slice is pushed.
  const zip = new Zip((error, data) => {
    if (error) {
      failure = error;
      return;
    }
    pending.push(data);
    pendingBytes += data.length;
    if (pendingBytes >= BLOB_FLUSH) flush();
  });
  let loaded = 0;
  onProgress(0, total);
  for (const file of series.files) {
    const entry = new ZipPassThrough(file.name);
    zip.add(entry);
    if (file.size === 0) entry.push(new Uint8Array(0), true);
    for (let offset = 0; offset < file.size;) {
      if (signal.aborted) throw new UploadAbortedError(series.name);
      const slice = new Uint8Array(await file.slice(offset, offset + READ_SLICE).arrayBuffer());
      if (slice.length === 0) throw new SeriesBundleError(`${file.name} could not be read (it may have changed)`);
      offset += slice.length;
      entry.push(slice, offset >= file.size);
      loaded += slice.length;
      onProgress(loaded, total);
    }
    if (failure) break;
  }
  zip.end();
  if (failure) throw new SeriesBundleError(`${series.name} could not be made: ${(failure as Error).message}`);
  flush();
  return new File(parts, series.name, { type: 'application/zip' });
}
