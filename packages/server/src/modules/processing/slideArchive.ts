import { createWriteStream } from 'node:fs';
import { mkdir, open, readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import { SlideRejectedError } from './slideInfo.js';
import { isDicomFile } from './dicom/index.js';

/**
 * Slides of several files arrive as one `.zip` (issue 31): a MIRAX `.mrxs` with its data folder, a
 * Hamamatsu `.vms` with the JPEG files it names, or the DICOM instances of one series. The worker
 * unpacks the archive into its scratch folder (yauzl: the central directory read by random access,
 * ZIP64 for archives past 4 GiB, names validated), then finds the slide in it and checks, before any
 * decoder runs, that every file its index names is there — the message names what is missing.
 */

/** Most entries an archive may hold (a MIRAX folder has tens of files, a DICOM series hundreds). */
export const MAX_ARCHIVE_ENTRIES = 10_000;
/**
 * Most bytes the unpacked files may take per byte of the archive, plus a fixed allowance: slide
 * data is already compressed (JPEG, JPEG 2000), so a real archive unpacks to about its own size;
 * a zip bomb claims thousands of times more.
 */
const MAX_UNPACK_RATIO = 4;
const UNPACK_ALLOWANCE_BYTES = 256 * 1024 * 1024;

/** What an archive was found to hold. */
export type ArchivedSlide =
  { kind: 'mirax'; index: string } | { kind: 'vms'; index: string } | { kind: 'dicom'; files: string[] };

/** The first bytes of a ZIP archive (a local file header; an empty archive is not a slide). */
export function isZip(head: Buffer): boolean {
  return head.length >= 4 && head.readUInt32LE(0) === 0x04034b50;
}

/** Unpacks `archive` into `into` (created), refusing unsafe or oversized archives; returns the files' paths. */
export async function unpackArchive(archive: string, into: string): Promise<string[]> {
  const archiveBytes = (await stat(archive)).size;
  const budget = archiveBytes * MAX_UNPACK_RATIO + UNPACK_ALLOWANCE_BYTES;
  let zip: ZipFile;
  try {
    zip = await yauzl.openPromise(archive, { lazyEntries: true, strictFileNames: true, validateEntrySizes: true });
  } catch (error) {
    throw new SlideRejectedError(
      `The zip archive could not be read (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  if (zip.entryCount > MAX_ARCHIVE_ENTRIES) {
    zip.close();
    throw new SlideRejectedError(
      `The zip archive holds ${zip.entryCount} entries; at most ${MAX_ARCHIVE_ENTRIES} are accepted`,
    );
  }
  await mkdir(into, { recursive: true });
  const files: string[] = [];
  let claimed = 0;
  try {
    for (let entry = await nextEntry(zip); entry; entry = await nextEntry(zip)) {
      // yauzl (strictFileNames) has refused absolute paths, `..` and backslashes already.
      if (entry.fileName.endsWith('/')) continue;
      const mode = (entry.externalFileAttributes >>> 16) & 0o170000;
      if (mode === 0o120000) throw new SlideRejectedError(`The zip archive holds a symbolic link (${entry.fileName})`);
      if (entry.isEncrypted()) throw new SlideRejectedError(`The zip archive's file ${entry.fileName} is encrypted`);
      claimed += entry.uncompressedSize;
      if (claimed > budget)
        throw new SlideRejectedError('The zip archive unpacks to far more than its own size; it is not accepted');
      const target = path.join(into, entry.fileName);
      await mkdir(path.dirname(target), { recursive: true });
      const stream = await zip.openReadStreamPromise(entry);
      await pipeline(stream, createWriteStream(target, { flags: 'wx' }));
      files.push(target);
    }
  } catch (error) {
    if (error instanceof SlideRejectedError) throw error;
    const code = (error as { code?: unknown }).code;
    if (code === 'ENOSPC' || code === 'EMFILE') throw error; // this machine's trouble: retried
    throw new SlideRejectedError(
      `The zip archive could not be unpacked (${error instanceof Error ? error.message : String(error)})`,
    );
  } finally {
    zip.close();
  }
  return files;
}

function nextEntry(zip: ZipFile): Promise<Entry | null> {
  return new Promise((resolve, reject) => {
    const cleanup = () => {
      zip.off('entry', onEntry);
      zip.off('end', onEnd);
      zip.off('error', onError);
    };
    const onEntry = (entry: Entry) => (cleanup(), resolve(entry));
    const onEnd = () => (cleanup(), resolve(null));
    const onError = (error: Error) => (cleanup(), reject(error));
    zip.on('entry', onEntry);
    zip.on('end', onEnd);
    zip.on('error', onError);
    zip.readEntry();
  });
}

/** The values of an INI file's section (MIRAX Slidedat.ini, Hamamatsu .vms): key → value. */
export function iniSection(text: string, section: string): Map<string, string> {
  const values = new Map<string, string>();
  let inside = false;
  for (const raw of text.replace(/^\uFEFF/, '').split(/\r?\n/)) {
    const line = raw.trim();
    if (line.startsWith('[')) {
      inside = line.slice(1, line.indexOf(']')).trim().toUpperCase() === section.toUpperCase();
      continue;
    }
    if (!inside || line === '' || line.startsWith(';') || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    if (eq > 0) values.set(line.slice(0, eq).trim(), line.slice(eq + 1).trim());
  }
  return values;
}

async function missingOf(folder: string, names: string[]): Promise<string[]> {
  const present = new Set((await readdir(folder).catch(() => [] as string[])).map((n) => n.toLowerCase()));
  return names.filter((name) => !present.has(name.toLowerCase()));
}

function listMissing(what: string, missing: string[]): string {
  const shown = missing.slice(0, 5).join(', ') + (missing.length > 5 ? ` and ${missing.length - 5} more` : '');
  return `${what} is incomplete: ${shown} ${missing.length === 1 ? 'is' : 'are'} missing from the zip archive`;
}

/**
 * A MIRAX slide: `X.mrxs` beside its folder `X/`, which holds `Slidedat.ini` naming the index file
 * (`[HIERARCHICAL] INDEXFILE`) and the data files (`[DATAFILE] FILE_0 …`).
 */
async function checkMirax(index: string): Promise<void> {
  const folder = index.slice(0, -path.extname(index).length);
  const slidedat = path.join(folder, 'Slidedat.ini');
  const text = await readFile(slidedat, 'latin1').catch(() => null);
  if (text === null)
    throw new SlideRejectedError(
      listMissing(`The MIRAX slide ${path.basename(index)}`, [`${path.basename(folder)}/Slidedat.ini`]),
    );
  const hierarchical = iniSection(text, 'HIERARCHICAL');
  const datafile = iniSection(text, 'DATAFILE');
  const count = Number(datafile.get('FILE_COUNT') ?? '0');
  const names = [
    ...(hierarchical.get('INDEXFILE') ? [hierarchical.get('INDEXFILE') as string] : []),
    ...Array.from(
      { length: Number.isInteger(count) && count > 0 ? count : 0 },
      (_, i) => datafile.get(`FILE_${i}`) ?? '',
    ),
  ].filter((name) => name !== '');
  if (names.length === 0) throw new SlideRejectedError(`The MIRAX slide's Slidedat.ini names no data files`);
  const missing = await missingOf(folder, names);
  if (missing.length > 0)
    throw new SlideRejectedError(
      listMissing(
        `The MIRAX slide ${path.basename(index)}`,
        missing.map((name) => `${path.basename(folder)}/${name}`),
      ),
    );
}

/** A Hamamatsu VMS slide: the `.vms` index names its JPEG files (`ImageFile`, `ImageFile(x,y)`) and helpers. */
async function checkVms(index: string): Promise<void> {
  const text = await readFile(index, 'latin1');
  const section = iniSection(text, 'Virtual Microscope Specimen');
  const names = [...section.entries()]
    .filter(([key]) => /^(ImageFile(\(\d+,\d+\))?|MapFile|OptimisationFile|MacroImage)$/i.test(key))
    .map(([, value]) => value)
    .filter((value) => value !== '');
  if (!names.some((name) => /\.jpe?g$/i.test(name)))
    throw new SlideRejectedError(`The Hamamatsu slide ${path.basename(index)} names no image files`);
  const missing = await missingOf(path.dirname(index), names);
  if (missing.length > 0)
    throw new SlideRejectedError(listMissing(`The Hamamatsu slide ${path.basename(index)}`, missing));
}

/** The first `bytes` bytes of a file (fewer when it is shorter): enough to tell ZIP, DICOM and TIFF apart. */
export async function fileHead(file: string, bytes = 132): Promise<Buffer> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(bytes);
    const { bytesRead } = await handle.read(buffer, 0, bytes, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/**
 * What an unpacked archive holds: exactly one MIRAX `.mrxs` (with its folder complete) or one
 * Hamamatsu `.vms` (with its files), or DICOM files (the series is checked by the DICOM reader).
 * Anything else is refused, saying what an archive may hold.
 */
export async function findArchivedSlide(files: string[]): Promise<ArchivedSlide> {
  const byExtension = (ext: string) => files.filter((file) => path.extname(file).toLowerCase() === ext);
  const mrxs = byExtension('.mrxs');
  const vms = byExtension('.vms');
  if (mrxs.length + vms.length > 1)
    throw new SlideRejectedError(
      `The zip archive holds ${mrxs.length + vms.length} slides (${[...mrxs, ...vms].map((f) => path.basename(f)).join(', ')}); upload one slide per archive`,
    );
  if (mrxs[0]) {
    await checkMirax(mrxs[0]);
    return { kind: 'mirax', index: mrxs[0] };
  }
  if (vms[0]) {
    await checkVms(vms[0]);
    return { kind: 'vms', index: vms[0] };
  }
  const dicom: string[] = [];
  for (const file of files) if (isDicomFile(await fileHead(file))) dicom.push(file);
  if (dicom.length > 0) return { kind: 'dicom', files: dicom.sort() };
  throw new SlideRejectedError(
    'The zip archive holds no slide: it may hold a MIRAX .mrxs file with its folder, a Hamamatsu .vms file with its images, or the DICOM files of one series',
  );
}
