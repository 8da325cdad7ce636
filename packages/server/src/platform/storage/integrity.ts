import { createHash } from 'node:crypto';
import type { ObjectStorage } from './storage.js';

/** The SHA-256 (hex) of a stored object, streamed. */
export async function sha256OfObject(storage: ObjectStorage, key: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of await storage.createReadStream(key)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

export type IntegrityCheck =
  { state: 'ok'; version: string; rehashed: boolean } | { state: 'missing' } | { state: 'mismatch'; actual: string };

/**
 * Whether the object under `key` still has the recorded SHA-256. While its version (storage head)
 * is the one recorded with the hash, it cannot have changed and is not read again; otherwise it is
 * re-hashed (`force` re-hashes always, as storage:verify does).
 */
export async function checkObject(
  storage: ObjectStorage,
  key: string,
  recorded: { sha256: string; version: string | null },
  options: { force?: boolean } = {},
): Promise<IntegrityCheck> {
  const head = await storage.head(key);
  if (!head) return { state: 'missing' };
  if (!options.force && recorded.version !== null && head.version === recorded.version)
    return { state: 'ok', version: head.version, rehashed: false };
  const actual = await sha256OfObject(storage, key);
  if (actual !== recorded.sha256) return { state: 'mismatch', actual };
  return { state: 'ok', version: head.version, rehashed: true };
}
