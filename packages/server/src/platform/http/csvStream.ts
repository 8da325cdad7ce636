import { PassThrough } from 'node:stream';
import type { FastifyReply } from 'fastify';
import type { Compilable, Kysely } from 'kysely';
import { CSV_BOM, csvLine, type CsvValue } from '@lamina/domain';
import type { DB } from '../db/schema.js';
import { forEachBatch } from '../db/cursor.js';
import { write } from './streamOut.js';

/** A row's line of the file (`cells`), or its lines (`lines`: a row that stands for several, e.g. a case). */
type CsvRows<R> =
  | { cells: (row: R) => readonly CsvValue[]; lines?: never }
  | { lines: (row: R) => readonly (readonly CsvValue[])[]; cells?: never };

/**
 * Answers a CSV download streamed from a database cursor (forEachBatch): the header line, then one
 * line per row (or the lines of each row), written as the client reads — memory stays at one batch,
 * and a client that goes away ends the cursor (and its transaction). `fileName` must be plain ASCII.
 */
export function sendCsv<R>(
  reply: FastifyReply,
  options: {
    fileName: string;
    header: readonly string[];
    db: Kysely<DB>;
    query: Compilable<R>;
    /** Called with each batch before its cells are taken, in the cursor's transaction (bulk look-ups). */
    prepare?: (rows: R[], db: Kysely<DB>) => Promise<void>;
  } & CsvRows<R>,
): FastifyReply {
  const text = (row: R): string =>
    options.lines ? options.lines(row).map(csvLine).join('') : csvLine(options.cells(row));
  const out = new PassThrough({ highWaterMark: 256 * 1024 });
  reply
    .header('content-type', 'text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${options.fileName}"`)
    .header('cache-control', 'no-store');
  void (async () => {
    await write(out, CSV_BOM + csvLine(options.header));
    await forEachBatch(options.db, options.query, async (rows, tx) => {
      await options.prepare?.(rows, tx);
      await write(out, rows.map(text).join(''));
    });
    out.end();
  })().catch((error: unknown) => {
    reply.log.warn({ err: error }, 'CSV export ended early');
    out.destroy(error instanceof Error ? error : new Error(String(error)));
  });
  return reply.send(out);
}
