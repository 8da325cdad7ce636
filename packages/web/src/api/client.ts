import { CSRF_HEADER, csrfResponseSchema, MESSAGES, requestFailed } from '@lamina/domain';
import { currentPath, currentPathname, fullPageNavigate } from '../lib/browser';
import { dropEarlyResponses, takeEarlyAnswer } from '../lib/earlyRequests';
import { loginUrlFor } from '../lib/safeRedirect';
import { ApiError } from './ApiError';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Anything with zod's `safeParse` — the domain's schemas, without this package importing zod. */
export interface ResponseSchema<T> {
  safeParse(data: unknown): { success: true; data: T } | { success: false; error: unknown };
}

export interface ApiRequest<T> {
  method?: HttpMethod;
  /** Sent as JSON. */
  body?: unknown;
  /** Validates the response body; without it the body is returned as-is. */
  schema?: ResponseSchema<T>;
  /** A 401 sends the browser to /login?redirect={current path} (doc 1 §2.2). Default true. */
  redirectOn401?: boolean;
  /** Mutations carry the X-CSRF-Token header. Default true; only login goes without. */
  csrf?: boolean;
  signal?: AbortSignal;
}

const LOGIN_PATH = '/login';

// The CSRF token lives in memory only; after a reload it is fetched again.
let csrfToken: string | null = null;
let csrfInFlight: Promise<string> | null = null;

export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

export function getCsrfToken(): string | null {
  return csrfToken;
}

async function ensureCsrfToken(redirectOn401: boolean): Promise<string> {
  if (csrfToken !== null) return csrfToken;
  csrfInFlight ??= apiFetch('/api/auth/csrf', { schema: csrfResponseSchema, redirectOn401 })
    .then(({ csrfToken: token }) => {
      csrfToken = token;
      return token;
    })
    .finally(() => {
      csrfInFlight = null;
    });
  return csrfInFlight;
}

function isMutation(method: HttpMethod): boolean {
  return method !== 'GET';
}

async function readBody(response: Response): Promise<unknown> {
  const text = await response.text();
  if (text === '') return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function messageOf(body: unknown, status: number): string {
  if (typeof body === 'object' && body !== null && 'message' in body && typeof body.message === 'string') {
    return body.message;
  }
  return requestFailed(status);
}

async function send(path: string, method: HttpMethod, init: ApiRequest<unknown>): Promise<Response> {
  // The document may have asked already (src/early.ts); its answer is used once, and never after
  // a mutation, which may have changed it (a login on the page the document opened).
  if (isMutation(method)) dropEarlyResponses();
  const early = method === 'GET' && init.body === undefined ? await takeEarlyAnswer(path) : null;
  if (early) return early;
  const headers = new Headers({ Accept: 'application/json' });
  if (init.body !== undefined) headers.set('Content-Type', 'application/json');
  if (isMutation(method) && init.csrf !== false)
    headers.set(CSRF_HEADER, await ensureCsrfToken(init.redirectOn401 !== false));
  try {
    return await fetch(path, {
      method,
      headers,
      credentials: 'same-origin',
      body: init.body === undefined ? null : JSON.stringify(init.body),
      signal: init.signal ?? null,
    });
  } catch (error) {
    if (error instanceof DOMException && error.name === 'AbortError') throw error;
    throw new ApiError(0, MESSAGES.unableToConnect);
  }
}

/**
 * Calls the Lamina API (same origin, JSON). Resolves with the (validated) body; rejects with an
 * {@link ApiError} carrying the status and the server's `message`.
 */
export async function apiFetch<T = unknown>(path: string, init: ApiRequest<T> = {}): Promise<T> {
  const method = init.method ?? 'GET';
  let response = await send(path, method, init);
  let body = await readBody(response);

  if (
    response.status === 403 &&
    isMutation(method) &&
    init.csrf !== false &&
    messageOf(body, 403) === MESSAGES.invalidCsrf
  ) {
    // The token went stale (new session, server restart): fetch a fresh one and try once more.
    csrfToken = null;
    response = await send(path, method, init);
    body = await readBody(response);
  }

  if (!response.ok) {
    if (response.status === 401 && init.redirectOn401 !== false && currentPathname() !== LOGIN_PATH) {
      csrfToken = null;
      fullPageNavigate(loginUrlFor(currentPath()));
    }
    throw new ApiError(response.status, messageOf(body, response.status));
  }

  if (init.schema === undefined) return body as T;
  const parsed = init.schema.safeParse(body);
  if (!parsed.success) throw new ApiError(response.status, MESSAGES.unexpectedResponse);
  return parsed.data;
}

/** A downloaded file: its bytes and the name the server gave it (Content-Disposition). */
export interface Download {
  blob: Blob;
  fileName: string | null;
}

/**
 * Calls an API route that answers a file (a CSV export): the same session, CSRF and error handling
 * as {@link apiFetch}, the body read as it streams, `onProgress` told the bytes so far.
 */
export async function apiDownload(
  path: string,
  init: Omit<ApiRequest<unknown>, 'schema'> & { onProgress?: (bytes: number) => void } = {},
): Promise<Download> {
  const method = init.method ?? 'GET';
  let response = await send(path, method, init);
  if (response.status === 403 && isMutation(method) && init.csrf !== false) {
    const body = await readBody(response.clone());
    if (messageOf(body, 403) === MESSAGES.invalidCsrf) {
      csrfToken = null;
      response = await send(path, method, init);
    }
  }
  if (!response.ok) {
    const body = await readBody(response);
    if (response.status === 401 && init.redirectOn401 !== false && currentPathname() !== LOGIN_PATH) {
      csrfToken = null;
      fullPageNavigate(loginUrlFor(currentPath()));
    }
    throw new ApiError(response.status, messageOf(body, response.status));
  }
  const chunks: BlobPart[] = [];
  let bytes = 0;
  const reader = response.body?.getReader();
  if (reader) {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      bytes += value.byteLength;
      init.onProgress?.(bytes);
    }
  }
  const type = response.headers.get('content-type') ?? 'application/octet-stream';
  const disposition = /filename="([^"]+)"/.exec(response.headers.get('content-disposition') ?? '');
  return { blob: new Blob(chunks, { type }), fileName: disposition?.[1] ?? null };
}

/** Hands a downloaded file to the browser's download (an object URL clicked, then released). */
export function saveDownload({ blob, fileName }: Download, fallbackName: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName ?? fallbackName;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
