import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mockFetch } from '../test/mockFetch';
import { earlyPage, earlyPaths, readViewerAssets, startEarly, type ViewerAssets } from './earlyStart';

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
  document.head.innerHTML = '';
});

afterEach(() => {
  delete window.__laminaEarly;
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
