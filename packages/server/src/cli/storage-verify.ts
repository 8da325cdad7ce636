// `npm run storage:verify`: re-hashes the original and the pyramid of every processed image in the
// configured storage (STORAGE, DATA_DIR or S3_*) against the SHA-256 recorded at processing, and
// reports every object that is missing or no longer matches. Exit 0 when all match, 1 when not.
import path from 'node:path';
import { loadConfig } from '../platform/config.js';
import { openDatabase } from '../platform/db/database.js';
import { createStorage } from '../platform/storage/createStorage.js';
import { verifyStoredImages } from '../platform/storage/verifyStorage.js';

const config = loadConfig();
const database = await openDatabase({
  databaseUrl: config.databaseUrl,
  dataDir: config.databaseUrl ? undefined : path.join(config.dataDir, 'db'),
});
try {
  const storage = createStorage(config);
  const result = await verifyStoredImages(database.db, storage);
  for (const p of result.problems) {
    console.error(
      p.problem === 'missing'
        ? `image ${p.imageId}: ${p.kind} ${p.key} is MISSING`
        : `image ${p.imageId}: ${p.kind} ${p.key} does NOT MATCH (recorded ${p.expected}, now ${p.actual ?? '?'})`,
    );
  }
  const summary = `${result.objectsChecked} objects of ${result.imagesChecked} images checked`;
  if (result.problems.length === 0) console.log(`Storage verified: ${summary}, every SHA-256 matches.`);
  else {
    console.error(`Storage NOT verified: ${result.problems.length} problem(s); ${summary}.`);
    process.exitCode = 1;
  }
} finally {
  await database.close();
}
