import { vi } from 'vitest';

/** What a fake request answers: a response, a network error, or nothing until aborted. */
export type FakeReply = { status: number; body?: string; headers?: Record<string, string> } | 'network-error' | 'hang';

export interface FakeRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: unknown;
  /** Bytes sent (Blob/ArrayBuffer/string bodies). */
  size: number;
}

type Handler = (request: FakeRequest) => FakeReply | Promise<FakeReply>;

function sizeOf(body: unknown): number {
  if (body instanceof Blob) return body.size;
  if (body instanceof ArrayBuffer) return body.byteLength;
  if (ArrayBuffer.isView(body)) return body.byteLength;
  if (typeof body === 'string') return body.length;
  return 0;
}

/**
 * Replaces XMLHttpRequest with a scripted fake (uploads use XHR for progress; Uppy's S3 client too).
 * Returns the requests seen. Progress is reported once, at the end of each upload.
 */
export function fakeXhr(handler: Handler): { requests: FakeRequest[] } {
  const requests: FakeRequest[] = [];

  class FakeXMLHttpRequest {
    static readonly DONE = 4;
    readyState = 0;
    status = 0;
    statusText = '';
    responseText = '';
    response: unknown = '';
    responseType = '';
    timeout = 0;
    withCredentials = false;
    upload: { onprogress: ((event: ProgressEvent) => void) | null } = { onprogress: null };
    onload: (() => void) | null = null;
    onerror: (() => void) | null = null;
    onabort: (() => void) | null = null;
    onreadystatechange: (() => void) | null = null;
    private method = 'GET';
    private url = '';
    private headers: Record<string, string> = {};
    private responseHeaders: Record<string, string> = {};
    private aborted = false;

    open(method: string, url: string): void {
      this.method = method.toUpperCase();
      this.url = url;
      this.readyState = 1;
    }
    setRequestHeader(name: string, value: string): void {
      this.headers[name.toLowerCase()] = value;
    }
    getResponseHeader(name: string): string | null {
      return this.responseHeaders[name.toLowerCase()] ?? null;
    }
    getAllResponseHeaders(): string {
      return Object.entries(this.responseHeaders)
        .map(([k, v]) => `${k}: ${v}`)
        .join('\r\n');
    }
    abort(): void {
      if (this.aborted) return;
      this.aborted = true;
      this.readyState = 4;
      this.status = 0;
      this.onabort?.();
    }
    send(body: unknown): void {
      const request: FakeRequest = {
        method: this.method,
        url: this.url,
        headers: this.headers,
        body,
        size: sizeOf(body),
      };
      requests.push(request);
      void Promise.resolve()
        .then(() => handler(request))
        .then((reply) => {
          if (this.aborted || reply === 'hang') return;
          if (reply === 'network-error') {
            this.readyState = 4;
            this.status = 0;
            this.onerror?.();
            return;
          }
          this.upload.onprogress?.({
            loaded: request.size,
            total: request.size,
            lengthComputable: true,
          } as ProgressEvent);
          this.readyState = 4;
          this.status = reply.status;
          this.statusText = String(reply.status);
          this.responseText = reply.body ?? '';
          this.response = this.responseText;
          this.responseHeaders = Object.fromEntries(
            Object.entries(reply.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]),
          );
          this.onreadystatechange?.();
          this.onload?.();
        });
    }
  }

  vi.stubGlobal('XMLHttpRequest', FakeXMLHttpRequest);
  return { requests };
}
