import { sql, type Selectable, type Transaction } from 'kysely';
import {
  CASE_ASSIGNABLE,
  CSV_BOM,
  IM_EDIT_MESSAGES,
  IM_IMAGE_CASE_OWNED,
  SAMPLE_MAX_MB,
  SAMPLE_MAX_ROWS,
  SAMPLE_MESSAGES,
  VIEW_ALL_STUDIES,
  csvLine,
  imColumn,
  imColumnValueError,
  imageDataStatus,
  imageStatusOnAssign,
  labVisitEditable,
  mayEditImColumn,
  parseSampleTable,
  sampleColumns,
  type CaseStatus,
  type ImColumn,
  type SampleColumns,
  type SampleDataRequest,
  type SampleImportResult,
  type SampleProgress,
} from '@lamina/domain';
import type { Db } from '../platform/db/database.js';
import type { DB } from '../platform/db/schema.js';
import type { Principal } from '../platform/auth/principal.js';
import { recordAudit, type Actor, type AuditEvent } from '../platform/audit/audit.js';
import { BadRequestError, ConflictError, NotFoundError } from '../platform/errors.js';
import { visibleStudies } from '../platform/rbac/studyScope.js';
import type { ObjectStorage } from '../platform/storage/storage.js';
import { sampleResultKey, type UploadKeys } from '../platform/storage/keys.js';
import { imageCaseEvents } from '../modules/cases/caseService.js';
import { IMAGE_TEXT_COLUMN } from '../modules/imageManagement/imageColumns.js';
import { studyOptionError } from './imEditService.js';
import { segmentError } from '../modules/images/imageEditService.js';

type Tx = Transaction<DB>;

/** Rows per transaction: a failure rolls back one batch; progress moves batch by batch. */
export const SAMPLE_BATCH = 500;

interface StudyContext {
  id: number;
  name: string;
  protocol_ids: string[];
  visit_ids: string[];
  lab_visit_ids: string[];
  anatomical_segments: string[];
}

interface ImportContext {
  principal: Principal;
  columns: SampleColumns;
  studies: Map<number, StudyContext>;
  /** Protocol ID → the visible studies that list it. */
  protocols: Map<string, StudyContext[]>;
  reason: string;
}

type RowOutcome = { result: 'Updated' | 'Unchanged' | 'Failed'; message: string; fields: number };

const IMAGE_SELECTION = [
  'id',
  'study_id',
  'case_id',
  'status',
  'name',
  'accession_number',
  'machine_readable_barcode',
  'protocol_id',
  'site_id',
  'subject_id',
  'visit_id',
  'lab_visit_id',
  'biopsy_location',
  'specimen_collection_date',
  'qa_comments',
] as const;
type ImageRow = Pick<Selectable<DB['images']>, (typeof IMAGE_SELECTION)[number]>;

const failed = (message: string): RowOutcome => ({ result: 'Failed', message, fields: 0 });

/**
 * The sample-data import (issue 12; docs/SAMPLE-DATA.md): a signed upload of the file, then
 * `process` applies it row by row — each row atomic (all its fields or none), SAMPLE_BATCH rows per
 * transaction with their audit rows — under the same rules as Edit Column, then assigns studies
 * (Protocol ID), Data Incomplete and cases (study, subject, visit, Endo Procedure ID). The progress is
 * in `sample_imports`, so any process answers the dialog's poll; the result CSV goes to storage.
 */
export class SampleImportService {
  constructor(
    private readonly db: Db,
    private readonly storage: ObjectStorage,
    private readonly keys: UploadKeys,
    private readonly ttlSeconds: number,
  ) {}

  /** POST /api/samples/upload: a key of the user's and a signed PUT URL for it. */
  async upload(principal: Principal, fileName: string) {
    const key = this.keys.issueSample(principal.id, fileName);
    return {
      putSignedUrl: await this.storage.signedPutUrl(key, this.ttlSeconds),
      sampleDataRequest: { s3SampleDataKey: key, fileName, resultFileKey: sampleResultKey(key) },
    };
  }

