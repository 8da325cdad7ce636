/**
 * An HTTP client of the cluster that behaves like the browser's apiFetch: the session cookie, the
 * CSRF header on mutations, JSON bodies. One difference, on purpose and counted: a request that
 * fails because a process died under it (a network error, or nginx's 502/503/504) is tried again
 * after a short pause, as a user would press the button again. The simulation reports every such
 * retry; any other failure is a failed user action.
 */
import { randomUUID } from 'node:crypto';

export interface Retry {
  who: string;
  method: string;
  route: string;
  cause: string;
}

export interface Counters {
  requests: number;
  retries: Retry[];
  failures: string[];
}

export function newCounters(): Counters {
  return { requests: 0, retries: [], failures: [] };
}

export interface Answer<T> {
  status: number;
  body: T;
  headers: Headers;
}

const RETRYABLE = new Set([502, 503, 504]);
const ATTEMPTS = 4;

export class Client {
  private cookie = '';
  private csrf = '';

  constructor(
    readonly base: string,
    readonly who: string,
    readonly counters: Counters,
  ) {}

  async login(password: string): Promise<void> {
    const r = await this.request<{ csrfToken: string }>('POST', '/api/auth/login', {
      username: this.who,
      password,
    });
    if (r.status !== 200) throw new Error(`login ${this.who}: ${r.status} ${JSON.stringify(r.body)}`);
    this.csrf = r.body.csrfToken;
  }

  /** One user request; retried (and counted) only when a process died under it. */
  async request<T>(
    method: string,
    route: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Answer<T>> {
    for (let attempt = 1; ; attempt++) {
      this.counters.requests++;
      let cause: string;
      try {
        const response = await fetch(`${this.base}${route}`, {
          method,
          headers: {
            ...(this.cookie ? { cookie: this.cookie } : {}),
            ...(this.csrf && method !== 'GET' ? { 'x-csrf-token': this.csrf } : {}),
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
            'x-request-id': `sim-${randomUUID()}`,
            ...headers,
          },
          body: body === undefined ? null : JSON.stringify(body),
          signal: AbortSignal.timeout(30_000),
        });
        const setCookie = response.headers.getSetCookie()[0];
        if (setCookie) this.cookie = setCookie.split(';')[0] ?? '';
        const text = await response.text();
        if (!RETRYABLE.has(response.status)) {
          const type = response.headers.get('content-type') ?? '';
          return {
            status: response.status,
            body: (type.includes('json') ? JSON.parse(text) : text) as T,
            headers: response.headers,
          };
        }
        cause = `HTTP ${response.status}`;
      } catch (error) {
        cause = (error as Error).message;
      }
      if (attempt >= ATTEMPTS) {
        this.counters.failures.push(`${this.who} ${method} ${route}: ${cause} (after ${attempt} attempts)`);
        throw new Error(`${method} ${route}: ${cause}`);
      }
      this.counters.retries.push({ who: this.who, method, route: route.replace(/\?.*/, ''), cause });
      await new Promise((resolve) => setTimeout(resolve, 300 * attempt));
    }
  }

  /** request() that must answer `expected` (else a failed user action). */
  async expect<T>(expected: number, method: string, route: string, body?: unknown): Promise<T> {
    const r = await this.request<T>(method, route, body);
    if (r.status !== expected) {
      const message = `${this.who} ${method} ${route}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`;
      this.counters.failures.push(message);
      throw new Error(message);
    }
    return r.body;
  }
}

/** A GET of a whole URL (tiles, signed URLs) with the same retry rule; returns status and bytes. */
export async function getBytes(
  url: string,
  counters: Counters,
  who: string,
): Promise<{ status: number; type: string; bytes: number }> {
  for (let attempt = 1; ; attempt++) {
    counters.requests++;
    let cause: string;
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(30_000) });
      const bytes = (await response.arrayBuffer()).byteLength;
      if (!RETRYABLE.has(response.status))
        return { status: response.status, type: response.headers.get('content-type') ?? '', bytes };
      cause = `HTTP ${response.status}`;
    } catch (error) {
      cause = (error as Error).message;
    }
    const route = new URL(url).pathname;
    if (attempt >= ATTEMPTS) {
      counters.failures.push(`${who} GET ${route}: ${cause}`);
      throw new Error(`GET ${route}: ${cause}`);
    }
    counters.retries.push({ who, method: 'GET', route, cause });
    await new Promise((resolve) => setTimeout(resolve, 300 * attempt));
  }
}
