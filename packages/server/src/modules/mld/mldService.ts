import type { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import type { z } from 'zod';
import {
  IMAGE_MESSAGES,
  MLD_CSV_HEADER,
  MLD_IMPORT_MESSAGES,
  MLD_MAX_BYTES,
  MLD_STATUS_LABELS,
  VIEW_FILE_NAME_PERMISSION,
  appSequenceOf,
  ddMmmYyyy,
  type AiLayers,
  type CsvValue,
  type MldRecord,
  type RegisterMldRequest,
  type mldListRequestSchema,
} from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import type { Principal } from '../../platform/auth/principal.js';
import type { ObjectStorage } from '../../platform/storage/storage.js';
import type { UploadKeys } from '../../platform/storage/keys.js';
import { extensionOf } from '../../platform/storage/keys.js';
import { inTransaction, QUEUES, type JobQueue } from '../../platform/jobs/jobQueue.js';
import { recordAudit, type Actor } from '../../platform/audit/audit.js';
import { BadRequestError, ConflictError, NotFoundError } from '../../platform/errors.js';
import { readerSeesImage } from '../../access/readerVisibility.js';
import { imageName } from '../../access/imageLabel.js';
import { canSeeStudy } from '../../platform/rbac/studyScope.js';
import { parseSort } from '../../platform/db/paging.js';
import { sendCsv } from '../../platform/http/csvStream.js';
import {
  aiLayers,
  heatmapKeyOf,
  mldCount,
  mldList,
  selectMldRecords,
  type MldListFilter,
  type MldRecordRow,
} from './mldQueries.js';

type MldListRequestBody = z.output<typeof mldListRequestSchema>;

/** A record of the Annotations tab as `principal` may see it (the image's name by the file-name permission). */
export function presentMldRecord(row: MldRecordRow, principal: Principal): MldRecord {
  return {
    mldId: row.id,
    mldName: row.name,
    mldFileLength: row.size_bytes,
    status: row.status,
    errorMessage: row.error_message,
    appSequenceId: row.app_sequence_id,
    numLayers: row.num_layers,
    imageId: row.image_id,
    imageName:
      row.image_id === null || row.image_name === null
        ? null
        : imageName(
            { id: row.image_id, name: row.image_name, case_proc_id: row.proc_id, case_position: row.case_position },
            principal,
          ),
    studyId: row.study_id,
    caseId: row.case_id,
    procId: row.proc_id,
    histoProcedureId: row.histo_procedure_id,
    counts: row.counts,
    uploadedAt: row.uploaded_at.toISOString(),
    uploadedBy: row.uploaded_by,
  };
}

/** A record's line of the Annotations tab's CSV (the columns of MLD_CSV_HEADER). */
function mldCsvCells(record: MldRecord): CsvValue[] {
  return [
    record.mldName,
    record.mldFileLength,
    MLD_STATUS_LABELS[record.status],
    record.errorMessage,
    record.appSequenceId,
    record.numLayers,
    record.imageName,
    record.procId,
    record.histoProcedureId,
    record.uploadedAt,
    record.uploadedBy,
  ];
}

/**
 * The Annotations tab's filter for `principal`: image names are searched and sorted by only with
 * the file-name permission (the order would tell what the neutral labels hide); without it a sort
 * by image name is the default, newest first.
 */
function listFilter(principal: Principal, body: MldListRequestBody): MldListFilter {
  const fileNames = principal.actions.has(VIEW_FILE_NAME_PERMISSION);
  const parsed = parseSort(body.sort);
  const { key, descending } = fileNames || parsed.key !== 'imageName' ? parsed : parseSort('-uploadedAt');
  return {
    searchText: body.searchText,
    searchImageNames: fileNames,
    statuses: body.annotationStatusFilter,
    studyIds: body.studyFilter?.selectedIds,
    sort: key,
    descending,
  };
}

/** The viewer's AI layers of an image: its completed imports (with their heatmaps) and AI classes. */
function presentAiLayers(imageId: number, layers: Awaited<ReturnType<typeof aiLayers>>, accept: boolean): AiLayers {
  return {
    success: true,
    imageId,
    acceptAiAnnotations: accept,
    imports: layers.imports.map((m) => ({
      mldId: m.id,
      name: m.name,
      appSequenceId: m.app_sequence_id,
      numLayers: m.num_layers,
      counts: m.counts,
      heatmap: m.heatmap_key ? { name: m.heatmap_name, url: `/api/mld/${m.id}/heatmap` } : null,
      completedAt: m.completed_at ? m.completed_at.toISOString() : null,
    })),
    classes: layers.classes,
  };
}

/**
 * Imports of .mld files (issue 17; doc 2 §4 flow): signed upload URLs bound to the user, the
 * registration that queues the import (its job is commands/mldImport.ts), one record, the
 * Annotations tab (a page, or its CSV), and what the viewer shows of the imports (the AI layers,
 * the heatmap).
 */
export class MldService {
  constructor(
    private readonly deps: {
      db: Db;
      storage: ObjectStorage;
      keys: UploadKeys;
      jobs: JobQueue;
      ttlSeconds: number;
    },
  ) {}

  /** POST /api/mld/get-signed-urls: a key and PUT URL per file, each bound to the caller. */
  async signedUrls(principal: Principal, fileNames: readonly string[]) {
    for (const name of fileNames)
      if (extensionOf(name) !== 'mld') throw new BadRequestError(MLD_IMPORT_MESSAGES.notMld(name));
    return Promise.all(
      fileNames.map(async (fileName) => {
        const s3Key = this.deps.keys.issueMld(principal.id, fileName);
        return { fileName, s3Key, signedUrl: await this.deps.storage.signedPutUrl(s3Key, this.deps.ttlSeconds) };
      }),
    );
  }

  /** POST /api/mld: registers an uploaded file (UPLOADED), queues its import (QUEUED), audited. */
  async register(principal: Principal, actor: Actor, request: RegisterMldRequest): Promise<MldRecord> {
    const { db, storage, jobs } = this.deps;
    if (extensionOf(request.name) !== 'mld') throw new BadRequestError(MLD_IMPORT_MESSAGES.notMld(request.name));
    if (this.deps.keys.mldOwnerOf(request.s3Key) !== principal.id)
      throw new NotFoundError(MLD_IMPORT_MESSAGES.uploadNotFound);
    const head = await storage.head(request.s3Key);
    if (!head) throw new NotFoundError(MLD_IMPORT_MESSAGES.uploadNotFound);
    if (head.size > MLD_MAX_BYTES) throw new BadRequestError(MLD_IMPORT_MESSAGES.tooLarge);
    let image: { id: number; study_id: number | null } | null = null;
    if (request.imageId) {
      image =
        (await db
          .selectFrom('images')
          .select(['id', 'study_id', 'status'])
          .where('id', '=', request.imageId)
          .where(readerSeesImage(principal))
          .executeTakeFirst()) ?? null;
      if (!image || image.study_id === null || !(await canSeeStudy(db, principal, image.study_id)))
        throw new NotFoundError(MLD_IMPORT_MESSAGES.imageNotFound);
      if ((image as { status?: string }).status === 'ARCHIVED')
        throw new ConflictError(MLD_IMPORT_MESSAGES.imageArchived);
    }
    await jobs.start(); // the queue's schema exists before the transaction enqueues into it
    const id = await db.transaction().execute(async (tx) => {
      const already = await tx
        .selectFrom('mld_files')
        .select('id')
        .where('s3_key', '=', request.s3Key)
        .executeTakeFirst();
      if (already) throw new ConflictError(MLD_IMPORT_MESSAGES.alreadyRegistered);
      const created = await tx
        .insertInto('mld_files')
        .values({
          name: request.name,
          s3_key: request.s3Key,
          size_bytes: head.size,
          app_sequence_id: appSequenceOf(request.name),
          image_id: image?.id ?? null,
          study_id: image?.study_id ?? null,
          uploader_id: principal.id,
          status: 'UPLOADED',
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      await jobs.send(QUEUES.mldImport, { mldId: created.id }, { db: inTransaction(tx) });
      await tx.updateTable('mld_files').set({ status: 'QUEUED' }).where('id', '=', created.id).execute();
      await recordAudit(tx, actor, [
        {
          action: 'MLD_UPLOADED',
          entityType: 'mld_file',
          entityId: created.id,
          studyId: image?.study_id ?? null,
          newValue: { name: request.name, size: head.size, imageId: image?.id ?? null, status: 'QUEUED' },
        },
      ]);
      return created.id;
    });
    return this.record(principal, id);
  }

  /** POST /api/imageManagement/annotations: one page of the imports the user sees, with the total. */
  async list(principal: Principal, body: MldListRequestBody): Promise<{ results: MldRecord[]; total: number }> {
    const { db } = this.deps;
    const filter = listFilter(principal, body);
    const [rows, total] = await Promise.all([
      mldList(db, principal, { ...filter, limit: body.pageSize, offset: (body.page - 1) * body.pageSize }).execute(),
      mldCount(db, principal, filter),
    ]);
    return { results: rows.map((row) => presentMldRecord(row, principal)), total };
  }

  /** POST /api/imageManagement/annotations?reportFormat=csv: every matching import, streamed from a cursor. */
  exportCsv(reply: FastifyReply, principal: Principal, body: MldListRequestBody): FastifyReply {
    const { db } = this.deps;
    return sendCsv(reply, {
      fileName: `image-mgmt-annotations_${ddMmmYyyy(new Date())}.csv`,
      header: MLD_CSV_HEADER,
      db,
      query: mldList(db, principal, listFilter(principal, body)),
      cells: (row) => mldCsvCells(presentMldRecord(row, principal)),
    });
  }

  /** GET /api/images/{id}/ai-layers (the route's scope has checked the image is visible). */
  async aiLayers(imageId: number): Promise<AiLayers> {
    const layers = await aiLayers(this.deps.db, imageId);
    if (!layers.image) throw new NotFoundError(IMAGE_MESSAGES.imageNotFound);
    return presentAiLayers(imageId, layers, layers.image.accept_ai_annotations);
  }

  /** GET /api/mld/{id}/heatmap: the import's heatmap PNG (the route's scope: an import whose image is visible). */
  async heatmap(mldId: number): Promise<Readable> {
    const key = await heatmapKeyOf(this.deps.db, mldId);
    if (!key) throw new NotFoundError(MLD_IMPORT_MESSAGES.uploadNotFound);
    return this.deps.storage.createReadStream(key);
  }

  async record(principal: Principal, id: number): Promise<MldRecord> {
    const row = await selectMldRecords(this.deps.db).where('mld_files.id', '=', id).executeTakeFirst();
    if (!row) throw new NotFoundError(MLD_IMPORT_MESSAGES.uploadNotFound);
    return presentMldRecord(row, principal);
  }
}
