import type { Db } from '../db/database.js';
import { checkObject } from './integrity.js';
import type { ObjectStorage } from './storage.js';

export interface StorageProblem {
  imageId: number;
  kind: 'original' | 'pyramid';
  key: string;
  problem: 'missing' | 'mismatch';
  expected: string;
  actual?: string;
}

export interface StorageVerifyResult {
  imagesChecked: number;
  objectsChecked: number;
  problems: StorageProblem[];
}

/**
 * `npm run storage:verify`: re-hashes every processed image's original and pyramid (archived ones
 * too: they are evidence) and reports each object that is missing or whose SHA-256 no longer
 * matches the one recorded at processing.
 */
export async function verifyStoredImages(
  db: Db,
  storage: ObjectStorage,
  onObject?: (imageId: number, kind: StorageProblem['kind']) => void,
): Promise<StorageVerifyResult> {
  const result: StorageVerifyResult = { imagesChecked: 0, objectsChecked: 0, problems: [] };
  let after = 0;
  for (;;) {
    const rows = await db
      .selectFrom('images')
      .select(['id', 's3_key', 'content_sha256', 'cog_key', 'pyramid_sha256'])
      .where('id', '>', after)
      .where('content_sha256', 'is not', null)
      .orderBy('id')
      .limit(500)
      .execute();
    if (rows.length === 0) return result;
    for (const row of rows) {
      after = row.id;
      result.imagesChecked += 1;
      const objects: [StorageProblem['kind'], string | null, string | null][] = [
        ['original', row.s3_key, row.content_sha256],
        ['pyramid', row.cog_key, row.pyramid_sha256],
      ];
      for (const [kind, key, sha256] of objects) {
        if (!key || !sha256) continue;
        onObject?.(row.id, kind);
        result.objectsChecked += 1;
        const check = await checkObject(storage, key, { sha256, version: null }, { force: true });
        if (check.state === 'missing')
          result.problems.push({ imageId: row.id, kind, key, problem: 'missing', expected: sha256 });
        if (check.state === 'mismatch')
          result.problems.push({
            imageId: row.id,
            kind,
            key,
            problem: 'mismatch',
            expected: sha256,
            actual: check.actual,
          });
      }
    }
  }
}
