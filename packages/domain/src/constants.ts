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

/** Upload notifications (e-mails to the study's admins) one user may send in the window. */
export const NOTIFY_UPLOAD_LIMIT = { perUser: 10, windowMinutes: 10 } as const;

/**
 * Length limits of text fields, typed once: the zod schemas of the API and the forms' maxLength
 * read them from here.
 */
export const TEXT_LIMITS = {
  /** First and last names. */
  personName: 100,
  /** Usernames (e-mail addresses, RFC 5321). */
  email: 320,
  studyName: 200,
  sponsor: 200,
  /** Protocol, visit and lab visit IDs, segment names, annotation class names. */
  identifier: 100,
  /** Reasons for change, for (de)activation and the like. */
  reason: 1000,
  fileName: 255,
  /** Name searches of the lists. */
  search: 200,
} as const;
