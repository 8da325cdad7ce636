import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { EARLY_RESPONSE_TTL_MS, takeEarlyResponse } from '../lib/earlyRequests';
import { startEarly } from '../lib/earlyStart';
import { mockFetch } from '../test/mockFetch';
import { apiFetch, setCsrfToken } from './client';

/** The client and the document's early requests (lib/earlyStart.ts, issue 28). */

beforeEach(() => {
  delete window.__laminaEarly;
});

afterEach(() => {
  delete window.__laminaEarly;
  delete window.__laminaEarlyTiles;
  delete window.__laminaEarlyTilesStarted;
  delete window.__laminaEarlyImagePending;
  document.head.innerHTML = '';
});

describe('the API client takes an early answer once', () => {
  it('answers the first GET of the path from the early fetch, and asks the server for the next', async () => {
    const { calls } = mockFetch({ 'GET /api/images/17': [{ body: { id: 17, n: 1 } }, { body: { id: 17, n: 2 } }] });
    startEarly('/studies/3/images/17', null);
    expect(calls.filter((c) => c.path === '/api/images/17')).toHaveLength(1);
    await expect(apiFetch('/api/images/17')).resolves.toEqual({ id: 17, n: 1 });
    expect(calls.filter((c) => c.path === '/api/images/17')).toHaveLength(1);
    await expect(apiFetch('/api/images/17')).resolves.toEqual({ id: 17, n: 2 });
    expect(calls.filter((c) => c.path === '/api/images/17')).toHaveLength(2);
  });

  it('an early 401 is handled as the client handles any 401', async () => {
    mockFetch({ 'GET /api/users/info': { status: 401, body: { message: 'Unauthorized' } } });
    startEarly('/studies', null);
    await expect(apiFetch('/api/users/info', { redirectOn401: false })).rejects.toMatchObject({ status: 401 });
  });

  it('an early fetch that failed is asked again', async () => {
    const { calls } = mockFetch({ 'GET /api/config': { body: { ok: true } } });
    const served = globalThis.fetch;
    let first = true;
    vi.stubGlobal('fetch', (input: RequestInfo | URL, init?: RequestInit) => {
      if (!first) return served(input, init);
      first = false;
      return Promise.reject(new TypeError('Failed to fetch'));
    });
    startEarly('/studies', null);
    await expect(apiFetch('/api/config')).resolves.toEqual({ ok: true });
    expect(calls.filter((c) => c.path === '/api/config')).toHaveLength(1);
  });

  it('a mutation drops every early answer not taken (a login on the page must not meet the 401 before it)', async () => {
    setCsrfToken('tok');
    const { calls } = mockFetch({
      'GET /api/users/info': [{ status: 401, body: { message: 'Unauthorized' } }, { body: { id: 1 } }],
      'POST /api/auth/login': { body: { csrfToken: 'new' } },
    });
    startEarly('/login', null);
    await apiFetch('/api/auth/login', { method: 'POST', body: {}, csrf: false });
    await expect(apiFetch('/api/users/info', { redirectOn401: false })).resolves.toEqual({ id: 1 });
    expect(calls.map((c) => `${c.method} ${c.path}`)).toEqual([
      'GET /api/users/info',
      'GET /api/config',
      'POST /api/auth/login',
      'GET /api/users/info',
    ]);
  });

  it('an answer older than the TTL is dropped', () => {
    mockFetch({});
    startEarly('/studies/3/images/17', null, 1000);
    expect(takeEarlyResponse('/api/images/17', 1000 + EARLY_RESPONSE_TTL_MS + 1)).toBeNull();
    expect(window.__laminaEarly?.has('/api/images/17')).toBe(false);
    expect(takeEarlyResponse('/api/config', 1000 + EARLY_RESPONSE_TTL_MS)).not.toBeNull();
    expect(takeEarlyResponse('/api/config', 1000)).toBeNull();
  });
});

describe("the case viewer's image: one GET, whoever asks first", () => {
  const image = { id: 17, width: 4000, height: 3000, maxTmsZoom: 4, tileUrl: '/tiles/17/{z}/{x}/{y}?t=a' };
  const tiles = { viewport: [1280, 800] as const, sidebarOpen: true, caseImage: () => 17 };

  it('the app asking for the image before the early script knows it waits for the early GET', async () => {
    let answerCase: () => void = () => undefined;
    const caseAnswered = new Promise<void>((resolve) => {
      answerCase = resolve;
    });
    const { calls } = mockFetch({
      'GET /api/cases/5': { body: { success: true, case: { id: 5, images: [{ id: 17 }] } } },
      'GET /api/images/17': { body: image },
    });
    const served = globalThis.fetch;
    // The case's answer held back until the app has asked for the image.
    vi.stubGlobal('fetch', async (input: RequestInfo | URL, init?: RequestInit) => {
      if (input === '/api/cases/5') await caseAnswered;
      return served(input, init);
    });
    startEarly('/studies/3/cases/5', null, Date.now(), tiles);
    const asked = apiFetch('/api/images/17');
    answerCase();
    await expect(asked).resolves.toEqual(image);
    expect(calls.filter((c) => c.path === '/api/images/17')).toHaveLength(1);
    await window.__laminaEarlyTilesStarted;
    expect(window.__laminaEarlyTiles?.length).toBeGreaterThan(0);
    expect(window.__laminaEarlyImagePending).toBeUndefined();
  });

  it('other GETs do not wait for it, and an image GET no longer waits once it has settled', async () => {
    const { calls } = mockFetch({
      'GET /api/cases/5': { status: 404, body: { message: 'Case not found' } },
      'GET /api/studies/3': { body: { id: 3 } },
      'GET /api/images/18': { body: { id: 18 } },
    });
    startEarly('/studies/3/cases/5', null, Date.now(), tiles);
    expect(window.__laminaEarlyImagePending).toBeDefined();
    await expect(apiFetch('/api/studies/3')).resolves.toEqual({ id: 3 });
    await window.__laminaEarlyTilesStarted;
    expect(window.__laminaEarlyImagePending).toBeUndefined();
    await expect(apiFetch('/api/images/18')).resolves.toEqual({ id: 18 });
    expect(calls.map((c) => c.path)).toContain('/api/images/18');
  });
});
