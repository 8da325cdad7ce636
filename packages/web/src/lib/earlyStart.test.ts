import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mockFetch } from '../test/mockFetch';
import {
  earlyPage,
  earlyPaths,
  readViewerAssets,
  startEarly,
  type EarlyTileOptions,
  type ViewerAssets,
} from './earlyStart';
import { firstTileUrls, viewerMapSize } from './earlyTiles';
import { takeEarlyResponse } from './earlyRequests';

const assets: ViewerAssets = {
  image: ['/assets/ImageViewerPage-a.js', '/assets/ImageViewerPage-a.css'],
  case: ['/assets/CaseViewerPage-b.js', '/assets/ImageViewerPage-a.js', '/assets/ImageViewerPage-a.css'],
};

function linksInHead(): string[] {
  return [...document.head.querySelectorAll('link')].map(
    (l) => `${l.rel} ${l.getAttribute('href')}${l.crossOrigin === '' ? ' crossorigin' : ''}`,
  );
}

beforeEach(() => {
  delete window.__laminaEarly;
  delete window.__laminaEarlyTiles;
  delete window.__laminaEarlyTilesStarted;
  document.head.innerHTML = '';
});

afterEach(() => {
  delete window.__laminaEarly;
  delete window.__laminaEarlyTiles;
  delete window.__laminaEarlyTilesStarted;
  document.head.innerHTML = '';
});

describe('earlyPage', () => {
  it.each([
    ['/studies/3/images/17', { kind: 'image', id: 17 }],
    ['/studies/3/images/17/', { kind: 'image', id: 17 }],
    ['/studies/3/cases/5', { kind: 'case', id: 5 }],
    ['/studies/3/images/0', { kind: 'other' }],
    ['/studies/3/images/abc', { kind: 'other' }],
    ['/studies/3/images/17/extra', { kind: 'other' }],
    ['/studies/3/cases', { kind: 'other' }],
    ['/studies', { kind: 'other' }],
    ['/login', { kind: 'other' }],
  ])('%s is %o', (path, page) => {
    expect(earlyPage(path)).toEqual(page);
  });

  it('every page starts the session and the configuration; a viewer its image or case', () => {
    expect(earlyPaths({ kind: 'other' })).toEqual(['/api/users/info', '/api/config']);
    expect(earlyPaths({ kind: 'image', id: 4 })).toEqual(['/api/users/info', '/api/config', '/api/images/4']);
    expect(earlyPaths({ kind: 'case', id: 9 })).toEqual(['/api/users/info', '/api/config', '/api/cases/9']);
  });
});

describe('startEarly', () => {
  it("on the image viewer: fetches the page's GETs as the client would, and preloads the viewer's files", () => {
    const { calls } = mockFetch({});
    startEarly('/studies/3/images/17', assets);
    expect(calls.map((c) => `${c.method} ${c.path}`)).toEqual([
      'GET /api/users/info',
      'GET /api/config',
      'GET /api/images/17',
    ]);
    expect(calls.every((c) => c.credentials === 'same-origin' && c.headers.get('Accept') === 'application/json')).toBe(
      true,
    );
    expect(linksInHead()).toEqual([
      'modulepreload /assets/ImageViewerPage-a.js crossorigin',
      'stylesheet /assets/ImageViewerPage-a.css crossorigin',
    ]);
  });

  it("on the case viewer: the case's GET and the case viewer's files", () => {
    const { calls } = mockFetch({});
    startEarly('/studies/3/cases/5', assets);
    expect(calls.map((c) => c.path)).toContain('/api/cases/5');
    expect(linksInHead()).toHaveLength(3);
  });

  it('elsewhere: the session and configuration only, no files', () => {
    const { calls } = mockFetch({});
    startEarly('/studies', assets);
    expect(calls.map((c) => c.path)).toEqual(['/api/users/info', '/api/config']);
    expect(linksInHead()).toEqual([]);
  });

  it("without the build's asset list (development, a tampered tag): the data only", () => {
    mockFetch({});
    startEarly('/studies/3/images/17', readViewerAssets('{not json'));
    expect(linksInHead()).toEqual([]);
    expect(readViewerAssets(undefined)).toBeNull();
    expect(readViewerAssets('{"image":["/a.js",3],"case":"x"}')).toEqual({ image: ['/a.js'], case: [] });
  });
});

describe("startEarly: the viewer's first tiles", () => {
  const image = { id: 17, width: 40_000, height: 30_000, maxTmsZoom: 8, tileUrl: '/tiles/17/{z}/{x}/{y}?t=abc' };
  const tiles: EarlyTileOptions = {
    viewport: [1280, 800],
    sidebarOpen: true,
    caseImage: (_caseId, images) => images[1]?.id ?? null,
  };
  const loaded = () =>
    (window.__laminaEarlyTiles ?? []).map((img) => new URL(img.src).pathname + new URL(img.src).search);
  const settle = () => window.__laminaEarlyTilesStarted;

  it("loads the image viewer's first tiles once its details are in, and the client still reads the answer", async () => {
    mockFetch({ 'GET /api/images/17': { body: image } });
    startEarly('/studies/3/images/17', null, Date.now(), tiles);
    await settle();
    expect(loaded()).toEqual(firstTileUrls(image, viewerMapSize(1280, 800, true)));
    const response = await takeEarlyResponse('/api/images/17');
    expect(await response?.json()).toEqual(image);
  });

  it('for a case: asks for the image its viewer shows first, for the client to take, then its tiles', async () => {
    const { calls } = mockFetch({
      'GET /api/cases/5': { body: { success: true, case: { id: 5, images: [{ id: 16 }, { id: 17 }] } } },
      'GET /api/images/17': { body: image },
    });
    startEarly('/studies/3/cases/5', null, Date.now(), tiles);
    await settle();
    expect(calls.map((c) => c.path)).toEqual(['/api/users/info', '/api/config', '/api/cases/5', '/api/images/17']);
    expect(loaded()).toEqual(firstTileUrls(image, viewerMapSize(1280, 800, true)));
    expect(await (await takeEarlyResponse('/api/images/17'))?.json()).toEqual(image);
  });

  it('no tiles for a slide without a tile URL, a refused image, or without the options', async () => {
    const { calls } = mockFetch({
      'GET /api/images/17': { body: { ...image, tileUrl: null } },
      'GET /api/images/18': { status: 403, body: { success: false } },
      'GET /api/images/19': { body: image },
    });
    startEarly('/studies/3/images/17', null, Date.now(), tiles);
    await window.__laminaEarlyTilesStarted;
    startEarly('/studies/3/images/18', null, Date.now(), tiles);
    await window.__laminaEarlyTilesStarted;
    delete window.__laminaEarlyTilesStarted;
    startEarly('/studies/3/images/19', null);
    expect(window.__laminaEarlyTilesStarted).toBeUndefined();
    expect(calls.filter((c) => c.path.startsWith('/api/images/'))).toHaveLength(3);
    expect(window.__laminaEarlyTiles ?? []).toEqual([]);
  });
});
