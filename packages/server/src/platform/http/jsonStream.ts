import { PassThrough } from 'node:stream';
import type { FastifyReply } from 'fastify';
import type { Compilable, Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { forEachBatch } from '../db/cursor.js';
import { write } from './streamOut.js';

/** Rows per cursor fetch of a JSON array stream: rows are small (a feature is ~200 bytes). */
const JSON_STREAM_BATCH = 5000;

export interface JsonStreamOptions {
  contentType?: string;
  /** Sent as an attachment with this (plain ASCII) name. */
  fileName?: string;
}

/**
 * Answers a JSON document written in parts as `produce` makes them (`emit` waits while the client
 * is behind): memory stays at one part, and a client that goes away ends the producer (its next
 * emit throws). The producer writes the whole document, separators included.
 */
export function sendJsonStream(
  reply: FastifyReply,
  produce: (emit: (text: string) => Promise<void>) => Promise<void>,
  options: JsonStreamOptions = {},
): FastifyReply {
  const out = new PassThrough({ highWaterMark: 1024 * 1024 });
  reply
    .header('content-type', options.contentType ?? 'application/json; charset=utf-8')
    .header('cache-control', 'no-store');
  if (options.fileName) reply.header('content-disposition', `attachment; filename="${options.fileName}"`);
  void produce((text) => write(out, text))
    .then(() => out.end())
    .catch((error: unknown) => {
      reply.log.warn({ err: error }, 'JSON stream ended early');
      out.destroy(error instanceof Error ? error : new Error(String(error)));
    });
  return reply.send(out);
}

/**
 * A JSON document whose one large array is read from a database cursor: `head` is the document up
 * to and including the array's `[`, each row becomes one JSON value (`json`), `tail` closes it.
 */
export function sendJsonArray<R>(
  reply: FastifyReply,
  options: JsonStreamOptions & {
    head: string;
    tail: string;
    db: Kysely<DB>;
    query: Compilable<R>;
    json: (row: R) => string;
  },
): FastifyReply {
  return sendJsonStream(
    reply,
    async (emit) => {
      await emit(options.head);
      let first = true;
      await forEachBatch(
        options.db,
        options.query,
        async (rows) => {
          const text = rows.map(options.json).join(',');
          await emit(first ? text : `,${text}`);
          first = false;
        },
        JSON_STREAM_BATCH,
      );
      await emit(options.tail);
    },
    options,
  );
}
