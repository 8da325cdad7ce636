import { CompiledQuery, type Transaction } from 'kysely';
import {
  IMAGE_MESSAGES,
  MESSAGES,
  roleByName,
  unsupportedFileType,
  hasImageExtension,
  type CreateImageRequest,
} from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import type { DB } from '../../platform/db/schema.js';
import type { Principal } from '../../platform/auth/principal.js';
import { recordAudit, type Actor } from '../../platform/audit/audit.js';
import { BadRequestError, ConflictError, NotFoundError } from '../../platform/errors.js';
import { canSeeStudy, VIEW_ALL_STUDIES } from '../../platform/rbac/studyScope.js';
import { studyIdOfUploadKey } from '../../platform/storage/keys.js';
import type { ObjectStorage } from '../../platform/storage/storage.js';
import { QUEUES, type JobQueue } from '../../platform/jobs/jobQueue.js';
import type { Mailer, OutgoingMail } from '../../platform/mail/mailer.js';
import { IMAGE_VIEW_COLUMNS, type ImageViewRow } from './imagePresenter.js';

/** pg-boss's `db` option bound to a Kysely transaction: the job is enqueued atomically with the row. */
function inTransaction(tx: Transaction<DB>) {
  return {
    executeSql: async (text: string, values: unknown[]) => ({
      rows: (await tx.executeQuery(CompiledQuery.raw(text, values))).rows,
    }),
  };
}

export interface ImageServiceDeps {
  db: Db;
  storage: ObjectStorage;
  jobs: JobQueue;
  mailer: Mailer;
}

/** Images: registration of uploads (and replacement), reads with study scope, notifications. */
export class ImageService {
  constructor(private readonly deps: ImageServiceDeps) {}

  /**
   * The image when the principal may see it; otherwise 404 'Image not found' (a user does not learn
   * that images of other studies exist). Images without a study are visible with the view-all
   * studies permission only.
   */
  async visibleImage(principal: Principal, imageId: number): Promise<ImageViewRow> {
    const row = await this.deps.db
      .selectFrom('images')
      .select(IMAGE_VIEW_COLUMNS)
      .where('images.id', '=', imageId)
      .executeTakeFirst();
    if (!row) throw new NotFoundError(IMAGE_MESSAGES.imageNotFound);
    const visible =
      row.study_id === null
        ? principal.actions.has(VIEW_ALL_STUDIES)
        : await canSeeStudy(this.deps.db, principal, row.study_id);
    if (!visible) throw new NotFoundError(IMAGE_MESSAGES.imageNotFound);
    return row;
  }

  /** POST /api/images: the upload exists and belongs to the study; the row is created and processing enqueued. */
  async register(principal: Principal, actor: Actor, request: CreateImageRequest): Promise<ImageViewRow> {
    const { db, storage, jobs } = this.deps;
    const { name, s3Key, studyId } = request;
    if (studyIdOfUploadKey(s3Key) !== studyId) throw new BadRequestError(IMAGE_MESSAGES.uploadNotInStudy);
    const fileName = s3Key.split('/').pop() ?? s3Key;
    if (!hasImageExtension(fileName)) throw new BadRequestError(unsupportedFileType(fileName));
    const head = await storage.head(s3Key);
    if (!head) throw new NotFoundError(IMAGE_MESSAGES.uploadNotFound);

    await jobs.start(); // the queue's schema exists before the transaction enqueues into it
    const id = await db.transaction().execute(async (tx) => {
      const already = await tx
        .selectFrom('images')
        .select('id')
        .where('s3_key', '=', s3Key)
        .where('status', '!=', 'ARCHIVED')
        .executeTakeFirst();
      if (already) throw new ConflictError('This upload is already registered as an image');

      let replaced: { id: number; case_id: number | null; status: string } | undefined;
      if (request.imageToReplaceId) {
        replaced = await tx
          .selectFrom('images')
          .select(['id', 'case_id', 'status'])
          .where('id', '=', request.imageToReplaceId)
          .where('study_id', '=', studyId)
          .forUpdate()
          .executeTakeFirst();
        if (!replaced) throw new NotFoundError(IMAGE_MESSAGES.imageToReplaceNotFound);
        if (replaced.status === 'ARCHIVED') throw new ConflictError(IMAGE_MESSAGES.imageToReplaceArchived);
      }

      const image = await tx
        .insertInto('images')
        .values({
          study_id: studyId,
          case_id: replaced?.case_id ?? null,
          name,
          s3_key: s3Key,
          uploader_id: principal.id,
          organization_id: principal.organizationId,
          status: 'PROCESSING',
          processing_status: 'PENDING',
          size_bytes: head.size,
          replaces_image_id: replaced?.id ?? null,
        })
        .returning('id')
        .executeTakeFirstOrThrow();

      const events: Parameters<typeof recordAudit>[2][number][] = [
        {
          action: 'IMAGE_UPLOADED',
          entityType: 'image',
          entityId: image.id,
          studyId,
          newValue: { name, s3Key, size: head.size },
        },
      ];
      if (replaced) {
        await tx
          .updateTable('images')
          .set({ status: 'ARCHIVED', updated_at: new Date() })
          .where('id', '=', replaced.id)
          .execute();
        events.push(
          {
            action: 'IMAGE_REPLACED',
            entityType: 'image',
            entityId: image.id,
            studyId,
            field: 'replaces_image_id',
            newValue: replaced.id,
          },
          {
            action: 'IMAGE_ARCHIVED',
            entityType: 'image',
            entityId: replaced.id,
            studyId,
            field: 'status',
            oldValue: replaced.status,
            newValue: 'ARCHIVED',
            reason: `Replaced by image ${image.id}`,
          },
        );
        if (replaced.case_id !== null) {
          events.push({
            action: 'IMAGE_CASE_ASSIGNED',
            entityType: 'image',
            entityId: image.id,
            studyId,
            field: 'case_id',
            newValue: replaced.case_id,
            reason: `Replaces image ${replaced.id}`,
          });
        }
      }
      await recordAudit(tx, actor, events);
      await jobs.send(QUEUES.imageProcessing, { imageId: image.id }, { db: inTransaction(tx) });
      return image.id;
    });
    return db.selectFrom('images').select(IMAGE_VIEW_COLUMNS).where('images.id', '=', id).executeTakeFirstOrThrow();
  }

