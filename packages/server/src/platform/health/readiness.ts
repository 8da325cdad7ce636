import { sql } from 'kysely';
import { READINESS_CHECKS, type ReadinessReport, type ReadinessCheck, type ReadinessCheckName } from '@lamina/domain';
import type { ServerRole } from '../config.js';
import type { Database } from '../db/database.js';
import { migrationFiles, pendingMigrations } from '../db/migrate.js';
import type { ObjectStorage } from '../storage/storage.js';

/** A check that has not answered within this long fails ('timed out'): a probe must not hang. */
export const READINESS_CHECK_TIMEOUT_MS = 3000;

export interface ReadinessDeps {
  database: Database;
  storage: Pick<ObjectStorage, 'ping'>;
  roles: ReadonlySet<ServerRole>;
  /** Where a failing check's real error goes (the response names only what failed). */
  log: { warn(object: object, message: string): void };
}

/**
 * Which checks a process with `roles` needs. Each role uses the database (api: everything; tiles:
 * the image rows and the live sessions; worker: jobs and results) on the current schema, and object
 * storage (api: signing and checking uploads, labels, downloads; tiles: pyramids; worker: originals
 * and pyramids); a role that did not would leave its check out here.
 */
const ROLE_CHECKS: Record<ServerRole, readonly ReadinessCheckName[]> = {
  api: ['database', 'migrations', 'storage'],
  tiles: ['database', 'migrations', 'storage'],
  worker: ['database', 'migrations', 'storage'],
};

function checksFor(roles: ReadonlySet<ServerRole>): ReadinessCheckName[] {
  const needed = new Set([...roles].flatMap((role) => ROLE_CHECKS[role]));
  return READINESS_CHECKS.filter((name) => needed.has(name));
}

class CheckFailed extends Error {}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new CheckFailed('timed out')), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/**
 * `GET /api/ready`: whether this process can do its roles' work now. Each check runs with a time
 * limit; concurrent probes share one evaluation, so a load balancer polling many times a second
 * costs one round of checks at a time. The body names what failed in a few fixed words: no
 * connection string, host, bucket or driver message (those are logged).
 */
export class Readiness {
  private readonly names: ReadinessCheckName[];
  private files: Promise<string[]> | null = null;
  private inFlight: Promise<ReadinessReport> | null = null;

  constructor(
    private readonly deps: ReadinessDeps,
    private readonly timeoutMs = READINESS_CHECK_TIMEOUT_MS,
  ) {
    this.names = checksFor(deps.roles);
  }

  evaluate(): Promise<ReadinessReport> {
    this.inFlight ??= this.run().finally(() => (this.inFlight = null));
    return this.inFlight;
  }

  private async run(): Promise<ReadinessReport> {
    const checks = await Promise.all(this.names.map((name) => this.check(name)));
    const failing = checks.filter((c) => !c.ok).map((c) => c.name);
    return {
      success: failing.length === 0,
      message: failing.length === 0 ? 'ready' : `not ready: ${failing.join(', ')}`,
      roles: [...this.deps.roles],
      checks,
    };
  }

  private async check(name: ReadinessCheckName): Promise<ReadinessCheck> {
    try {
      const message = await withTimeout(this.probe(name), this.timeoutMs);
      return { name, ok: true, message };
    } catch (error) {
      const message = error instanceof CheckFailed ? error.message : FAILED[name];
      this.deps.log.warn({ err: error, check: name }, `readiness check ${name} failed: ${message}`);
      return { name, ok: false, message };
    }
  }

  private async probe(name: ReadinessCheckName): Promise<string> {
    switch (name) {
      case 'database':
        await sql`select 1`.execute(this.deps.database.db);
        return 'ok';
      case 'migrations': {
        this.files ??= migrationFiles().catch((error: unknown) => {
          this.files = null;
          throw error;
        });
        const pending = await pendingMigrations(this.deps.database, await this.files);
        if (pending.length > 0)
          throw new CheckFailed(
            `${pending.length} migration${pending.length === 1 ? '' : 's'} not applied: ${pending.join(', ')}`,
          );
        return 'ok';
      }
      case 'storage':
        await this.deps.storage.ping();
        return 'ok';
    }
  }
}

/** What a check that threw says (the error itself is logged, never sent). */
const FAILED: Record<ReadinessCheckName, string> = {
  database: 'the database does not answer',
  migrations: 'the applied migrations could not be read',
  storage: 'the object storage does not answer',
};