  /** GET /api/samples/progress: an import of the user's. */
  async progress(principal: Principal, key: string): Promise<Omit<SampleProgress, 'success'>> {
    const row = await this.db
      .selectFrom('sample_imports')
      .select(['status', 'total_rows', 'done_rows'])
      .where('sample_key', '=', key)
      .where('user_id', '=', principal.id)
      .executeTakeFirst();
    if (!row) throw new NotFoundError(SAMPLE_MESSAGES.noSuchImport);
    return { status: row.status, totalRows: row.total_rows, doneRows: row.done_rows };
  }

  /** POST /api/samples/process. */
  async process(
    principal: Principal,
    actor: Actor,
    request: SampleDataRequest,
  ): Promise<Omit<SampleImportResult, 'success'>> {
    const key = request.s3SampleDataKey;
    if (this.keys.sampleOwnerOf(key) !== principal.id) throw new NotFoundError(SAMPLE_MESSAGES.noSuchImport);
    if (request.resultFileKey !== sampleResultKey(key)) throw new BadRequestError(SAMPLE_MESSAGES.unableToImport);
    const head = await this.storage.head(key);
    if (!head) throw new BadRequestError(`${SAMPLE_MESSAGES.unableToImport} The file was not uploaded.`);
    if (head.size > SAMPLE_MAX_MB * 1_000_000) throw new BadRequestError(SAMPLE_MESSAGES.tooLarge(SAMPLE_MAX_MB));

    const created = await this.db
      .insertInto('sample_imports')
      .values({
        user_id: principal.id,
        sample_key: key,
        result_key: request.resultFileKey,
        file_name: request.fileName,
      })
      .onConflict((oc) => oc.column('sample_key').doNothing())
      .returning('id')
      .executeTakeFirst();
    if (!created) throw new ConflictError(SAMPLE_MESSAGES.alreadyImported);
    const importId = created.id;

    let table: ReturnType<typeof parseSampleTable>;
    let columns: SampleColumns;
    try {
      const bytes = await this.storage.readRange(key, 0, head.size);
      const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
      table = parseSampleTable(text);
      columns = sampleColumns(table.header);
      if (table.rows.length === 0) throw new Error(SAMPLE_MESSAGES.empty);
      if (table.rows.length > SAMPLE_MAX_ROWS) throw new Error(SAMPLE_MESSAGES.tooManyRows(SAMPLE_MAX_ROWS));
    } catch (error) {
      const message =
        error instanceof TypeError
          ? SAMPLE_MESSAGES.notUtf8
          : error instanceof Error
            ? error.message
            : SAMPLE_MESSAGES.unableToImport;
      await this.db
        .updateTable('sample_imports')
        .set({ status: 'FAILED', message, finished_at: new Date() })
        .where('id', '=', importId)
        .execute();
      throw new BadRequestError(message);
    }
    await this.db
      .updateTable('sample_imports')
      .set({ total_rows: table.rows.length })
      .where('id', '=', importId)
      .execute();

    const context = await this.context(principal, columns, request.fileName);
    const outcomes: RowOutcome[] = [];
    for (let start = 0; start < table.rows.length; start += SAMPLE_BATCH) {
      const batch = table.rows.slice(start, start + SAMPLE_BATCH);
      let results: RowOutcome[];
      try {
        results = await this.db.transaction().execute(async (tx) => {
          const { outcomes: done, events } = await this.applyBatch(tx, context, batch, table.header.length);
          await recordAudit(tx, actor, events);
          return done;
        });
      } catch {
        // The batch rolled back: none of its rows changed.
        results = batch.map(() => failed(SAMPLE_MESSAGES.batchFailed));
      }
      await this.db
        .updateTable('sample_imports')
        .set({ done_rows: start + batch.length })
        .where('id', '=', importId)
        .execute();
      outcomes.push(...results);
    }

    const rowsUpdated = outcomes.filter((o) => o.result === 'Updated').length;
    const fieldsUpdated = outcomes.reduce((n, o) => n + o.fields, 0);
    const rowsFailed = outcomes.filter((o) => o.result === 'Failed').length;
    const result =
      csvLine([...table.header, 'Result', 'Message']) +
      table.rows
        .map((row, i) => {
          const outcome = outcomes[i] ?? failed(SAMPLE_MESSAGES.batchFailed);
          const cells = Array.from({ length: table.header.length }, (_, c) => row[c] ?? '');
          return csvLine([...cells, outcome.result, outcome.message]);
        })
        .join('');
    await this.storage.write(request.resultFileKey, Buffer.from(CSV_BOM + result, 'utf8'), 'text/csv; charset=utf-8');
    const message = `${SAMPLE_MESSAGES.complete}: ${rowsUpdated} of ${table.rows.length} rows updated (${fieldsUpdated} fields), ${rowsFailed} failed`;
    await this.db.transaction().execute(async (tx) => {
      await tx
        .updateTable('sample_imports')
        .set({
          status: 'COMPLETE',
          rows_updated: rowsUpdated,
          fields_updated: fieldsUpdated,
          rows_failed: rowsFailed,
          message,
          finished_at: new Date(),
        })
        .where('id', '=', importId)
        .execute();
      await recordAudit(tx, actor, [
        {
          action: 'SAMPLE_DATA_IMPORTED',
          entityType: 'sample_import',
          entityId: importId,
          field: 'file',
          newValue: `${request.fileName}: ${rowsUpdated} rows updated, ${fieldsUpdated} fields, ${rowsFailed} failed`,
          reason: context.reason,
        },
      ]);
    });
    const resultName = request.resultFileKey.split('/').pop() ?? 'result.csv';
    return {
      message,
      numRowsUpdated: rowsUpdated,
      numFieldsUpdated: fieldsUpdated,
      numRowsFailed: rowsFailed,
      s3SampleDataResponse: await this.storage.signedGetUrl(request.resultFileKey, this.ttlSeconds, resultName),
    };
  }

