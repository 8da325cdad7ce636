/** Messages of the specification, typed once. Server and web import them from here. */
export const MESSAGES = {
  // auth (issue 2, doc 1 §7–8)
  invalidLogin: 'Invalid username or password',
  tooManyLogins: 'Too many login attempts. Try again later.',
  pleaseLogIn: 'Please log in',
  invalidCsrf: 'Invalid CSRF token',
  crossSiteOrigin: 'Cross-site request refused',
  unableToConnect: 'Unable to connect to server',
  errorSwitchingRoles: 'Error switching roles',
  noOtherRoles: 'You do not have any other roles associated with your account',
  roleNotHeld: 'You do not hold this role',
  accessDenied: 'You do not have permission to do this',
  accountDeactivated: 'This account is deactivated',
  welcome: 'Please see an administrator to finish registering your account.',
  notFound: 'Not found',
  internalError: 'Something went wrong on the server. The error has been logged.',
  // shell pages (doc 1 §2.1)
  imageMarkedScored: 'The image was successfully marked as scored.',
  returnToDashboard: 'Please return to your dashboard.',
  accessDeniedTitle: 'Access denied',
  accessDeniedHelp: 'Contact an administrator to be given access, or switch to a role that has the right permissions.',
  pageNotFound: 'Page not found',
  unexpectedResponse: 'Unexpected response from the server',
  // studies (doc 1 §8)
  studyNotFound: 'Study not found',
  reasonForChangeRequired: 'Reason for change is required',
  // password change (not in the spec: accounts created with a one-time password)
  passwordChangeRequired: 'Change your password to continue',
  currentPasswordRequired: 'Enter your current password',
  currentPasswordIncorrect: 'Current password is incorrect',
  passwordChanged: 'Password changed',
  passwordTooShort: 'The new password must be at least 12 characters long',
  passwordTooLong: 'The new password must be at most 1024 characters long',
  passwordUnchanged: 'The new password must be different from the current password',
  passwordContainsUsername: 'The new password must not contain your username',
  passwordsDoNotMatch: 'The new passwords do not match',
  // single sign-on (issue 19, not in the spec: OpenID Connect; docs/DEPLOYMENT.md)
  localLoginOff: 'Password login is turned off. Log in with single sign-on.',
  ssoNotConfigured: 'Single sign-on is not configured',
  ssoUnknownUser:
    'Single sign-on found no active Lamina account for your e-mail address. Please see an administrator to register your account.',
  ssoFailed: 'Single sign-on did not complete. Please try again; if it keeps failing, see an administrator.',
  ssoUnavailable: 'The single sign-on provider cannot be reached. Please try again later.',
} as const;

/** 'Cannot decode ... from {value}' (doc 1 §8, doc 3 §5) for unknown enumeration values. */
export function cannotDecode(what: string, value: unknown): string {
  return `Cannot decode ${what} from ${typeof value === 'string' ? value : JSON.stringify(value)}`;
}

/** Fallback when an error response carries no message. */
export function requestFailed(status: number): string {
  return `Request failed with status ${status}`;
}
