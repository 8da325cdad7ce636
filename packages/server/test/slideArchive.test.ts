import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { zipSync, type Zippable } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  findArchivedSlide,
  iniSection,
  isZip,
  MAX_ARCHIVE_ENTRIES,
  unpackArchive,
} from '../src/modules/processing/slideArchive.js';
import { SlideRejectedError } from '../src/modules/processing/slideInfo.js';
import { WSI_DIR } from './factories.js';

/**
 * Slides of several files arrive zipped (issue 31): the archive is unpacked safely and the slide in
 * it found, and a MIRAX or VMS slide missing a file its index names is refused before any decoder
 * runs, naming the file. The index files here are written by the test (the check reads only their
 * names); no real MIRAX or VMS slide could be found in a reachable public repository (docs/SLIDE-FORMATS.md).
 */

let work: string;
let n = 0;

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'lamina-archive-'));
});

afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

async function zipFile(entries: Zippable): Promise<string> {
  const file = path.join(work, `archive-${++n}.zip`);
  await writeFile(file, zipSync(entries, { level: 0 }));
  return file;
}

async function unpackAndFind(entries: Zippable) {
  const into = path.join(work, `unpacked-${++n}`);
  return findArchivedSlide(await unpackArchive(await zipFile(entries), into));
}

const text = (s: string) => new TextEncoder().encode(s);

const SLIDEDAT = [
  '[GENERAL]',
  'SLIDE_VERSION = 01.02',
  '[HIERARCHICAL]',
  'INDEXFILE = Index.dat',
  '[DATAFILE]',
  'FILE_COUNT = 2',
  'FILE_0 = Data0000.dat',
  'FILE_1 = Data0001.dat',
].join('\r\n');

describe('MIRAX (.mrxs with its folder)', () => {
  it('is found when every file Slidedat.ini names is in the folder', async () => {
    const found = await unpackAndFind({
      'CMU-1.mrxs': text(''),
      'CMU-1': {
        'Slidedat.ini': text(SLIDEDAT),
        'Index.dat': text('x'),
        'Data0000.dat': text('x'),
        'Data0001.dat': text('x'),
      },
    });
    expect(found.kind).toBe('mirax');
    expect(found.kind === 'mirax' && path.basename(found.index)).toBe('CMU-1.mrxs');
  });

  it('is refused naming the data files that are missing', async () => {
    await expect(
      unpackAndFind({
        'CMU-1.mrxs': text(''),
        'CMU-1': { 'Slidedat.ini': text(SLIDEDAT), 'Data0000.dat': text('x') },
      }),
    ).rejects.toThrow(
      new SlideRejectedError(
        'The MIRAX slide CMU-1.mrxs is incomplete: CMU-1/Index.dat, CMU-1/Data0001.dat are missing from the zip archive',
      ),
    );
  });

  it('is refused when its folder (Slidedat.ini) is missing', async () => {
    await expect(unpackAndFind({ 'CMU-1.mrxs': text('') })).rejects.toThrow(
      'The MIRAX slide CMU-1.mrxs is incomplete: CMU-1/Slidedat.ini is missing from the zip archive',
    );
  });
});

describe('Hamamatsu VMS', () => {
  const VMS = [
    '[Virtual Microscope Specimen]',
    'NoLayers=1',
    'ImageFile=CMU-1-40x - 2010-01-12 13.24.05.jpg',
    'ImageFile(1,0)=CMU-1-40x - 2010-01-12 13.24.05(1,0).jpg',
    'MapFile=CMU-1-40x - 2010-01-12 13.24.05_map2.jpg',
    'OptimisationFile=CMU-1-40x - 2010-01-12 13.24.05.opt',
    'MacroImage=CMU-1-40x - 2010-01-12 13.24.05_macro.jpg',
  ].join('\r\n');

  it('is found when its images are all there', async () => {
    const names = [...VMS.matchAll(/=(.+\.(?:jpg|opt))$/gm)].map((m) => m[1]!);
    const found = await unpackAndFind({
      'CMU-1-40x - 2010-01-12 13.24.05.vms': text(VMS),
      ...Object.fromEntries(names.map((name) => [name, text('x')])),
    });
    expect(found.kind).toBe('vms');
  });

  it('is refused naming the missing image', async () => {
    await expect(
      unpackAndFind({
        'slide.vms': text(VMS),
        'CMU-1-40x - 2010-01-12 13.24.05.jpg': text('x'),
        'CMU-1-40x - 2010-01-12 13.24.05_map2.jpg': text('x'),
        'CMU-1-40x - 2010-01-12 13.24.05.opt': text('x'),
        'CMU-1-40x - 2010-01-12 13.24.05_macro.jpg': text('x'),
      }),
    ).rejects.toThrow(
      'The Hamamatsu slide slide.vms is incomplete: CMU-1-40x - 2010-01-12 13.24.05(1,0).jpg is missing from the zip archive',
    );
  });
});

