import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FOCUS_BLUR, writeZStackSlide } from '../src/modules/demo/demoZStack.js';
import { describeSlide } from '../src/modules/processing/slideInfo.js';
import { readTiffStructure } from '../src/modules/processing/tiffStructure.js';
import { WSI_DIR } from './factories.js';

/** The demo z-stack slide (issue 13): built from the real test slide, read by the worker as focal planes. */
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

describe('the demo z-stack slide', () => {
  it('has one full-resolution page per focal plane and keeps the test slide’s pixel size', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'lamina-zstack-'));
    dirs.push(dir);
    const target = path.join(dir, 'zstack.tif');
    expect(await writeZStackSlide(target, path.join(WSI_DIR, 'CMU-1-Small-Region.svs'))).toBe('test slide');
    const info = describeSlide(await readTiffStructure(target));
    expect(info.zStackSize).toBe(FOCUS_BLUR.length);
    expect(info.width).toBe(2220);
    expect(info.height).toBe(2967);
    // CMU-1-Small-Region.svs records MPP = 0.499 in its Aperio description (see its README).
    expect(info.mpp).toBeCloseTo(0.499, 3);
  }, 60_000);
});
