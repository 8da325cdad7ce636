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