  /** The studies the user may see, with what the rows are checked against. */
  private async context(principal: Principal, columns: SampleColumns, fileName: string): Promise<ImportContext> {
    const rows = await this.db
      .selectFrom('studies')
      .select(['id', 'name', 'protocol_ids', 'visit_ids', 'lab_visit_ids', 'anatomical_segments'])
      .where(visibleStudies(principal))
      .execute();
    const studies = new Map(rows.map((s) => [s.id, s]));
    const protocols = new Map<string, StudyContext[]>();
    for (const study of rows)
      for (const protocol of new Set(study.protocol_ids))
        protocols.set(protocol, [...(protocols.get(protocol) ?? []), study]);
    return { principal, columns, studies, protocols, reason: `Sample data import ${fileName}` };
  }

  /** One batch in one transaction: its images locked, each row applied or failed whole. */
  private async applyBatch(tx: Tx, ctx: ImportContext, rows: string[][], width: number) {
    const { key, keyIndex } = ctx.columns;
    const values = [...new Set(rows.map((r) => (r[keyIndex] ?? '').trim()).filter((v) => v !== ''))];
    const viewAll = ctx.principal.actions.has(VIEW_ALL_STUDIES);
    const found =
      values.length === 0
        ? []
        : ((await tx
            .selectFrom('images')
            .select([...IMAGE_SELECTION])
            .where(key.field, 'in', values)
            .where('status', '!=', 'ARCHIVED')
            .where((eb) =>
              eb.or([
                eb('study_id', 'in', [...ctx.studies.keys(), -1]),
                ...(viewAll ? [eb('study_id', 'is', null)] : []),
              ]),
            )
            .orderBy('id')
            .forUpdate()
            .execute()) as ImageRow[]);
    const byKey = new Map<string, ImageRow[]>();
    for (const image of found) {
      const value = image[key.field] ?? '';
      byKey.set(value, [...(byKey.get(value) ?? []), image]);
    }
    const events: AuditEvent[] = [];
    const outcomes: RowOutcome[] = [];
    for (const row of rows) {
      if (row.length > width) {
        outcomes.push(failed(SAMPLE_MESSAGES.wrongCellCount(width, row.length)));
        continue;
      }
      const value = (row[keyIndex] ?? '').trim();
      const matches = byKey.get(value) ?? [];
      if (value === '') outcomes.push(failed(SAMPLE_MESSAGES.emptyKey(key.label)));
      else if (matches.length === 0) outcomes.push(failed(SAMPLE_MESSAGES.noMatch(key.label, value)));
      else if (matches.length > 1) outcomes.push(failed(SAMPLE_MESSAGES.severalMatch(key.label, value)));
      else outcomes.push(await this.applyRow(tx, ctx, matches[0] as ImageRow, row, events));
    }
    return { outcomes, events };
  }