  /** The study's admins: StudyAdmins, and ISCs with access to the study; one address each. */
  async studyAdminAddresses(studyId: number): Promise<{ userId: number; address: string }[]> {
    const rows = await this.deps.db
      .selectFrom('users')
      .leftJoin('organizations', 'organizations.id', 'users.organization_id')
      .select(['users.id', 'users.username', 'organizations.group_email'])
      .where('users.active', '=', true)
      .where('users.registered', '=', true)
      .where((eb) =>
        eb.or([
          eb.exists(
            eb
              .selectFrom('user_roles')
              .select('user_roles.user_id')
              .whereRef('user_roles.user_id', '=', 'users.id')
              .where('user_roles.role_id', '=', roleByName('StudyAdmin').id),
          ),
          eb.exists(
            eb
              .selectFrom('study_access')
              .select('study_access.user_id')
              .whereRef('study_access.user_id', '=', 'users.id')
              .where('study_access.study_id', '=', studyId)
              .where('study_access.role_id', '=', roleByName('ISC').id),
          ),
        ]),
      )
      .orderBy('users.id')
      .execute();
    const seen = new Set<string>();
    const out: { userId: number; address: string }[] = [];
    for (const row of rows) {
      // Usernames are e-mail addresses; accounts without one are reached through their organization's group address.
      const address = row.username.includes('@') ? row.username : row.group_email;
      if (!address || seen.has(address.toLowerCase())) continue;
      seen.add(address.toLowerCase());
      out.push({ userId: row.id, address });
    }
    return out;
  }

  /** POST /api/images/notify-upload: an outbox message per study admin, delivered now when SMTP is set. */
  async notifyUpload(
    principal: Principal,
    actor: Actor,
    studyId: number,
    numFiles: number,
    failures: number | string[],
  ) {
    const { db, mailer } = this.deps;
    const study = await db.selectFrom('studies').select(['id', 'name']).where('id', '=', studyId).executeTakeFirst();
    if (!study) throw new NotFoundError(MESSAGES.studyNotFound);
    const failureCount = Array.isArray(failures) ? failures.length : failures;
    const who = [principal.firstName, principal.lastName].filter(Boolean).join(' ') || principal.username;
    const subject = `[Lamina] ${numFiles} image${numFiles === 1 ? '' : 's'} uploaded to ${study.name}`;
    const lines = [
      `${who} (${principal.organizationName ?? 'no organization'}) uploaded ${numFiles} image file${numFiles === 1 ? '' : 's'} to the study ${study.name}.`,
      failureCount > 0
        ? `${failureCount} file${failureCount === 1 ? '' : 's'} failed to upload.`
        : 'All files were uploaded.',
      ...(Array.isArray(failures) && failures.length > 0 ? ['', 'Failed:', ...failures.map((f) => `  - ${f}`)] : []),
      '',
      'The images are being processed and will appear in the study once ready.',
    ];
    const recipients = await this.studyAdminAddresses(studyId);
    const messages: OutgoingMail[] = recipients.map((r) => ({
      kind: 'UPLOAD_NOTIFICATION',
      studyId,
      userId: r.userId,
      to: r.address,
      subject,
      body: lines.join('\n'),
      createdBy: principal.id,
    }));
    const ids = await db.transaction().execute(async (tx) => {
      const inserted =
        messages.length > 0
          ? await tx.insertInto('mail_outbox').values(mailer.outboxRows(messages)).returning('id').execute()
          : [];
      await recordAudit(tx, actor, [
        {
          action: 'UPLOAD_NOTIFIED',
          entityType: 'study',
          entityId: studyId,
          studyId,
          newValue: { numFiles, failures: failureCount, recipients: recipients.length },
        },
      ]);
      return inserted.map((r) => r.id);
    });
    const delivery = await mailer.deliver(ids);
    return {
      recipients: recipients.length,
      sent: delivery.sent,
      failed: delivery.failed,
      emailConfigured: mailer.configured,
    };
  }
}
