import { vi } from 'vitest';

export interface RecordedCall {
  method: string;
  path: string;
  /** The query string of the call. */
  query: URLSearchParams;
  headers: Headers;
  body: unknown;
  credentials: RequestCredentials | undefined;
}

type Reply = { status?: number; body?: unknown } | ((call: RecordedCall) => { status?: number; body?: unknown });

/**
 * Stubs global fetch with canned replies keyed by `METHOD /path` (query string ignored).
 * A key may hold a list of replies, used in turn (the last one repeats). Unknown keys answer 404.
 */
export function mockFetch(replies: Record<string, Reply | Reply[]>) {
  const calls: RecordedCall[] = [];
  const used = new Map<string, number>();
  const fetchMock = vi.fn((input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const url = new URL(
      typeof input === 'string' ? input : input instanceof URL ? input.href : input.url,
      'http://localhost',
    );
    const method = (init?.method ?? 'GET').toUpperCase();
    const call: RecordedCall = {
      method,
      path: url.pathname,
      query: url.searchParams,
      headers: new Headers(init?.headers),
      body: typeof init?.body === 'string' ? (JSON.parse(init.body) as unknown) : undefined,
      credentials: init?.credentials,
    };
    calls.push(call);
    const key = `${method} ${url.pathname}`;
    const entry = replies[key];
    let reply: Reply | undefined;
    if (Array.isArray(entry)) {
      const index = used.get(key) ?? 0;
      used.set(key, index + 1);
      reply = entry[Math.min(index, entry.length - 1)];
    } else {
      reply = entry;
    }
    const resolved =
      typeof reply === 'function'
        ? reply(call)
        : (reply ?? { status: 404, body: { success: false, message: 'Not found' } });
    const status = resolved.status ?? 200;
    return Promise.resolve(
      new Response(resolved.body === undefined ? null : JSON.stringify(resolved.body), {
        status,
        headers: { 'Content-Type': 'application/json' },
      }),
    );
  });
  vi.stubGlobal('fetch', fetchMock);
  return { fetchMock, calls };
}

/** Rejects every call as if the server were unreachable. */
export function mockFetchDown() {
  const fetchMock = vi.fn(() => Promise.reject(new TypeError('Failed to fetch')));
  vi.stubGlobal('fetch', fetchMock);
  return fetchMock;
}
