import { PassThrough } from 'node:stream';
import type { FastifyReply } from 'fastify';
import type { Compilable, Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { forEachBatch } from '../db/cursor.js';
import { write } from './streamOut.js';

/** Rows per cursor fetch of a JSON stream: rows are small (an annotation is ~150 bytes). */
const JSON_STREAM_BATCH = 5000;

/**
 * Answers a JSON document whose one large array is streamed from a database cursor: `head` is the
 * document up to and including the array's `[`, each row is one JSON value as text (the database
 * writes it: `json_build_object(…)::text`), `tail` closes the array and the document. Memory stays
 * at one batch; a client that goes away ends the cursor.
 */
export function sendJsonArray<R>(
  reply: FastifyReply,
  options: {
    head: string;
    tail: string;
    db: Kysely<DB>;
    query: Compilable<R>;
    json: (row: R) => string;
    contentType?: string;
    fileName?: string;
  },
): FastifyReply {
  const out = new PassThrough({ highWaterMark: 1024 * 1024 });
  reply
    .header('content-type', options.contentType ?? 'application/json; charset=utf-8')
    .header('cache-control', 'no-store');
  if (options.fileName) reply.header('content-disposition', `attachment; filename="${options.fileName}"`);
  void (async () => {
    await write(out, options.head);
    let first = true;
    await forEachBatch(
      options.db,
      options.query,
      async (rows) => {
        const text = rows.map(options.json).join(',');
        await write(out, first ? text : `,${text}`);
        first = false;
      },
      JSON_STREAM_BATCH,
    );
    await write(out, options.tail);
    out.end();
  })().catch((error: unknown) => {
    reply.log.warn({ err: error }, 'JSON stream ended early');
    out.destroy(error instanceof Error ? error : new Error(String(error)));
  });
  return reply.send(out);
}
