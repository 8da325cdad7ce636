import type { Config } from '../config.js';
import { LocalStorage } from './localStorage.js';
import { S3Storage } from './s3Storage.js';
import type { AppStorage } from './uploadSigning.js';

/** The storage of the configuration: the local folder (default) or S3 (`STORAGE=s3`). */
export function createStorage(config: Config): AppStorage {
  if (config.storage.kind === 's3') {
    const s3 = config.storage.s3;
    return new S3Storage({
      bucket: s3.bucket,
      region: s3.region,
      endpoint: s3.endpoint,
      forcePathStyle: s3.forcePathStyle,
      accessKeyId: s3.accessKeyId,
      secretAccessKey: s3.secretAccessKey,
    });
  }
  return new LocalStorage({ root: config.storage.localRoot, secret: config.sessionSecret });
}

/** Prepares the storage for use (the local folders); S3 needs nothing. */
export async function initStorage(storage: AppStorage): Promise<void> {
  if (storage instanceof LocalStorage) await storage.init();
}
