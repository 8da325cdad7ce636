import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { TileRows } from './tileRows.js';
import type { TileClaims } from './tileToken.js';

interface LiveSession {
  userId: number;
  generation: number;
}

/**
 * Whether a tile token's grant still stands, answered from memory: the live sessions (not ended,
 * within their absolute lifetime, of an active user) with their users' access generations, read
 * from the database at start and every `refreshMs`. A token is honoured while its session is live
 * and the user's generation is the one it was issued with. So a logout, a deactivation (which ends
 * every session) or a lost study access / work-as switch (which bump the generation) stop a token
 * within `refreshMs` plus one query, and no tile costs a database round trip.
 *
 * A session the last refresh did not see (logged in since) is looked up once, then remembered
 * until the next refresh. Idle expiry does not end tiles: panning a slide for an hour sends only
 * tile requests. When refreshes keep failing, what was read goes stale after three intervals and
 * every token is looked up again (and refused while the database cannot answer).
 */
export class TileAccess {
  private live = new Map<string, LiveSession | null>();
  private refreshedAt = 0;
  private timer: NodeJS.Timeout | null = null;
  private readonly lookups = new Map<string, Promise<LiveSession | null>>();

  /** @param rows where the live sessions are read (the database, or the process that owns it). */
  constructor(
    private readonly rows: Pick<TileRows, 'liveSessions'>,
    readonly refreshMs = 15_000,
    private readonly log?: { warn(obj: object, msg?: string): void },
  ) {}

  async start(): Promise<void> {
    await this.refresh().catch((error: unknown) => this.log?.warn({ err: error }, 'tile access refresh failed'));
    this.timer ??= setInterval(() => {
      void this.refresh().catch((error: unknown) => this.log?.warn({ err: error }, 'tile access refresh failed'));
    }, this.refreshMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Reads every live session (one query). */
  async refresh(): Promise<void> {
    const startedAt = Date.now();
    const rows = await this.rows.liveSessions();
    const live = new Map<string, LiveSession | null>();
    for (const row of rows) live.set(row.ref, { userId: row.user_id, generation: row.access_generation });
    this.live = live;
    this.refreshedAt = startedAt;
  }

  private get fresh(): boolean {
    return Date.now() - this.refreshedAt < 3 * this.refreshMs;
  }

  /** True or false from memory; a promise when the session must be looked up first. */
  check(claims: TileClaims): boolean | Promise<boolean> {
    const honoured = (session: LiveSession | null) =>
      session !== null && session.userId === claims.userId && session.generation === claims.generation;
    if (this.fresh) {
      const known = this.live.get(claims.sessionRef);
      if (known !== undefined) return honoured(known);
    }
    return this.lookup(claims.sessionRef).then(honoured, () => false);
  }

  private lookup(ref: string): Promise<LiveSession | null> {
    const pending = this.lookups.get(ref);
    if (pending) return pending;
    const looked = this.rows
      .liveSessions(ref)
      .then((rows) => {
        const row = rows[0];
        const session = row ? { userId: row.user_id, generation: row.access_generation } : null;
        if (this.fresh) this.live.set(ref, session);
        return session;
      })
      .finally(() => this.lookups.delete(ref));
    this.lookups.set(ref, looked);
    return looked;
  }
}

/** Bumps a user's access generation (in the caller's transaction): their tile tokens stop. */
export async function revokeTileAccess(db: Db, userId: number): Promise<void> {
  await db
    .updateTable('users')
    .set({ access_generation: sql<number>`access_generation + 1` })
    .where('id', '=', userId)
    .execute();
}