  /** A row's fields on its image: all checked first, then written; then the matches. */
  private async applyRow(
    tx: Tx,
    ctx: ImportContext,
    image: ImageRow,
    row: string[],
    events: AuditEvent[],
  ): Promise<RowOutcome> {
    const changes: {
      column: ImColumn<string>;
      dbColumn: (typeof IMAGE_TEXT_COLUMN)[keyof typeof IMAGE_TEXT_COLUMN];
      before: string | null;
      after: string;
    }[] = [];
    for (const field of ctx.columns.fields) {
      const value = (row[field.index] ?? '').trim();
      if (value === '') continue; // an empty cell changes nothing
      const column = imColumn('images', field.key) as ImColumn<string>;
      if (!mayEditImColumn(column, ctx.principal.actions)) return failed(IM_EDIT_MESSAGES.notPermitted(column.label));
      const error = imColumnValueError('images', column, value);
      if (error) return failed(error);
      const dbColumn = IMAGE_TEXT_COLUMN[field.key];
      const before = image[dbColumn];
      if (before === value) continue;
      if (IM_IMAGE_CASE_OWNED.includes(field.key) && image.case_id !== null)
        return failed(IM_EDIT_MESSAGES.onlyWithoutCase(column.label));
      changes.push({ column, dbColumn, before, after: value });
    }
    const next: ImageRow = { ...image };
    for (const change of changes) next[change.dbColumn] = change.after;

    // The study by Protocol ID, for an image without one (isStudyMatched).
    const notes: string[] = [];
    let matchedStudy: StudyContext | undefined;
    if (next.study_id === null && next.protocol_id) {
      const candidates = ctx.protocols.get(next.protocol_id) ?? [];
      if (candidates.length === 1) matchedStudy = candidates[0];
    }
    const studyId = matchedStudy?.id ?? next.study_id;
    const study = studyId === null ? undefined : ctx.studies.get(studyId);
    for (const change of changes) {
      const kind = change.column.edit?.kind;
      if (kind === 'visitOption' || kind === 'labVisitOption') {
        const error = studyOptionError(study, change.column, change.after);
        if (error) return failed(error);
      }
      if (
        change.column.key === 'labVisitId' &&
        !labVisitEditable({ caseId: next.case_id, studyId, status: next.status })
      )
        return failed(IM_EDIT_MESSAGES.labVisitNotNow);
      const segment =
        change.column.key === 'anatomicalSegment' && study
          ? segmentError(study.anatomical_segments, change.after)
          : null;
      if (segment) return failed(segment);
    }

    const base = { entityType: 'image', entityId: image.id, studyId: studyId ?? null, reason: ctx.reason };
    for (const change of changes)
      events.push({
        ...base,
        action: 'IMAGE_EDITED',
        field: change.column.key,
        oldValue: change.before,
        newValue: change.after,
      });
    const set: Record<string, unknown> = Object.fromEntries(changes.map((c) => [c.dbColumn, c.after]));
    if (matchedStudy) {
      set.study_id = matchedStudy.id;
      set.is_study_matched = true;
      next.study_id = matchedStudy.id;
      if (next.status === 'STUDY_ASSIGNMENT_PENDING') next.status = 'CASE_ASSIGNMENT_PENDING';
      events.push({
        ...base,
        action: 'IMAGE_STUDY_MATCHED',
        field: 'study_id',
        oldValue: null,
        newValue: matchedStudy.id,
      });
      notes.push(SAMPLE_MESSAGES.studyMatched(matchedStudy.name));
    }
    // Data Incomplete when subject, site or visit is missing; back once they are all there.
    const dataStatus = imageDataStatus(
      {
        status: image.status === 'STUDY_ASSIGNMENT_PENDING' && matchedStudy ? 'STUDY_ASSIGNMENT_PENDING' : image.status,
        studyId: next.study_id,
        caseId: next.case_id,
        siteId: next.site_id,
        subjectId: next.subject_id,
        visitId: next.visit_id,
      },
      { markIncomplete: true },
    );
    next.status = dataStatus;
    if (dataStatus === 'DATA_INCOMPLETE') notes.push(SAMPLE_MESSAGES.dataIncomplete);

    // The case by study, subject, visit and Endo Procedure ID (isCaseMatched).
    const endo = ctx.columns.endoIndex === null ? '' : (row[ctx.columns.endoIndex] ?? '').trim();
    let caseEvents: AuditEvent[] = [];
    if (next.study_id !== null && next.case_id === null && next.status === 'CASE_ASSIGNMENT_PENDING' && endo) {
      const cases = await tx
        .selectFrom('cases')
        .select(['id', 'proc_id', 'status', 'on_hold_from'])
        .where('study_id', '=', next.study_id)
        .where(sql`lower(proc_id)`, '=', endo.toLowerCase())
        .where('subject_id', '=', next.subject_id)
        .where('visit_id', '=', next.visit_id)
        .where('status', 'in', [...CASE_ASSIGNABLE])
        .forUpdate()
        .execute();
      const only = cases.length === 1 ? cases[0] : undefined;
      const status = only
        ? imageStatusOnAssign(only.status as CaseStatus, only.on_hold_from as CaseStatus | null)
        : null;
      if (only && status) {
        set.case_id = only.id;
        set.is_case_matched = true;
        caseEvents = imageCaseEvents(image.id, next.study_id, {
          fromCase: null,
          toCase: only.id,
          fromStatus: next.status,
          toStatus: status,
          reason: ctx.reason,
        });
        next.case_id = only.id;
        next.status = status;
        notes.push(SAMPLE_MESSAGES.caseMatched(only.proc_id ?? String(only.id)));
      }
    }
    if (next.status !== image.status) {
      set.status = next.status;
      // The status the case assignment left, or the data status: one row from the first to the last.
      if (caseEvents.length === 0)
        events.push({
          ...base,
          action: 'IMAGE_STATUS_CHANGED',
          field: 'status',
          oldValue: image.status,
          newValue: next.status,
        });
      else if (dataStatus !== image.status)
        events.push({
          ...base,
          action: 'IMAGE_STATUS_CHANGED',
          field: 'status',
          oldValue: image.status,
          newValue: dataStatus,
        });
    }
    events.push(...caseEvents);
    if (Object.keys(set).length === 0) return { result: 'Unchanged', message: SAMPLE_MESSAGES.unchanged, fields: 0 };
    await tx
      .updateTable('images')
      .set({ ...set, updated_at: new Date() })
      .where('id', '=', image.id)
      .execute();
    // Later rows of the file see this row's values.
    Object.assign(image, next);
    return {
      result: 'Updated',
      message: [SAMPLE_MESSAGES.updated(changes.length), ...notes].join('; '),
      fields: changes.length,
    };
  }
}
