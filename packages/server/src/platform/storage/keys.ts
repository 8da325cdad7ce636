import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';

/**
 * Object keys: relative paths of segments made of letters, digits, '.', '_' and '-', never starting
 * with a dot (so '.', '..', and the local store's own '.tmp'/'.multipart' folders are unreachable).
 */
const SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/;

export class InvalidKeyError extends Error {
  override readonly name = 'InvalidKeyError';
}

export function isValidKey(key: string): boolean {
  if (key.length === 0 || key.length > 1024) return false;
  return key.split('/').every((segment) => SEGMENT.test(segment));
}

export function assertValidKey(key: string): void {
  if (!isValidKey(key)) throw new InvalidKeyError(`Invalid object key '${key.slice(0, 100)}'`);
}

/**
 * A file name made safe for a key segment (the name as given is kept on the image row): letters
 * are folded to ASCII where they decompose (é → e), anything else becomes '_', and the extension is
 * always kept — '病理.svs' becomes 'file.svs', not 'svs'.
 */
export function safeFileName(fileName: string): string {
  const base = fileName.split(/[\\/]/).pop() ?? fileName;
  const dot = base.lastIndexOf('.');
  const ext = dot > 0 ? base.slice(dot + 1) : '';
  const safeExt = /^[A-Za-z0-9]{1,10}$/.test(ext) ? `.${ext}` : '';
  const stem = (safeExt ? base.slice(0, dot) : base)
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^[._]+/, '')
    .replace(/_+$/, '')
    .slice(-150);
  return `${/[A-Za-z0-9]/.test(stem) ? stem : 'file'}${safeExt}`;
}

/** The extension of a file name, lower case without the dot ('' when none). */
export function extensionOf(fileName: string): string {
  const base = fileName.split(/[\\/]/).pop() ?? fileName;
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot + 1).toLowerCase() : '';
}

/**
 * `Content-Disposition: attachment` for a download name in any script: an ASCII fallback for old
 * clients and the exact name as RFC 5987 `filename*=UTF-8''…` (RFC 6266).
 */
