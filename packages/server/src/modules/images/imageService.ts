import type { Readable } from 'node:stream';
import { sql } from 'kysely';
import type { z } from 'zod';
import {
  IMAGE_MESSAGES,
  MESSAGES,
  NOTIFY_UPLOAD_LIMIT,
  VIEW_FILE_NAME_PERMISSION,
  mayViewLabel,
  roleByName,
  type StudyImageSortKey,
  type studyImageListQuerySchema,
} from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import type { Principal } from '../../platform/auth/principal.js';
import { recordAudit, type Actor } from '../../platform/audit/audit.js';
import { ConflictError, ForbiddenError, NotFoundError, TooManyRequestsError } from '../../platform/errors.js';
import { checkObject } from '../../platform/storage/integrity.js';
import type { ObjectStorage } from '../../platform/storage/storage.js';
import { mailAddresses, mailText, type Mailer, type OutgoingMail } from '../../platform/mail/mailer.js';
import type { ImageViewRow } from './imagePresenter.js';
import { pageWindow, parseSort } from '../../platform/db/paging.js';
import { listStudyImages, selectImageView } from './imageQueries.js';

/** Advisory lock class of the upload-notification limit (the second key is the user id). */
const NOTIFY_LOCK = 727_003;

export interface ImageServiceDeps {
  db: Db;
  storage: ObjectStorage;
  mailer: Mailer;
}

/**
 * Images: the viewer's Image, the study page's Images tab (what it may search and sort by), the
 * signed download of the original, the upload notification. The registration of an upload (which
 * may replace an image, with its queries) is a command (commands/registerImage.ts).
 */
export class ImageService {
  constructor(private readonly deps: ImageServiceDeps) {}

  /**
   * The viewer's Image row. The route's scope (imageScope) has already checked that the user may
   * see it; a row deleted in between is 404 'Image not found' all the same.
   */
  async image(imageId: number): Promise<ImageViewRow> {
    const row = await selectImageView(this.deps.db).where('images.id', '=', imageId).executeTakeFirst();
    if (!row) throw new NotFoundError(IMAGE_MESSAGES.imageNotFound);
    return row;
  }

  /**
   * GET /api/studies/{id}/images: one page of the study's Images tab. Without the file-name
   * permission, names are neither searched nor sorted by: the order or the matches would reveal
   * what the neutral labels hide (the list falls back to the newest first).
   */
  async studyImages(principal: Principal, studyId: number, query: z.output<typeof studyImageListQuerySchema>) {
    const { name, hasQueries, isUnassigned, page, pageSize, sort } = query;
    const fileNames = principal.actions.has(VIEW_FILE_NAME_PERMISSION);
    const parsed = parseSort<StudyImageSortKey>(sort);
    const { key, descending } =
      fileNames || parsed.key !== 'name' ? parsed : parseSort<StudyImageSortKey>('-uploadedAt');
    return listStudyImages(this.deps.db, {
      studyId,
      name: (fileNames && name?.trim()) || undefined,
      hasQueries: hasQueries === 'true',
      isUnassigned: isUnassigned === 'true',
      sort: key,
      descending,
      ...pageWindow(page, pageSize),
    });
  }

  /**
   * GET /api/images/{id}/label and /macro: the stored picture, only for users who may view labels
   * (they can carry patient identifiers; Site only of its own organization's uploads).
   */
  async labelPicture(
    principal: Principal,
    imageId: number,
    kind: 'label' | 'macro',
  ): Promise<{ size: number; stream: Readable }> {
    const { storage } = this.deps;
    const row = await this.image(imageId);
    if (!mayViewLabel(principal.actions, { organizationId: row.organization_id }, principal.organizationId))
      throw new ForbiddenError();
    const key = kind === 'label' ? row.label_key : row.macro_key;
    const head = key ? await storage.head(key) : null;
    if (!key || !head)
      throw new NotFoundError(kind === 'label' ? IMAGE_MESSAGES.labelNotFound : IMAGE_MESSAGES.macroNotFound);
    return { size: head.size, stream: await storage.createReadStream(key) };
  }

