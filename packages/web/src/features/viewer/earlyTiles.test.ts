// lib/earlyTiles.ts against the viewer's own tile grid (OpenLayers' TileGrid as ViewerEngine builds it).
import fc from 'fast-check';
import TileGrid from 'ol/tilegrid/TileGrid';
import { describe, expect, it } from 'vitest';
import { EARLY_TILE_SIZE, firstTileUrls, tileZoomFor, viewerMapSize } from '../../lib/earlyTiles';
import { imageExtentOf, tileResolutions } from './viewerGeometry';
import { TILE_SIZE } from '@lamina/domain';

/** The viewer's tile grid for a slide (ViewerEngine: origin top left, resolutions 2^maxZoom … 1). */
function olGrid(width: number, height: number, maxZoom: number): TileGrid {
  return new TileGrid({
    extent: imageExtentOf(width, height),
    origin: [0, 0],
    resolutions: tileResolutions(maxZoom),
    tileSize: TILE_SIZE,
  });
}

/** The tiles OpenLayers wants for the whole slide at level z, as URLs of `template`. */
function olLevelUrls(grid: TileGrid, width: number, height: number, z: number, template: string): string[] {
  const range = grid.getTileRangeForExtentAndZ(imageExtentOf(width, height), z);
  const urls: string[] = [];
  for (let x = range.minX; x <= range.maxX; x++) {
    for (let y = range.minY; y <= range.maxY; y++) {
      urls.push(template.replace('{z}', String(z)).replace('{x}', String(x)).replace('{y}', String(y)));
    }
  }
  return urls;
}

const slide = fc
  .record({ width: fc.integer({ min: 1, max: 200_000 }), height: fc.integer({ min: 1, max: 200_000 }) })
  .map(({ width, height }) => ({
    width,
    height,
    maxTmsZoom: Math.max(0, Math.ceil(Math.log2(Math.max(width, height) / TILE_SIZE))),
  }));

describe('earlyTiles', () => {
  it("uses the domain's tile size", () => {
    expect(EARLY_TILE_SIZE).toBe(TILE_SIZE);
  });

  it("picks the level OpenLayers' tile grid picks for a resolution (the nearest, ties to the finer)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 12 }),
        fc.double({ min: 0.01, max: 10_000, noNaN: true }),
        (maxZoom, resolution) => {
          const grid = olGrid(256 * 2 ** maxZoom, 256 * 2 ** maxZoom, maxZoom);
          expect(tileZoomFor(resolution, maxZoom)).toBe(grid.getZForResolution(resolution));
        },
      ),
      { numRuns: 2000 },
    );
    // Exactly between two levels (1.5 between 2 and 1) and exactly on one.
    expect(tileZoomFor(1.5, 3)).toBe(olGrid(2048, 2048, 3).getZForResolution(1.5));
    expect(tileZoomFor(4, 3)).toBe(1);
  });

  it('asks for every tile of the fitted level, then the preloaded level, then the mini-map level, each once', () => {
    fc.assert(
      fc.property(
        slide,
        fc.integer({ min: 200, max: 3000 }),
        fc.integer({ min: 200, max: 2000 }),
        ({ width, height, maxTmsZoom }, mapWidth, mapHeight) => {
          const template = '/tiles/7/{z}/{x}/{y}?t=tok%2Fen';
          const urls = firstTileUrls({ width, height, maxTmsZoom, tileUrl: template }, [mapWidth, mapHeight]);
          const grid = olGrid(width, height, maxTmsZoom);
          // ViewerEngine.zoomToFit, then OpenLayers' choice of level; the mini-map's fixed resolution.
          const z = grid.getZForResolution(Math.max(width / mapWidth, height / mapHeight));
          const miniMapZ = grid.getZForResolution(Math.max(width, height) / (180 - 4));
          const levels = [...new Set([z, z - 1, miniMapZ].filter((level) => level >= 0))];
          const expected = levels.flatMap((level) => olLevelUrls(grid, width, height, level, template));
          expect(new Set(urls)).toEqual(new Set(expected));
          expect(urls).toHaveLength(new Set(urls).size);
          expect(
            urls
              .slice(0, olLevelUrls(grid, width, height, z, template).length)
              .every((u) => u.startsWith(`/tiles/7/${String(z)}/`)),
          ).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('asks for nothing without a tile URL (a slide still processing) or without a size', () => {
    expect(firstTileUrls({ width: 5000, height: 4000, maxTmsZoom: 5, tileUrl: null }, [1000, 700])).toEqual([]);
    expect(firstTileUrls({ width: 0, height: 4000, maxTmsZoom: 5, tileUrl: '/t/{z}/{x}/{y}' }, [1000, 700])).toEqual(
      [],
    );
  });

  it('the map is the window less the bars above it and the open sidebar, never below one pixel', () => {
    // bench:viewer measures the map at 940 x 704 px in a 1280 x 800 page.
    expect(viewerMapSize(1280, 800, true)).toEqual([940, 704]);
    expect(viewerMapSize(1280, 800, false)).toEqual([1280, 800 - 96]);
    expect(viewerMapSize(10, 10, true)).toEqual([1, 1]);
  });
});