export function attachmentDisposition(fileName: string): string {
  const fallback = safeFileName(fileName).replace(/"/g, '_');
  const encoded = encodeURIComponent(fileName).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}

/** Where an upload into a study goes: `uploads/{studyId}/{uuid}/{safe file name}` (no owner: seeds and tests). */
export function uploadKey(studyId: number, fileName: string): string {
  return `uploads/${studyId}/${randomUUID()}/${safeFileName(fileName)}`;
}

/**
 * Upload keys bound to the user they were issued to: `uploads/{studyId}/u{userId}-{nonce}-{mac}/{file}`,
 * the MAC (HMAC of SESSION_SECRET with its own purpose label) over study, user and nonce. Only the
 * owner may list, sign, complete or abort a multipart upload of the key; no table is needed, and a
 * key cannot be forged for someone else.
 */
/** The MAC's study part for .mld keys: none is a real study, so no other kind of key verifies as one. */
const MLD_KEY_STUDY = -1;

export class UploadKeys {
  private readonly secret: Buffer;

  constructor(sessionSecret: string) {
    this.secret = createHmac('sha256', sessionSecret).update('lamina:upload-key:v1').digest();
  }

  private mac(studyId: number, userId: number, nonce: string): string {
    return createHmac('sha256', this.secret).update(`${studyId}/${userId}/${nonce}`).digest('hex').slice(0, 20);
  }

  issue(studyId: number, userId: number, fileName: string): string {
    const nonce = randomUUID().replace(/-/g, '').slice(0, 16);
    return `uploads/${studyId}/u${userId}-${nonce}-${this.mac(studyId, userId, nonce)}/${safeFileName(fileName)}`;
  }

  /** The user an upload key was issued to, or null when this server did not issue it to anyone. */
  ownerOf(key: string): number | null {
    const studyId = studyIdOfUploadKey(key);
    const match = /^uploads\/\d+\/u(\d{1,10})-([0-9a-f]{16})-([0-9a-f]{20})\//.exec(key);
    if (studyId === null || !match) return null;
    return this.verified(studyId, match);
  }

  /**
   * A sample-data file's key, bound to its user (no study: the import spans the user's studies):
   * `samples/u{userId}-{nonce}-{mac}/{file}`; the result file goes beside it (sampleResultKey).
   */
  issueSample(userId: number, fileName: string): string {
    const nonce = randomUUID().replace(/-/g, '').slice(0, 16);
    return `samples/u${userId}-${nonce}-${this.mac(0, userId, nonce)}/${safeFileName(fileName)}`;
  }

  /**
   * An imported .mld file's key, bound to its user (no study until the import links it to an
   * image): `mld/u{userId}-{nonce}-{mac}/{file}`.
   */
  issueMld(userId: number, fileName: string): string {
    const nonce = randomUUID().replace(/-/g, '').slice(0, 16);
    return `mld/u${userId}-${nonce}-${this.mac(MLD_KEY_STUDY, userId, nonce)}/${safeFileName(fileName)}`;
  }

  /** The user an .mld key was issued to, or null. */
  mldOwnerOf(key: string): number | null {
    const match = /^mld\/u(\d{1,10})-([0-9a-f]{16})-([0-9a-f]{20})\/[^/]+$/.exec(key);
    if (!match || !isValidKey(key)) return null;
    return this.verified(MLD_KEY_STUDY, match);
  }

  /** The user a sample-data key was issued to, or null. */
  sampleOwnerOf(key: string): number | null {
    const match = /^samples\/u(\d{1,10})-([0-9a-f]{16})-([0-9a-f]{20})\/[^/]+$/.exec(key);
    if (!match || !isValidKey(key)) return null;
    return this.verified(0, match);
  }

  private verified(studyId: number, match: RegExpExecArray): number | null {
    const [, user, nonce, mac] = match as unknown as [string, string, string, string];
    const userId = Number(user);
    const expected = Buffer.from(this.mac(studyId, userId, nonce));
    return timingSafeEqual(expected, Buffer.from(mac)) ? userId : null;
  }
}

/** Where the result of a sample-data import goes: beside the file, `result-{name}.csv`. */
export function sampleResultKey(sampleKey: string): string {
  const slash = sampleKey.lastIndexOf('/');
  const name = sampleKey.slice(slash + 1).replace(/\.(csv|txt)$/i, '');
  return `${sampleKey.slice(0, slash)}/result-${name}.csv`;
}

/** The study of an upload key, or null when the key is not under a study's upload prefix. */
export function studyIdOfUploadKey(key: string): number | null {
  const match = /^uploads\/(\d{1,10})\/[A-Za-z0-9-]{8,64}\/[^/]+$/.exec(key);
  if (!match || !isValidKey(key)) return null;
  const id = Number(match[1]);
  return Number.isSafeInteger(id) && id > 0 ? id : null;
}

/** Objects of an image: the sealed original and the derived objects. */
export const imageKeys = {
  /** Where the worker seals a registered upload (the upload key's file name kept). */
  original: (imageId: number, uploadKey: string) => `originals/${imageId}/${uploadKey.split('/').pop() ?? 'original'}`,
  pyramid: (imageId: number) => `images/${imageId}/pyramid.tif`,
  label: (imageId: number) => `images/${imageId}/label.png`,
  macro: (imageId: number) => `images/${imageId}/macro.jpg`,
};

/** Each key segment URL-encoded, slashes kept. */
export function encodeKey(key: string): string {
  return key.split('/').map(encodeURIComponent).join('/');
}

/** The operations a local signed URL can authorise (an S3 subset, so S3 clients such as Uppy work). */
export type SignedOp = 'get' | 'put' | 'create' | 'part' | 'list' | 'complete' | 'abort';

export interface SignedUrlClaims {
  op: SignedOp;
  key: string;
  /** Unix seconds. */
  expires: number;
  uploadId?: string | undefined;
  partNumber?: number | undefined;
  downloadName?: string | undefined;
}

/**
 * HMAC-signed URLs of the local storage. The key is derived from SESSION_SECRET with a purpose
 * label, so a storage signature is never valid as a session or tile token.
 */
export class UrlSigner {
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = createHmac('sha256', secret).update('lamina:storage-url:v1').digest();
  }

  private mac(claims: SignedUrlClaims): string {
    const canonical = [
      claims.op,
      claims.key,
      claims.expires,
      claims.uploadId ?? '',
      claims.partNumber ?? '',
      claims.downloadName ?? '',
    ].join('\n');
    return createHmac('sha256', this.key).update(canonical).digest('base64url');
  }

  /** The query string (without '?') that carries the claims and their signature. */
  sign(claims: SignedUrlClaims): string {
    const params = new URLSearchParams();
    params.set('op', claims.op);
    if (claims.uploadId !== undefined) params.set('uploadId', claims.uploadId);
    if (claims.partNumber !== undefined) params.set('partNumber', String(claims.partNumber));
    if (claims.downloadName !== undefined) params.set('name', claims.downloadName);
    params.set('expires', String(claims.expires));
    params.set('sig', this.mac(claims));
    return params.toString();
  }

  /** The claims of a signed URL's query, or null when missing, forged or expired. */
  verify(key: string, query: Record<string, unknown>, now = Date.now()): SignedUrlClaims | null {
    const str = (name: string): string | undefined => {
      const v = query[name];
      return typeof v === 'string' ? v : undefined;
    };
    const op = str('op');
    const expiresText = str('expires');
    const sig = str('sig');
    if (!op || !expiresText || !sig || !/^\d{1,12}$/.test(expiresText)) return null;
    if (!['get', 'put', 'create', 'part', 'list', 'complete', 'abort'].includes(op)) return null;
    const partText = str('partNumber');
    if (partText !== undefined && !/^\d{1,5}$/.test(partText)) return null;
    const claims: SignedUrlClaims = {
      op: op as SignedOp,
      key,
      expires: Number(expiresText),
      uploadId: str('uploadId'),
      partNumber: partText === undefined ? undefined : Number(partText),
      downloadName: str('name'),
    };
    const expected = Buffer.from(this.mac(claims));
    const given = Buffer.from(sig);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
    if (claims.expires * 1000 < now) return null;
    return claims;
  }
}
