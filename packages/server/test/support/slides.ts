import path from 'node:path';
import sharp from 'sharp';
import { TILE_SIZE } from '@lamina/domain';
import { TiledJpegTiffWriter } from '../../src/modules/processing/tiledTiff.js';
import { WSI_DIR } from '../factories.js';

/**
 * A large slide of real tissue for tests that need the worker busy for a few seconds: 256-px JPEG
 * tiles cut from CMU-1-Small-Region repeated over a `width` × `height` level 0 (one level, as
 * scanners write it), every tile at its own offset. Writing copies bytes, so a few hundred
 * megapixels take a second or two.
 */
export async function writeTissueSlide(file: string, width: number, height: number): Promise<void> {
  const cmu = path.join(WSI_DIR, 'CMU-1-Small-Region.svs');
  const tiles: Buffer[] = [];
  for (let y = 0; y + TILE_SIZE <= 2816; y += TILE_SIZE) {
    for (let x = 0; x + TILE_SIZE <= 2048; x += TILE_SIZE) {
      tiles.push(
        await sharp(cmu)
          .extract({ left: x, top: y, width: TILE_SIZE, height: TILE_SIZE })
          .jpeg({ quality: 80 })
          .toBuffer(),
      );
    }
  }
  const writer = await TiledJpegTiffWriter.create(file, { tileSize: TILE_SIZE, levels: [{ width, height }] });
  writer.setCoding({ photometric: 6, subsampling: [2, 2], tables: null });
  const level = writer.levels[0];
  if (!level) throw new Error('no level');
  const count = level.tilesAcross * level.tilesDown;
  for (let start = 0; start < count; start += 512) {
    const batch = [];
    for (let index = start; index < Math.min(count, start + 512); index++) {
      batch.push({ level: 0, index, data: tiles[index % tiles.length] as Buffer });
    }
    await writer.writeTiles(batch);
  }
  await writer.finish();
}

export interface CraftedTiff {
  width: number;
  height: number;
  /** One entry per tile: where its data is said to be. */
  tiles: { offset: number; byteCount: number }[];
  /** Bytes placed right after the header (offset 8), e.g. one real JPEG tile. */
  payload?: Buffer;
}

/**
 * A hand-made classic TIFF of one tiled JPEG directory, as an attacker would write it: any claimed
 * size, any tile table. `offsetOfPayload` is 8.
 */
export function craftTiff(spec: CraftedTiff): Buffer {
  const payload = spec.payload ?? Buffer.alloc(0);
  const n = spec.tiles.length;
  const offsetsAt = 8 + payload.length;
  const countsAt = offsetsAt + 4 * n;
  const bitsAt = countsAt + 4 * n;
  const ifdAt = bitsAt + 6 + ((bitsAt + 6) % 2);
  const entries: [number, number, number, number][] = [
    // tag, type, count, value (or offset)
    [256, 4, 1, spec.width],
    [257, 4, 1, spec.height],
    [258, 3, 3, bitsAt],
    [259, 3, 1, 7],
    [262, 3, 1, 6],
    [277, 3, 1, 3],
    [284, 3, 1, 1],
    [322, 3, 1, TILE_SIZE],
    [323, 3, 1, TILE_SIZE],
    [324, 4, n, n === 1 ? (spec.tiles[0]?.offset ?? 0) : offsetsAt],
    [325, 4, n, n === 1 ? (spec.tiles[0]?.byteCount ?? 0) : countsAt],
  ];
  const buffer = Buffer.alloc(ifdAt + 2 + entries.length * 12 + 4);
  buffer.write('II', 0, 'latin1');
  buffer.writeUInt16LE(42, 2);
  buffer.writeUInt32LE(ifdAt, 4);
  payload.copy(buffer, 8);
  spec.tiles.forEach((tile, i) => {
    buffer.writeUInt32LE(tile.offset, offsetsAt + 4 * i);
    buffer.writeUInt32LE(tile.byteCount, countsAt + 4 * i);
  });
  for (let i = 0; i < 3; i++) buffer.writeUInt16LE(8, bitsAt + 2 * i);
  buffer.writeUInt16LE(entries.length, ifdAt);
  entries.forEach(([tag, type, count, value], i) => {
    const at = ifdAt + 2 + i * 12;
    buffer.writeUInt16LE(tag, at);
    buffer.writeUInt16LE(type, at + 2);
    buffer.writeUInt32LE(count, at + 4);
    if (type === 3 && count === 1) buffer.writeUInt16LE(value, at + 8);
    else buffer.writeUInt32LE(value, at + 8);
  });
  return buffer;
}