describe('what an archive may not be', () => {
  it('holding no slide (an NDPI zipped, a text file): refused, saying what it may hold', async () => {
    const ndpi = await readFile(path.join(WSI_DIR, 'test3-DAPI-2-387.ndpi'));
    await expect(unpackAndFind({ 'slide.ndpi': ndpi, 'notes.txt': text('x') })).rejects.toThrow(
      'The zip archive holds no slide: it may hold a MIRAX .mrxs file with its folder, a Hamamatsu .vms file with its images, or the DICOM files of one series',
    );
  });

  it('holding two slides: refused, naming them', async () => {
    await expect(unpackAndFind({ 'a.vms': text(''), 'b.mrxs': text('') })).rejects.toThrow(
      'The zip archive holds 2 slides (b.mrxs, a.vms); upload one slide per archive',
    );
  });

  it('with a path that leaves the folder: refused, nothing written outside', async () => {
    const archive = await zipFile({ 'x/../../escaped.txt': text('x') });
    await expect(unpackArchive(archive, path.join(work, 'evil'))).rejects.toThrow(SlideRejectedError);
    await expect(readFile(path.join(work, 'escaped.txt'))).rejects.toThrow();
  });

  it('unpacking to far more than its own size (a zip bomb): refused', async () => {
    const zeros = new Uint8Array(300 * 1024 * 1024);
    const file = path.join(work, 'bomb.zip');
    await writeFile(file, zipSync({ 'zeros.bin': zeros }, { level: 9 }));
    expect((await readFile(file)).length).toBeLessThan(1024 * 1024);
    await expect(unpackArchive(file, path.join(work, 'bomb'))).rejects.toThrow(
      'The zip archive unpacks to far more than its own size; it is not accepted',
    );
  }, 30_000);

  it(`with more than ${MAX_ARCHIVE_ENTRIES} entries: refused before unpacking`, async () => {
    const entries: Zippable = {};
    for (let i = 0; i <= MAX_ARCHIVE_ENTRIES; i++) entries[`f${i}`] = new Uint8Array(0);
    await expect(unpackArchive(await zipFile(entries), path.join(work, 'many'))).rejects.toThrow(
      `The zip archive holds ${MAX_ARCHIVE_ENTRIES + 1} entries; at most ${MAX_ARCHIVE_ENTRIES} are accepted`,
    );
  });

  it('that is not a zip at all: refused', async () => {
    const file = path.join(work, 'not.zip');
    await writeFile(file, Buffer.from('PK\x03\x04 but nothing else'));
    expect(isZip(await readFile(file))).toBe(true);
    await expect(unpackArchive(file, path.join(work, 'not'))).rejects.toThrow(/^The zip archive could not be read/);
  });
});

describe('iniSection', () => {
  it('reads a section’s keys, case-insensitive section names, comments and a BOM ignored', () => {
    const ini =
      '\uFEFF[general]\r\na=1\r\n[HIERARCHICAL]\r\n; note\r\nINDEXFILE = Index.dat\r\n\r\n[other]\r\nINDEXFILE=no';
    expect([...iniSection(ini, 'Hierarchical')]).toEqual([['INDEXFILE', 'Index.dat']]);
  });
});
