export const DEFAULT_AFTER_LOGIN = '/studies';

/**
 * The page to open after login, from the `?redirect=` parameter (doc 1 §2.2).
 * Only same-origin relative paths are followed: they must start with a single `/` (not `//`,
 * not `/\`, which browsers read as protocol-relative), contain no control characters, and not
 * point back at /login. Anything else falls back to /studies.
 */
export function safeRedirect(raw: string | null | undefined): string {
  if (raw == null) return DEFAULT_AFTER_LOGIN;
  const value = raw.trim();
  if (!value.startsWith('/')) return DEFAULT_AFTER_LOGIN;
  if (value.startsWith('//') || value.startsWith('/\\')) return DEFAULT_AFTER_LOGIN;
  // eslint-disable-next-line no-control-regex -- rejecting control characters is the point
  if (/[\u0000-\u001f\u007f]/.test(value)) return DEFAULT_AFTER_LOGIN;
  const base = 'http://lamina.invalid';
  let url: URL;
  try {
    url = new URL(value, base);
  } catch {
    return DEFAULT_AFTER_LOGIN;
  }
  if (url.origin !== base) return DEFAULT_AFTER_LOGIN;
  if (url.pathname === '/login' || url.pathname.startsWith('/login/')) return DEFAULT_AFTER_LOGIN;
  return `${url.pathname}${url.search}${url.hash}`;
}

/** `/login?redirect=…` for the given path (path plus query string). */
export function loginUrlFor(path: string): string {
  return `/login?redirect=${encodeURIComponent(path)}`;
}
