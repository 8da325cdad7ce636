import { open, readFile } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { ADOBE_APP14_RGB, assembleJpeg, jpegPrefix } from '../src/modules/tiles/jpegTile.js';
import { buildPyramidIndex, locateTile, maxTmsZoom } from '../src/modules/tiles/pyramidIndex.js';
import { readTiffDirectories, TiffFormatError, type RangeReader } from '../src/modules/tiles/tiffDirectory.js';

const WSI = path.resolve(import.meta.dirname, '../../../../shared/testdata/wsi');

async function fileReader(
  file: string,
): Promise<{ read: RangeReader; reads: () => number; close: () => Promise<void> }> {
  const handle = await open(file, 'r');
  let reads = 0;
  return {
    read: async (offset, length) => {
      reads++;
      const buffer = Buffer.alloc(length);
      const { bytesRead } = await handle.read(buffer, 0, length, offset);
      return buffer.subarray(0, bytesRead);
    },
    reads: () => reads,
    close: () => handle.close(),
  };
}

async function directoriesOf(file: string) {
  const reader = await fileReader(path.join(WSI, file));
  try {
    return await readTiffDirectories(reader.read);
  } finally {
    await reader.close();
  }
}

describe('maxTmsZoom', () => {
  it('is the zoom at which one 256-px tile holds the full-resolution slide', () => {
    expect(maxTmsZoom(16, 16)).toBe(0);
    expect(maxTmsZoom(256, 200)).toBe(0);
    expect(maxTmsZoom(257, 10)).toBe(1);
    expect(maxTmsZoom(512, 512)).toBe(1);
    expect(maxTmsZoom(2220, 2967)).toBe(4);
    expect(maxTmsZoom(100_000, 80_000)).toBe(9);
  });
});

