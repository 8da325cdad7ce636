// `npm run audit:verify`: walks the audit chain of the configured database (DATABASE_URL, or the
// embedded database in DATA_DIR), checks it against the anchors of AUDIT_ANCHOR_FILE, and reports
// the first broken link. Exit 0 when it verifies, 1 when not.
import path from 'node:path';
import { loadConfig } from '../platform/config.js';
import { openDatabase } from '../platform/db/database.js';
import { verifyAuditChain } from '../platform/audit/verify.js';
import { readAnchors } from '../platform/audit/anchors.js';

const config = loadConfig();
const database = await openDatabase({
  databaseUrl: config.databaseUrl,
  dataDir: config.databaseUrl ? undefined : path.join(config.dataDir, 'db'),
});
try {
  const anchors = await readAnchors(config.auditAnchorFile);
  const result = await verifyAuditChain(database.db, { anchors });
  if (result.ok) {
    const latest = anchors.at(-1);
    console.log(
      `Audit trail verified: ${result.rowsChecked} events, chain intact; ` +
        (latest
          ? `checked against ${anchors.length} anchors in ${config.auditAnchorFile} (latest: event ${latest.id} at ${latest.at}).`
          : `no anchors in ${config.auditAnchorFile} yet (the server writes them every ${config.auditAnchorIntervalSeconds} s).`),
    );
  } else {
    console.error(
      `Audit trail BROKEN at event ${result.brokenAt?.id ?? '?'}: ${result.brokenAt?.problem ?? ''} (${result.rowsChecked} events verified before it).`,
    );
    process.exitCode = 1;
  }
} finally {
  await database.close();
}
