import { MESSAGES, userInfoSchema } from '@lamina/domain';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { fullPageNavigate } from '../lib/browser';
import { mockFetch, mockFetchDown } from '../test/mockFetch';
import { ApiError, withFallbackMessage } from './ApiError';
import { apiFetch, getCsrfToken, setCsrfToken } from './client';

vi.mock(import('../lib/browser'), async (importOriginal) => ({
  ...(await importOriginal()),
  fullPageNavigate: vi.fn(),
}));

const ok = { success: true, message: 'OK' };

beforeEach(() => {
  setCsrfToken(null);
  window.history.replaceState(null, '', '/studies/3/cases?sort=name');
});

afterEach(() => {
  vi.mocked(fullPageNavigate).mockClear();
});

describe('apiFetch', () => {
  it('sends same-origin credentials and no CSRF header on GET', async () => {
    const { calls } = mockFetch({ 'GET /api/config': { body: { a: 1 } } });
    await expect(apiFetch('/api/config')).resolves.toEqual({ a: 1 });
    expect(calls).toHaveLength(1);
    expect(calls[0]?.credentials).toBe('same-origin');
    expect(calls[0]?.headers.has('X-CSRF-Token')).toBe(false);
  });

  it('fetches the CSRF token when missing and sends it on a mutation', async () => {
    const { calls } = mockFetch({
      'GET /api/auth/csrf': { body: { csrfToken: 'tok-1' } },
      'PUT /api/users/workAs': { body: ok },
    });
    await apiFetch('/api/users/workAs', { method: 'PUT', body: { roleId: 5 } });
    expect(calls.map((c) => `${c.method} ${c.path}`)).toEqual(['GET /api/auth/csrf', 'PUT /api/users/workAs']);
    expect(calls[1]?.headers.get('X-CSRF-Token')).toBe('tok-1');
    expect(calls[1]?.headers.get('Content-Type')).toBe('application/json');
    expect(calls[1]?.body).toEqual({ roleId: 5 });
    expect(getCsrfToken()).toBe('tok-1');
  });

  it.each(['POST', 'PUT', 'PATCH', 'DELETE'] as const)(
    'sends the kept token on %s without fetching it again',
    async (method) => {
      setCsrfToken('kept');
      const { calls } = mockFetch({ [`${method} /api/thing`]: { body: ok } });
      await apiFetch('/api/thing', { method });
      expect(calls).toHaveLength(1);
      expect(calls[0]?.headers.get('X-CSRF-Token')).toBe('kept');
    },
  );

  it('fetches the token once for concurrent mutations', async () => {
    const { calls } = mockFetch({
      'GET /api/auth/csrf': { body: { csrfToken: 'shared' } },
      'POST /api/a': { body: ok },
      'POST /api/b': { body: ok },
    });
    await Promise.all([apiFetch('/api/a', { method: 'POST' }), apiFetch('/api/b', { method: 'POST' })]);
    expect(calls.filter((c) => c.path === '/api/auth/csrf')).toHaveLength(1);
    expect(calls.filter((c) => c.method === 'POST').map((c) => c.headers.get('X-CSRF-Token'))).toEqual([
      'shared',
      'shared',
    ]);
  });

  it('refreshes the token once and retries on 403 Invalid CSRF token', async () => {
    setCsrfToken('stale');
    const { calls } = mockFetch({
      'GET /api/auth/csrf': { body: { csrfToken: 'fresh' } },
      'POST /api/auth/logout': [{ status: 403, body: { success: false, message: MESSAGES.invalidCsrf } }, { body: ok }],
    });
    await expect(apiFetch('/api/auth/logout', { method: 'POST' })).resolves.toEqual(ok);
    expect(calls.map((c) => [c.method, c.path, c.headers.get('X-CSRF-Token')])).toEqual([
      ['POST', '/api/auth/logout', 'stale'],
      ['GET', '/api/auth/csrf', null],
      ['POST', '/api/auth/logout', 'fresh'],
    ]);
  });

  it('retries only once when the token keeps being refused', async () => {
    setCsrfToken('stale');
    const refused = { status: 403, body: { success: false, message: MESSAGES.invalidCsrf } };
    const { calls } = mockFetch({ 'GET /api/auth/csrf': { body: { csrfToken: 'fresh' } }, 'POST /api/x': refused });
    await expect(apiFetch('/api/x', { method: 'POST' })).rejects.toMatchObject({
      status: 403,
      message: MESSAGES.invalidCsrf,
    });
    expect(calls.filter((c) => c.path === '/api/x')).toHaveLength(2);
  });

  it('does not retry other 403s', async () => {
    setCsrfToken('t');
    const { calls } = mockFetch({
      'PUT /api/users/workAs': { status: 403, body: { success: false, message: MESSAGES.roleNotHeld } },
    });
    await expect(apiFetch('/api/users/workAs', { method: 'PUT', body: { roleId: 9 } })).rejects.toMatchObject({
      status: 403,
      message: MESSAGES.roleNotHeld,
    });
    expect(calls).toHaveLength(1);
  });

  it('sends no CSRF header when told not to (login)', async () => {
    const { calls } = mockFetch({ 'POST /api/auth/login': { body: ok } });
    await apiFetch('/api/auth/login', { method: 'POST', body: { username: 'a', password: 'b' }, csrf: false });
    expect(calls).toHaveLength(1);
    expect(calls[0]?.headers.has('X-CSRF-Token')).toBe(false);
  });

  it('sends the browser to /login with the current path on a 401', async () => {
    mockFetch({ 'GET /api/studies': { status: 401, body: { success: false, message: MESSAGES.pleaseLogIn } } });
    const error = await apiFetch('/api/studies').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 401, message: MESSAGES.pleaseLogIn });
    expect(fullPageNavigate).toHaveBeenCalledWith('/login?redirect=%2Fstudies%2F3%2Fcases%3Fsort%3Dname');
  });

  it('redirects on a 401 from a mutation, including the CSRF fetch', async () => {
    mockFetch({ 'GET /api/auth/csrf': { status: 401, body: { success: false, message: MESSAGES.pleaseLogIn } } });
    await expect(apiFetch('/api/x', { method: 'POST' })).rejects.toMatchObject({ status: 401 });
    expect(fullPageNavigate).toHaveBeenCalledWith('/login?redirect=%2Fstudies%2F3%2Fcases%3Fsort%3Dname');
  });

  it('does not redirect on a 401 while on /login', async () => {
    window.history.replaceState(null, '', '/login?redirect=%2Fusers');
    mockFetch({ 'GET /api/users/info': { status: 401, body: { success: false, message: MESSAGES.pleaseLogIn } } });
    await expect(apiFetch('/api/users/info')).rejects.toMatchObject({ status: 401 });
    expect(fullPageNavigate).not.toHaveBeenCalled();
  });

  it('does not redirect on a 401 when the caller handles it', async () => {
    mockFetch({ 'GET /api/users/info': { status: 401, body: { success: false, message: MESSAGES.pleaseLogIn } } });
    await expect(apiFetch('/api/users/info', { redirectOn401: false })).rejects.toMatchObject({ status: 401 });
    expect(fullPageNavigate).not.toHaveBeenCalled();
  });

  it.each([400, 404, 409, 429, 500])('turns a %i envelope into an ApiError with the server message', async (status) => {
    mockFetch({ 'GET /api/x': { status, body: { success: false, message: `boom ${status}` } } });
    await expect(apiFetch('/api/x')).rejects.toMatchObject({ name: 'ApiError', status, message: `boom ${status}` });
    expect(fullPageNavigate).not.toHaveBeenCalled();
  });

  it('uses a generic message when the error has no envelope', async () => {
    mockFetch({ 'GET /api/x': { status: 502 } });
    await expect(apiFetch('/api/x')).rejects.toMatchObject({ status: 502, message: 'Request failed with status 502' });
  });

  it('reports an unreachable server as status 0, Unable to connect to server', async () => {
    mockFetchDown();
    await expect(apiFetch('/api/config')).rejects.toMatchObject({ status: 0, message: MESSAGES.unableToConnect });
  });

  it('validates the body against the schema', async () => {
    mockFetch({ 'GET /api/users/info': { body: { id: 'not a user' } } });
    await expect(apiFetch('/api/users/info', { schema: userInfoSchema })).rejects.toMatchObject({
      status: 200,
      message: MESSAGES.unexpectedResponse,
    });
  });
});

describe('withFallbackMessage', () => {
  it("replaces a failure without the server's own message", async () => {
    mockFetch({ 'GET /api/x': { status: 502 } });
    await expect(withFallbackMessage(apiFetch('/api/x'), 'Unable to fetch x')).rejects.toMatchObject({
      status: 502,
      message: 'Unable to fetch x',
    });
  });

  it("keeps the server's message", async () => {
    mockFetch({ 'GET /api/x': { status: 400, body: { success: false, message: 'Name is required' } } });
    await expect(withFallbackMessage(apiFetch('/api/x'), 'Unable to fetch x')).rejects.toMatchObject({
      message: 'Name is required',
    });
  });
});