describe('TIFF directory reader', () => {
  it('reads a libvips JPEG pyramid (classic TIFF): five levels, 256-px tiles, shared tables', async () => {
    const dirs = await directoriesOf('derived/CMU-1-Small-Region_generic-jpeg-256.tiff');
    expect(dirs.map((d) => [d.width, d.height])).toEqual([
      [2220, 2967],
      [1110, 1483],
      [555, 741],
      [277, 370],
      [138, 185],
    ]);
    for (const d of dirs) {
      expect(d.compression).toBe(7);
      expect(d.photometric).toBe(6);
      expect([d.tileWidth, d.tileHeight]).toEqual([256, 256]);
      expect(d.tileOffsets.length).toBe(Math.ceil(d.width / 256) * Math.ceil(d.height / 256));
      expect(d.jpegTables?.subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
    }
  });

  it('reads a BigTIFF pyramid with 64-bit offsets', async () => {
    const dirs = await directoriesOf('derived/CMU-1-Small-Region_bigtiff-deflate-512.tif');
    expect(dirs).toHaveLength(4);
    expect(dirs[0]).toMatchObject({ width: 2220, height: 2967, tileWidth: 512, compression: 8 });
    // Deflate tiles cannot be passed through as JPEG: every level is refused, no zoom is served.
    const index = buildPyramidIndex(dirs, 'k');
    expect(index.levels.every((l) => l.unservable?.includes('not JPEG'))).toBe(true);
    expect(index.byZoom.every((l) => l === null)).toBe(true);
  });

  it('leaves the label, macro and thumbnail of an Aperio slide out of the levels', async () => {
    const dirs = await directoriesOf('CMU-1-Small-Region.svs');
    expect(dirs.length).toBeGreaterThanOrEqual(4);
    const index = buildPyramidIndex(dirs, 'svs');
    // The stripped 574x768 thumbnail, 387x463 label and 1280x431 macro are not levels.
    expect(dirs.map((d) => [d.width, d.height, d.tileWidth])).toEqual([
      [2220, 2967, 240],
      [574, 768, 0],
      [387, 463, 0],
      [1280, 431, 0],
    ]);
    expect(index.levels.map((l) => [l.width, l.height])).toEqual([[2220, 2967]]);
    expect(index.levels[0]?.unservable).toContain('240x240');
  });

  it('reads the directories of a pyramid with few ranged reads', async () => {
    const reader = await fileReader(path.join(WSI, 'derived/CMU-1-Small-Region_generic-jpeg-256.tiff'));
    await readTiffDirectories(reader.read);
    await reader.close();
    // header + per level: the IFD (one read-ahead) + offsets + byte counts + tables
    expect(reader.reads()).toBeLessThanOrEqual(1 + 5 * 4);
  });

  it('refuses files that are not TIFF, and IFD loops', async () => {
    await expect(readTiffDirectories(async () => Buffer.from('GIF89a0000000000'))).rejects.toBeInstanceOf(
      TiffFormatError,
    );
    // A classic TIFF whose only IFD points at itself.
    const loop = Buffer.alloc(64);
    loop.write('II', 0, 'latin1');
    loop.writeUInt16LE(42, 2);
    loop.writeUInt32LE(8, 4);
    loop.writeUInt16LE(1, 8);
    loop.writeUInt16LE(256, 10); // ImageWidth SHORT 1 = 1
    loop.writeUInt16LE(3, 12);
    loop.writeUInt32LE(1, 14);
    loop.writeUInt16LE(1, 18);
    loop.writeUInt32LE(8, 22); // next IFD = itself
    await expect(readTiffDirectories(async (o, l) => loop.subarray(o, o + l))).rejects.toThrow(/loop/);
    // Truncated file.
    await expect(readTiffDirectories(async (o, l) => loop.subarray(o, Math.min(o + l, 12)))).rejects.toBeInstanceOf(
      TiffFormatError,
    );
  });
});

describe('zoom to level by size', () => {
  it('maps each zoom to the nearest level although downsamples are 2.0003, 4.002, 8.017, 16.06', async () => {
    const index = buildPyramidIndex(await directoriesOf('derived/CMU-1-Small-Region_generic-jpeg-256.tiff'), 'k');
    expect(index.maxZoom).toBe(4);
    expect(index.byZoom.map((l) => l?.width)).toEqual([138, 277, 555, 1110, 2220]);
    expect(index.stackSize).toBe(1);
  });

  it('leaves a zoom unserved when the pyramid has no level near its size', async () => {
    const dirs = await directoriesOf('derived/CMU-1-Small-Region_generic-jpeg-256.tiff');
    // Drop the 555-px level: zoom 2 has no level within the tolerance.
    const index = buildPyramidIndex(
      dirs.filter((d) => d.width !== 555),
      'k',
    );
    expect(index.byZoom.map((l) => l?.width ?? null)).toEqual([138, 277, null, 1110, 2220]);
  });

  it('reads planes of identical size as z-stack planes, in file order', async () => {
    const dirs = await directoriesOf('derived/CMU-1-Small-Region_generic-jpeg-256.tiff');
    const second = dirs.map((d) => ({ ...d, tileOffsets: d.tileOffsets.map((o) => o + 1) }));
    const index = buildPyramidIndex([...dirs, ...second], 'k');
    expect(index.stackSize).toBe(2);
    const a = locateTile(index, 4, 0, 0, 0);
    const b = locateTile(index, 4, 0, 0, 1);
    expect(b?.offset).toBe((a?.offset ?? 0) + 1);
    expect(locateTile(index, 4, 0, 0, 2)).toBeNull();
  });

  it('locates tiles from the top-left and nothing outside the grid', async () => {
    const index = buildPyramidIndex(await directoriesOf('derived/CMU-1-Small-Region_generic-jpeg-256.tiff'), 'k');
    expect(locateTile(index, 4, 8, 11, 0)).not.toBeNull(); // 9 x 12 tiles at full resolution
    expect(locateTile(index, 4, 9, 0, 0)).toBeNull();
    expect(locateTile(index, 4, 0, 12, 0)).toBeNull();
    expect(locateTile(index, 5, 0, 0, 0)).toBeNull();
    expect(locateTile(index, 0, 0, 0, 0)).not.toBeNull();
    expect(locateTile(index, 0, 1, 0, 0)).toBeNull();
  });

  it('has a version that changes with the storage key and with the tile offsets', async () => {
    const dirs = await directoriesOf('derived/CMU-1-Small-Region_generic-jpeg-256.tiff');
    const a = buildPyramidIndex(dirs, 'images/1/pyramid.tif').version;
    expect(buildPyramidIndex(dirs, 'images/1/pyramid.tif').version).toBe(a);
    expect(buildPyramidIndex(dirs, 'images/1/pyramid-v2.tif').version).not.toBe(a);
    const moved = dirs.map((d, i) => (i === 2 ? { ...d, tileOffsets: d.tileOffsets.map((o) => o + 4) } : d));
    expect(buildPyramidIndex(moved, 'images/1/pyramid.tif').version).not.toBe(a);
  });
});

describe('JPEG assembly', () => {
  it('splices the tables between SOI and the tile stream, dropping the inner SOI/EOI', () => {
    const tables = Buffer.from([0xff, 0xd8, 0xff, 0xdb, 0x00, 0x02, 0xff, 0xd9]);
    const tile = Buffer.from([0xff, 0xd8, 0xff, 0xda, 0x01, 0xff, 0xd9]);
    expect([...assembleJpeg(jpegPrefix(tables, false), tile)]).toEqual([
      0xff, 0xd8, 0xff, 0xdb, 0x00, 0x02, 0xff, 0xda, 0x01, 0xff, 0xd9,
    ]);
    const rgb = jpegPrefix(tables, true);
    expect(rgb.subarray(2, 2 + ADOBE_APP14_RGB.length)).toEqual(ADOBE_APP14_RGB);
  });

  it('gives RGB-photometric Aperio tiles correct colours by adding the Adobe marker (no re-encode)', async () => {
    const file = path.join(WSI, 'CMU-1-Small-Region.svs');
    const dirs = await directoriesOf('CMU-1-Small-Region.svs');
    const level0 = dirs[0]!;
    expect(level0.photometric).toBe(2);
    const bytes = await readFile(file);
    const offset = level0.tileOffsets[5]!;
    const tile = bytes.subarray(offset, offset + level0.tileByteCounts[5]!);
    // (sharp's stats() describes its input, so the region is cut to a buffer first)
    const region = await sharp(file)
      .extract({ left: 5 * 240, top: 0, width: 240, height: 240 })
      .png()
      .toBuffer();
    const expected = await sharp(region).stats();
    const withMarker = await sharp(assembleJpeg(jpegPrefix(level0.jpegTables, true), tile)).stats();
    const withoutMarker = await sharp(assembleJpeg(jpegPrefix(level0.jpegTables, false), tile)).stats();
    for (let c = 0; c < 3; c++) {
      expect(Math.abs(withMarker.channels[c]!.mean - expected.channels[c]!.mean)).toBeLessThan(1.5);
    }
    const drift = [0, 1, 2].map((c) => Math.abs(withoutMarker.channels[c]!.mean - expected.channels[c]!.mean));
    expect(Math.max(...drift)).toBeGreaterThan(10);
  });
});
