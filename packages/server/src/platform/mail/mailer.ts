import nodemailer, { type Transporter } from 'nodemailer';
import type { Db } from '../db/database.js';

export interface OutgoingMail {
  kind: string;
  studyId: number | null;
  userId: number | null;
  to: string;
  subject: string;
  body: string;
  createdBy: number | null;
}

/**
 * Text a user supplied, made safe for one line of a plain-text e-mail or a subject: line breaks,
 * tabs and other control characters become spaces (no injected lines or headers), runs of spaces
 * shrink to one, and it is cut at `max` characters.
 */
export function mailText(value: string, max = 200): string {
  const line = value
    // eslint-disable-next-line no-control-regex -- removing control characters is the point
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ')
    .replace(/ {2,}/g, ' ')
    .trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/**
 * The addresses of users, once each: usernames are e-mail addresses; an account without one is
 * reached through its organization's group address; neither → not reachable.
 */
export function mailAddresses(
  users: readonly { id: number; username: string; group_email: string | null }[],
): { userId: number; address: string }[] {
  const seen = new Set<string>();
  const out: { userId: number; address: string }[] = [];
  for (const user of users) {
    const address = user.username.includes('@') ? user.username : user.group_email;
    if (!address || seen.has(address.toLowerCase())) continue;
    seen.add(address.toLowerCase());
    out.push({ userId: user.id, address });
  }
  return out;
}

/** Attempts before a message is given up (status FAILED). */
const MAX_ATTEMPTS = 5;

/**
 * The outbox: notifications are rows of `mail_outbox`, written in the transaction of the action
 * that causes them. Delivery is by SMTP when SMTP_URL is set (nodemailer); without it the rows stay
 * as the record (status NOT_CONFIGURED). A failed delivery stays PENDING and is tried again by
 * `deliverPending()` (the worker runs it periodically) up to MAX_ATTEMPTS times.
 */
export class Mailer {
  private transport: Transporter | null;

  constructor(
    private readonly db: Db,
    smtpUrl: string | null,
    private readonly from: string,
  ) {
    this.transport = smtpUrl
      ? nodemailer.createTransport({
          url: smtpUrl,
          connectionTimeout: 5000,
          greetingTimeout: 5000,
          socketTimeout: 10_000,
        })
      : null;
  }

  get configured(): boolean {
    return this.transport !== null;
  }

  /** Rows to insert (inside the caller's transaction) for these messages. */
  outboxRows(messages: readonly OutgoingMail[]) {
    return messages.map((m) => ({
      kind: m.kind,
      study_id: m.studyId,
      user_id: m.userId,
      to_address: m.to,
      subject: m.subject,
      body: m.body,
      created_by: m.createdBy,
      status: this.configured ? ('PENDING' as const) : ('NOT_CONFIGURED' as const),
    }));
  }

  /** Delivers the given outbox rows now; returns how many were sent. Failures stay PENDING. */
  async deliver(ids: readonly number[]): Promise<{ sent: number; failed: number }> {
    if (!this.transport || ids.length === 0) return { sent: 0, failed: 0 };
    const rows = await this.db
      .selectFrom('mail_outbox')
      .select(['id', 'to_address', 'subject', 'body', 'attempts'])
      .where('id', 'in', [...ids])
      .where('status', '=', 'PENDING')
      .orderBy('id')
      .execute();
    let sent = 0;
    let failed = 0;
    for (const row of rows) {
      try {
        await this.transport.sendMail({ from: this.from, to: row.to_address, subject: row.subject, text: row.body });
        await this.db
          .updateTable('mail_outbox')
          .set({ status: 'SENT', sent_at: new Date(), attempts: row.attempts + 1, last_error: null })
          .where('id', '=', row.id)
          .execute();
        sent++;
      } catch (error) {
        failed++;
        const attempts = row.attempts + 1;
        await this.db
          .updateTable('mail_outbox')
          .set({
            attempts,
            last_error: (error instanceof Error ? error.message : String(error)).slice(0, 1000),
            status: attempts >= MAX_ATTEMPTS ? 'FAILED' : 'PENDING',
          })
          .where('id', '=', row.id)
          .execute();
      }
    }
    return { sent, failed };
  }

  /** Retries every pending message (oldest first, a batch at a time). */
  async deliverPending(limit = 100): Promise<{ sent: number; failed: number }> {
    if (!this.transport) return { sent: 0, failed: 0 };
    const rows = await this.db
      .selectFrom('mail_outbox')
      .select('id')
      .where('status', '=', 'PENDING')
      .orderBy('id')
      .limit(limit)
      .execute();
    return this.deliver(rows.map((r) => r.id));
  }

  close(): void {
    this.transport?.close();
  }
}
