import { appendFile, mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Db } from '../db/database.js';
import { readAuditHead } from './audit.js';

/**
 * Audit anchors: the head of the audit chain (last id and hash), copied outside the database.
 *
 * The hash chain shows an altered, inserted or deleted row inside the chain, but not rows cut from
 * its end, nor a chain rewritten from some row on by someone who can disable the trigger and
 * recompute every later hash. An anchor written elsewhere (a file, the log) pins what the chain
 * held at that moment: the verifier then refuses a chain that is shorter than an anchor, or whose
 * row at an anchored id has another hash. Point `AUDIT_ANCHOR_FILE` at storage the database owner
 * cannot rewrite (another host, a WORM bucket mount) to make the anchors independent.
 */
export interface AuditAnchor {
  id: number;
  hash: string;
  /** When the anchor was taken (ISO 8601). */
  at: string;
}

/** The anchors of a JSON-lines file; a missing file is no anchors; an unreadable line is an error. */
export async function readAnchors(file: string): Promise<AuditAnchor[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line, index) => {
      const value = JSON.parse(line) as Partial<AuditAnchor>;
      if (typeof value.id !== 'number' || typeof value.hash !== 'string' || typeof value.at !== 'string') {
        throw new Error(`${file}:${index + 1} is not an audit anchor`);
      }
      return { id: value.id, hash: value.hash, at: value.at };
    });
}

export interface AnchorWriterOptions {
  file: string;
  /** Seconds between looks at the head. */
  intervalSeconds: number;
  log?: { info(obj: object, msg?: string): void; error(obj: object, msg?: string): void };
}

/**
 * Appends the chain's head to the anchor file (and the log) whenever it moved since the last
 * anchor: at start, every `intervalSeconds`, and at stop.
 */
export class AuditAnchorWriter {
  private lastId: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly options: AnchorWriterOptions,
  ) {}

  /** Writes an anchor when the head moved; answers the anchor written, or null. */
  async anchorNow(): Promise<AuditAnchor | null> {
    const head = await readAuditHead(this.db);
    if (!head || head.id === this.lastId) return null;
    const anchor: AuditAnchor = { id: head.id, hash: head.hash, at: new Date().toISOString() };
    await mkdir(path.dirname(this.options.file), { recursive: true });
    await appendFile(this.options.file, `${JSON.stringify(anchor)}\n`, { mode: 0o600 });
    this.lastId = head.id;
    this.options.log?.info({ auditAnchor: anchor }, 'audit chain head anchored');
    return anchor;
  }

  async start(): Promise<void> {
    const anchors = await readAnchors(this.options.file).catch(() => []);
    this.lastId = anchors.at(-1)?.id ?? null;
    await this.tick();
    this.timer = setInterval(() => void this.tick(), this.options.intervalSeconds * 1000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
    await this.tick();
  }

  private tick(): Promise<unknown> {
    this.running = this.running.then(() =>
      this.anchorNow().catch((error: unknown) => this.options.log?.error({ err: error }, 'audit anchor not written')),
    );
    return this.running;
  }
}
