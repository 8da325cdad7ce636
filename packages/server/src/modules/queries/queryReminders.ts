import { sql } from 'kysely';
import { queryReasonText } from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import { recordAudit, SYSTEM_ACTOR } from '../../platform/audit/audit.js';
import { QUEUES, type JobQueue } from '../../platform/jobs/jobQueue.js';
import { mailAddresses, mailText, type Mailer } from '../../platform/mail/mailer.js';
import { usersOfRoleInStudy } from './queryQueries.js';

export interface ReminderDeps {
  db: Db;
  mailer: Mailer;
  /** Where the product is reached, for the link in the e-mail. */
  publicUrl: string;
  log?: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void } | undefined;
}

/** Queries handled per sweep (the next sweep takes the rest). */
const SWEEP_LIMIT = 200;

/**
 * The reminder sweep (issue 15): every open, unanswered query whose latest follow-up date has come
 * and whose reminder has not been sent gets one e-mail, to the users of the role the query is with
 * in its study (to the one reader a query to a reading role names), and its reminder is marked sent — in one transaction with the outbox row and the
 * audit row, with the reminders locked SKIP LOCKED, so two sweeps (two worker processes) never
 * send the same reminder twice. Delivery follows the commit (the outbox retries failures).
 */
export async function sendDueReminders(deps: ReminderDeps): Promise<{ queries: number; sent: number }> {
  const { db, mailer } = deps;
  const outbox = await db.transaction().execute(async (tx) => {
    const due = await tx
      .selectFrom('query_reminders as r')
      .innerJoin('queries as q', 'q.last_reminder_id', 'r.id')
      .innerJoin('studies as s', 's.id', 'q.study_id')
      .leftJoin('cases as c', 'c.id', 'q.case_id')
      .leftJoin('roles as role', 'role.id', 'q.with_role_id')
      .select([
        'r.id as reminder_id',
        'r.follow_up_on',
        'q.id',
        'q.object_type',
        'q.object_id',
        'q.study_id',
        'q.case_id',
        'q.with_role_id',
        'q.with_user_id',
        'q.reason_text',
        'q.child_reason_text',
        'q.opened_at',
        's.name as study_name',
        'c.proc_id',
        'role.display_name as role_name',
      ])
      .where('r.reminded_on', 'is', null)
      .where('r.follow_up_on', '<=', sql<string>`current_date`)
      .where('q.query_status', '=', 'OPEN')
      .where('q.resolution', 'is', null)
      .orderBy('r.follow_up_on')
      .orderBy('r.id')
      .limit(SWEEP_LIMIT)
      .forUpdate('r')
      .skipLocked()
      .execute();
    const ids: number[] = [];
    for (const q of due) {
      // A query sent to one reader reminds that reader only (issue 26), never the role's others.
      const recipients =
        q.with_role_id === null
          ? []
          : mailAddresses(await usersOfRoleInStudy(tx, q.with_role_id, q.study_id, q.with_user_id));
      const about =
        q.object_type === 'CASE'
          ? `case ${mailText(q.proc_id ?? `#${q.object_id}`)}`
          : `image #${q.object_id}${q.proc_id ? ` of case ${mailText(q.proc_id)}` : ''}`;
      const link =
        q.object_type === 'CASE'
          ? `${deps.publicUrl}/studies/${q.study_id}/cases/${q.object_id}?queryId=${q.id}`
          : `${deps.publicUrl}/studies/${q.study_id}/images/${q.object_id}?queryId=${q.id}`;
      if (recipients.length > 0) {
        const row = await tx
          .insertInto('mail_outbox')
          .values(
            mailer.outboxRows([
              {
                kind: 'QUERY_REMINDER',
                studyId: q.study_id,
                userId: null,
                to: recipients.map((r) => r.address).join(', '),
                subject: `[Lamina] Query ${q.id} is due for follow-up: ${mailText(q.study_name)}`,
                body: [
                  `The query ${q.id} on ${about} in the study ${mailText(q.study_name)} is with ${mailText(q.role_name ?? 'your role')} and its follow-up date (${q.follow_up_on}) has come.`,
                  '',
                  `Reason: ${mailText(queryReasonText({ reasonText: q.reason_text, childReasonText: q.child_reason_text }) ?? '—')}`,
                  `Opened: ${q.opened_at.toISOString().slice(0, 10)}`,
                  '',
                  `Open it: ${link}`,
                ].join('\n'),
                createdBy: null,
              },
            ]),
          )
          .returning('id')
          .executeTakeFirstOrThrow();
        ids.push(row.id);
      }
      await tx
        .updateTable('query_reminders')
        .set({ reminded_on: new Date() })
        .where('id', '=', q.reminder_id)
        .execute();
      await recordAudit(tx, SYSTEM_ACTOR, [
        {
          action: 'QUERY_REMINDER_SENT',
          entityType: 'query',
          entityId: q.id,
          studyId: q.study_id,
          field: 'reminder',
          newValue: { reminderId: q.reminder_id, followUpOn: q.follow_up_on, recipients: recipients.length },
        },
      ]);
    }
    return { ids, queries: due.length };
  });
  const delivery = await mailer.deliver(outbox.ids);
  if (outbox.queries > 0) deps.log?.info({ queries: outbox.queries, sent: delivery.sent }, 'query reminders sent');
  return { queries: outbox.queries, sent: delivery.sent };
}

/**
 * Worker processes: the sweep as a pg-boss cron job (QUERY_REMINDER_CRON, UTC) and its worker.
 * pg-boss sends one job per tick whatever number of processes keep the schedule.
 */
export async function startQueryReminders(deps: ReminderDeps & { jobs: JobQueue; cron: string }): Promise<void> {
  await deps.jobs.schedule(QUEUES.queryReminders, deps.cron);
  await deps.jobs.work(QUEUES.queryReminders, async () => {
    await sendDueReminders(deps);
  });
}
