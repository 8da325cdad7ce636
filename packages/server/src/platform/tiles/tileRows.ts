import { sql } from 'kysely';
import { SESSION_TTL_HOURS } from '@lamina/domain';
import type { Db } from '../db/database.js';
import { SESSION_REF_LENGTH } from './tileToken.js';

/** An image's pyramid, as the tile server needs it: where it is stored and the size it should have. */
export interface PyramidRow {
  cog_key: string | null;
  width: number | null;
  height: number | null;
}

/** A live session (not ended, within its lifetime, of an active user) and its user's access generation. */
export interface LiveSessionRow {
  /** The first SESSION_REF_LENGTH characters of the session's id: what a tile token names. */
  ref: string;
  user_id: number;
  access_generation: number;
}

/**
 * Everything a tile server reads from the database, and only that: an image's pyramid row (once per
 * image, modules/tiles/pyramidCache.ts) and the live sessions (every TILE_ACCESS_REFRESH seconds,
 * and once for a session logged in since: tileAccess.ts). A process on the database reads them
 * itself (`databaseTileRows`); the tile process `npm start` runs beside the embedded database asks
 * the process that owns it, over IPC (modules/tiles/tileProcess.ts).
 */
export interface TileRows {
  image(imageId: number): Promise<PyramidRow | undefined>;
  /** Every live session, or the one whose reference is `ref`. */
  liveSessions(ref?: string): Promise<LiveSessionRow[]>;
}

export function databaseTileRows(db: Db): TileRows {
  return {
    image: (imageId) =>
      db.selectFrom('images').select(['cog_key', 'width', 'height']).where('id', '=', imageId).executeTakeFirst(),
    liveSessions(ref) {
      let query = db
        .selectFrom('sessions')
        .innerJoin('users', 'users.id', 'sessions.user_id')
        .select([
          sql<string>`left(sessions.id, ${SESSION_REF_LENGTH})`.as('ref'),
          'sessions.user_id',
          'users.access_generation',
        ])
        .where('users.active', '=', true)
        .where('sessions.ended_at', 'is', null)
        .where('sessions.created_at', '>', sql<Date>`now() - make_interval(hours => ${SESSION_TTL_HOURS})`);
      if (ref !== undefined) query = query.where(sql<string>`left(sessions.id, ${SESSION_REF_LENGTH})`, '=', ref);
      return query.execute();
    },
  };
}
