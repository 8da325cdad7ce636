/**
 * Messages and constants the shell needs that `@lamina/domain` does not have yet.
 * The lead moves these into the domain package; then this file imports from there or goes away.
 */
export const WEB_MESSAGES = {
  /** /successMessage (doc 1 §2.1). */
  imageMarkedScored: 'The image was successfully marked as scored.',
  returnToDashboard: 'Please return to your dashboard.',
  /** /accessDenied (doc 1 §2.1). */
  accessDeniedTitle: 'Access denied',
  accessDeniedHelp:
    'Contact an administrator to be given access, or switch to a role that has the right permissions.',
  /** Unknown client route. */
  pageNotFound: 'Page not found',
  /** A response body that does not match the contract's schema. */
  unexpectedResponse: 'Unexpected response from the server',
} as const;

/** Fallback when an error response carries no message. */
export function requestFailed(status: number): string {
  return `Request failed with status ${status}`;
}

/** Keys under which lists remember their page size (doc 1 §9). */
export const ROWS_PER_PAGE_KEYS = ['studyRowsPerPage', 'caseRowsPerPage', 'imageRowsPerPage', 'userRowsPerPage'] as const;

/** Query parameter and value that turn on embedded mode (doc 1 §2.3). */
export const EMBEDDED_PARAM = 'embeddedBy';
export const EMBEDDED_BY_NOTO = 'NOTO';
