/**
 * Storage keys inside a text — an error message that names the object it failed on (issue 26):
 * `The object uploads/3/u7-…/SUBJ-0042.svs already exists`, or a local path under the storage root
 * such as `open '/var/lib/lamina/storage/originals/12/SUBJ-0042.svs'`. A key carries the scanner's
 * file name and the upload's token; the path before it, the server's layout. Neither belongs in what
 * users read (a status message, an audit trail export).
 */

/**
 * The first segment of every kind of storage key: uploads (`uploadKey`, `UploadKeys.issue`),
 * sealed originals, an image's derived objects (`images/{id}/…`), .mld files and their heatmaps,
 * sample-data files and their results (keys.ts, mldImport.ts). A test holds it to every key
 * template in the code.
 */
export const STORAGE_KEY_PREFIXES = ['uploads', 'originals', 'images', 'mld', 'samples'] as const;

/**
 * A key, with any path or URL before it (a local storage root, `s3://bucket/`): a prefix at the
 * start of a word or after a slash, then '/' (or its URL encoding) and key characters, not ending
 * in a dot (the end of a sentence).
 */
const KEY_IN_TEXT = new RegExp(
  String.raw`(?:[^\s"'\`()<>\[\]{},;|]*[\\/])?(?<![A-Za-z0-9._-])(?:${STORAGE_KEY_PREFIXES.join('|')})(?:/|%2[Ff])` +
    String.raw`[A-Za-z0-9_~%-](?:[A-Za-z0-9._~%/-]*[A-Za-z0-9_~%/-])?`,
  'g',
);
/** The cheap test before the expression: a prefix followed by a separator. */
const HINT = new RegExp(`(?:${STORAGE_KEY_PREFIXES.join('|')})(?:/|%2[Ff])`);

/** The text with each storage key (and the path before it) replaced by `label`. */
export function withoutStorageKeys(text: string, label: string): string {
  return HINT.test(text) ? text.replace(KEY_IN_TEXT, label) : text;
}

/** What a message recorded for users reads where it named a storage key. */
export const STORAGE_KEY_IN_MESSAGE = '(storage key)';
