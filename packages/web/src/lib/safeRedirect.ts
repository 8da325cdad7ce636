export const DEFAULT_AFTER_LOGIN = '/studies';

/**
 * The page to open after login, from the `?redirect=` parameter (doc 1 §2.2).
 * Only same-origin relative paths are followed: they must start with a single `/` (not `//`,
 * not `/\`, which browsers read as protocol-relative), contain no control characters, and not
 * point back at /login. Anything else falls back to `fallback` (/studies).
 */
export function safeRedirect(raw: string | null | undefined, fallback: string = DEFAULT_AFTER_LOGIN): string {
  if (raw == null) return fallback;
  const value = raw.trim();
  if (!value.startsWith('/')) return fallback;
  if (value.startsWith('//') || value.startsWith('/\\')) return fallback;
  // eslint-disable-next-line no-control-regex -- rejecting control characters is the point
  if (/[\u0000-\u001f\u007f]/.test(value)) return fallback;
  const base = 'http://lamina.invalid';
  let url: URL;
  try {
    url = new URL(value, base);
  } catch {
    return fallback;
  }
  if (url.origin !== base) return fallback;
  if (url.pathname === '/login' || url.pathname.startsWith('/login/')) return fallback;
  return `${url.pathname}${url.search}${url.hash}`;
}

/** `/login?redirect=…` for the given path (path plus query string). */
export function loginUrlFor(path: string): string {
  return `/login?redirect=${encodeURIComponent(path)}`;
}

export const CHANGE_PASSWORD_PATH = '/changePassword';

/** `/changePassword?redirect=…` for the given path (path plus query string). */
export function changePasswordUrlFor(path: string): string {
  return `${CHANGE_PASSWORD_PATH}?redirect=${encodeURIComponent(path)}`;
}

/**
 * Where the change-password page goes once the password is changed: the safe `?redirect=` path,
 * else `/`; never back to the change page itself.
 */
export function afterPasswordChange(raw: string | null | undefined): string {
  const target = safeRedirect(raw, '/');
  const pathname = target.split(/[?#]/)[0];
  return pathname === CHANGE_PASSWORD_PATH || pathname === `${CHANGE_PASSWORD_PATH}/` ? '/' : target;
}
