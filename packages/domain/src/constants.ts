/** Business constants of spec doc 1 §9 that the shell needs. */
export const PAGE_SIZES = [10, 20, 50, 100] as const;
export const DEFAULT_PAGE_SIZE = 20;

export const LOGIN_THROTTLE = {
  /** Failures for one account from one IP before further attempts are refused. */
  maxFailures: 10,
  windowMinutes: 15,
} as const;

export const SESSION_TTL_HOURS = 12;
export const CSRF_HEADER = 'x-csrf-token';
export const SESSION_COOKIE = 'lamina_session';

/** Keys under which lists remember their page size (doc 1 §9). */
export const ROWS_PER_PAGE_KEYS = [
  'studyRowsPerPage',
  'caseRowsPerPage',
  'imageRowsPerPage',
  'userRowsPerPage',
] as const;

/** Query parameter and value that turn on embedded mode (doc 1 §2.3). */
export const EMBEDDED_PARAM = 'embeddedBy';
export const EMBEDDED_BY_NOTO = 'NOTO';
