import { CompiledQuery, type Compilable, type Kysely, type Transaction } from 'kysely';
import type { DB } from './schema.js';

/** Rows fetched per round trip of an export. */
export const CURSOR_BATCH = 1000;

/**
 * Reads a query's rows through a server-side cursor (`DECLARE … NO SCROLL CURSOR`, `FETCH FORWARD`)
 * in a read-only transaction, one batch at a time: memory stays bounded by one batch however many
 * rows there are, and the rows are one snapshot. The same on PostgreSQL and embedded PGlite (where
 * the export holds the one connection while it runs). `onBatch` may wait (a slow client's
 * back-pressure); the cursor waits with it. It gets the cursor's transaction too: any query it
 * makes must go there (on PGlite another would wait for the connection the cursor holds).
 */
export async function forEachBatch<R>(
  db: Kysely<DB>,
  query: Compilable<R>,
  onBatch: (rows: R[], tx: Transaction<DB>) => Promise<void>,
  batchSize = CURSOR_BATCH,
): Promise<void> {
  const compiled = query.compile();
  await db.transaction().execute(async (tx) => {
    await tx.executeQuery(CompiledQuery.raw('set transaction read only'));
    await tx.executeQuery(
      CompiledQuery.raw(`declare lamina_export no scroll cursor for ${compiled.sql}`, [...compiled.parameters]),
    );
    for (;;) {
      const { rows } = await tx.executeQuery<R>(CompiledQuery.raw(`fetch forward ${batchSize} from lamina_export`));
      if (rows.length > 0) await onBatch(rows, tx);
      if (rows.length < batchSize) break;
    }
    await tx.executeQuery(CompiledQuery.raw('close lamina_export'));
  });
}