  /**
   * GET /api/signed-urls/image/{id}: a signed download URL of the original, audited. The original
   * must still have the SHA-256 recorded when it was processed (re-hashed only when its storage
   * version changed): a replaced or damaged file is never handed out, and the refusal is audited.
   */
  async downloadUrl(actor: Actor, imageId: number, ttlSeconds: number): Promise<string> {
    const { db, storage } = this.deps;
    const row = await this.image(imageId);
    const recorded = await db
      .selectFrom('images')
      .select(['content_sha256', 'original_version'])
      .where('id', '=', imageId)
      .executeTakeFirstOrThrow();
    if (!(await storage.head(row.s3_key))) throw new NotFoundError(IMAGE_MESSAGES.couldNotDownload);
    if (recorded.content_sha256) {
      const check = await checkObject(storage, row.s3_key, {
        sha256: recorded.content_sha256,
        version: recorded.original_version,
      });
      if (check.state !== 'ok') {
        await db.transaction().execute((tx) =>
          recordAudit(tx, actor, [
            {
              action: 'IMAGE_INTEGRITY_FAILED',
              entityType: 'image',
              entityId: imageId,
              studyId: row.study_id,
              field: 'content_sha256',
              oldValue: recorded.content_sha256,
              newValue: check.state === 'mismatch' ? check.actual : null,
              reason: check.state === 'missing' ? 'The original is missing from storage' : 'Checked on download',
            },
          ]),
        );
        throw new ConflictError(IMAGE_MESSAGES.integrityFailed);
      }
      if (check.rehashed) {
        await db.updateTable('images').set({ original_version: check.version }).where('id', '=', imageId).execute();
      }
    }
    const url = await storage.signedGetUrl(row.s3_key, ttlSeconds, row.name);
    await db.transaction().execute((tx) =>
      recordAudit(tx, actor, [
        {
          action: 'IMAGE_DOWNLOADED',
          entityType: 'image',
          entityId: row.id,
          studyId: row.study_id,
          newValue: row.name,
        },
      ]),
    );
    return url;
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
    return mailAddresses(rows);
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
    // Every text a user supplied is one clean line (mailText): no injected lines or headers.
    const who = mailText([principal.firstName, principal.lastName].filter(Boolean).join(' ') || principal.username);
    const studyName = mailText(study.name);
    const listed = Array.isArray(failures) ? failures.slice(0, 100).map((f) => `  - ${mailText(f)}`) : [];
    if (Array.isArray(failures) && failures.length > listed.length)
      listed.push(`  … and ${failures.length - listed.length} more`);
    const subject = `[Lamina] ${numFiles} image${numFiles === 1 ? '' : 's'} uploaded to ${studyName}`;
    const lines = [
      `${who} (${mailText(principal.organizationName ?? 'no organization')}) uploaded ${numFiles} image file${numFiles === 1 ? '' : 's'} to the study ${studyName}.`,
      failureCount > 0
        ? `${failureCount} file${failureCount === 1 ? '' : 's'} failed to upload.`
        : 'All files were uploaded.',
      ...(listed.length > 0 ? ['', 'Failed:', ...listed] : []),
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
      // At most NOTIFY_UPLOAD_LIMIT per user and window, counted from the audit trail under a
      // per-user lock, so concurrent requests (on any process) cannot slip past the limit.
      await sql`select pg_advisory_xact_lock(${NOTIFY_LOCK}, ${principal.id})`.execute(tx);
      const recent = await tx
        .selectFrom('audit_events')
        .select(sql<number>`count(*)::int`.as('n'))
        .where('user_id', '=', principal.id)
        .where('action', '=', 'UPLOAD_NOTIFIED')
        .where('occurred_at', '>', sql<Date>`now() - make_interval(mins => ${NOTIFY_UPLOAD_LIMIT.windowMinutes})`)
        .executeTakeFirstOrThrow();
      if (recent.n >= NOTIFY_UPLOAD_LIMIT.perUser) throw new TooManyRequestsError(IMAGE_MESSAGES.tooManyNotifications);
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
