import {
  IM_EDIT_MESSAGES,
  IM_CASE_FIELDS,
  IM_IMAGE_CASE_FIELDS,
  CASE_MESSAGES,
  IMAGE_MESSAGES,
  MESSAGES,
  imageDataStatus,
  imColumn,
  imColumnValueError,
  imReasonRequired,
  imCaseEditRefusal,
  imImageEditRefusal,
  mayEditImColumn,
  reasonForChangeError,
  valuesDiffer,
  type CaseField,
  type ImColumn,
  type ImEditTab,
  type ImImageColumnKey,
} from '@lamina/domain';
import type { Transaction } from 'kysely';
import type { Db } from '../platform/db/database.js';
import type { DB } from '../platform/db/schema.js';
import type { Principal } from '../platform/auth/principal.js';
import { recordAudit, type Actor, type AuditEvent } from '../platform/audit/audit.js';
import { changeEvents, requireReasonsForChange, type ReasonRule } from '../platform/audit/changes.js';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError } from '../platform/errors.js';
import { visibleStudies } from '../platform/rbac/studyScope.js';
import { CASE_FIELD_COLUMN, CaseService } from '../modules/cases/caseService.js';
import {
  IM_CASES_PERMISSION,
  IM_IMAGES_PERMISSION,
  IMAGE_TEXT_COLUMN,
  type ImageTextKey,
} from '../modules/imageManagement/imageColumns.js';
import { checkSegment } from '../modules/images/imageEditService.js';
import { lockImage } from '../modules/images/imageQueries.js';
import { moveImageToStudy } from './moveImage.js';

type Tx = Transaction<DB>;
type Parsed = { tabName: ImEditTab; columnName: string; columnValue: string | null; reasonForChange?: string | null };

/** Edit Column's reason rule: a reason only where a value existed (doc 2 §5), the tab's message. */
const columnReasonRule =
  (tab: ImEditTab): ReasonRule =>
  (before, after, reason) =>
    reasonForChangeError(before, after, reason) ? imReasonRequired(tab) : null;

/**
 * Image Management's Edit Column (doc 2 §5–7): one column of one image or case, by the domain's
 * column table (edit permission, value kind), with the rules of doc 2 §5. Image fields change in one
 * transaction with their audit rows; case fields go through the case service (its checks and audit),
 * the study through the image move. Returns the message to show.
 */
export class ImEditService {
  private readonly cases: CaseService;

  constructor(private readonly db: Db) {
    this.cases = new CaseService(db);
  }

  async editColumn(principal: Principal, actor: Actor, id: number, request: Parsed): Promise<string> {
    const tab = request.tabName;
    // The tab itself: its list's view permission.
    if (!principal.actions.has(tab === 'cases' ? IM_CASES_PERMISSION : IM_IMAGES_PERMISSION))
      throw new ForbiddenError();
    const column = imColumn(tab, request.columnName);
    if (!column) throw new BadRequestError(`The ${tab} table has no column ${request.columnName}`);
    if (!column.edit) throw new BadRequestError(IM_EDIT_MESSAGES.notEditable(column.label));
    if (!mayEditImColumn(column, principal.actions))
      throw new ForbiddenError(IM_EDIT_MESSAGES.notPermitted(column.label));
    const value = request.columnValue === '' ? null : request.columnValue;
    const formatError = imColumnValueError(tab, column, value);
    if (formatError) throw new BadRequestError(formatError);
    const edit = { column, value, reason: request.reasonForChange };

    if (tab === 'cases') {
      await this.editCase(principal, actor, id, edit);
      return IM_EDIT_MESSAGES.updated(column.label);
    }
    const caseField = IM_IMAGE_CASE_FIELDS[column.key as ImImageColumnKey];
    if (caseField) {
      const image = await this.db.selectFrom('images').select(['case_id']).where('id', '=', id).executeTakeFirst();
      if (!image) throw new NotFoundError(IMAGE_MESSAGES.imageNotFound);
      if (image.case_id === null) throw new ConflictError(IM_EDIT_MESSAGES.noCase(column.label));
      await this.editCase(principal, actor, image.case_id, edit, { tab: 'images', field: caseField });
    } else if (column.key === 'studyName') await this.editStudy(principal, actor, id, edit);
    else await this.editImage(principal, actor, id, edit);
    return IM_EDIT_MESSAGES.updated(column.label);
  }

  /** A field stored on the image row (text, date, organization). */
  private async editImage(principal: Principal, actor: Actor, imageId: number, edit: Edit): Promise<void> {
    const { column, value } = edit;
    const key = column.key as ImImageColumnKey;
    await this.db.transaction().execute(async (tx) => {
      const image = await lockImage(tx, imageId);
      // The rule Image Management's pencils are offered by (issue 29 item 13).
      const refusal = imImageEditRefusal(key, { caseId: image.case_id, studyId: image.study_id, status: image.status });
      if (refusal) throw new ConflictError(refusal);

      let before: unknown;
      let after: unknown = value;
      const set: Partial<Record<string, unknown>> = {};
      if (key === 'organizationName') {
        before = image.organization_id === null ? null : await organizationName(tx, image.organization_id);
        const organization = value === null ? null : await organizationByName(tx, value);
        set.organization_id = organization?.id ?? null;
        after = organization?.name ?? null;
      } else if (key === 'uploadedAt') {
        if (value === null) throw new BadRequestError(IM_EDIT_MESSAGES.required(column.label));
        // The date changes; the time of day of the upload stays.
        const uploadedBefore = image.uploaded_at.toISOString();
        before = uploadedBefore;
        const uploaded = new Date(`${value}T${uploadedBefore.slice(11)}`);
        after = uploaded.toISOString();
        set.uploaded_at = uploaded;
      } else if (key in IMAGE_TEXT_COLUMN) {
        const dbColumn = IMAGE_TEXT_COLUMN[key as ImageTextKey];
        before = image[dbColumn];
        if (key === 'specimenCollectionDate' && before === null && image.case_id !== null)
          before = await caseCollectionDate(tx, image.case_id);
        if (column.edit?.kind === 'visitOption' || column.edit?.kind === 'labVisitOption')
          await checkStudyOption(tx, image.study_id, column, value);
        if (key === 'anatomicalSegment' && value !== null) await checkSegment(tx, image.study_id, value);
        set[dbColumn] = value;
      } else throw new BadRequestError(IM_EDIT_MESSAGES.notEditable(column.label));

      if (!valuesDiffer(before, after)) throw new BadRequestError(IM_EDIT_MESSAGES.unchanged);
      const [change] = requireReasonsForChange(
        [{ field: key, before, after, reason: edit.reason }],
        columnReasonRule('images'),
      );
      if (!change) return;
      const events: AuditEvent[] = changeEvents(
        { action: 'IMAGE_EDITED', entityType: 'image', entityId: imageId, studyId: image.study_id },
        [change],
      );
      // An image whose study data is now complete leaves Data Incomplete (docs/SAMPLE-DATA.md).
      const next = { ...image, ...set };
      const status = imageDataStatus(
        {
          status: image.status,
          studyId: next.study_id,
          caseId: next.case_id,
          siteId: next.site_id,
          subjectId: next.subject_id,
          visitId: next.visit_id,
        },
        { markIncomplete: false },
      );
      if (status !== image.status) {
        set.status = status;
        events.push({
          action: 'IMAGE_STATUS_CHANGED',
          entityType: 'image',
          entityId: imageId,
          studyId: image.study_id,
          field: 'status',
          oldValue: image.status,
          newValue: status,
          reason: change.reason?.trim() || null,
        });
      }
      await tx
        .updateTable('images')
        .set({ ...set, updated_at: new Date() })
        .where('id', '=', imageId)
        .execute();
      await recordAudit(tx, actor, events);
    });
  }

  /**
   * The study of an image, by the study's name (doc 2 §5: EditStudyName for an image without one,
   * EditStudyNamePopulated to change it). Changing it is a move: the image leaves its case.
   */
  private async editStudy(principal: Principal, actor: Actor, imageId: number, edit: Edit): Promise<void> {
    const { column, value } = edit;
    const image = await this.db
      .selectFrom('images')
      .leftJoin('studies', 'studies.id', 'images.study_id')
      .select(['images.study_id', 'studies.name'])
      .where('images.id', '=', imageId)
      .executeTakeFirst();
    if (!image) throw new NotFoundError(IMAGE_MESSAGES.imageNotFound);
    if (!mayEditImColumn(column, principal.actions, { populated: image.study_id !== null }))
      throw new ForbiddenError(IM_EDIT_MESSAGES.notPermitted(column.label));
    if (value === null) throw new BadRequestError(IM_EDIT_MESSAGES.required(column.label));
    if (image.name === value) throw new BadRequestError(IM_EDIT_MESSAGES.unchanged);
    const reasonError = columnReasonRule('images')(image.name, value, edit.reason);
    if (reasonError) throw new BadRequestError(reasonError);
    // Study names are unique (studies_name_lower): one study the user may see, or none.
    const study = await this.db
      .selectFrom('studies')
      .select('id')
      .where('name', '=', value)
      .where(visibleStudies(principal))
      .executeTakeFirst();
    if (!study) throw new NotFoundError(MESSAGES.studyNotFound);
    await moveImageToStudy(this.db, principal, actor, imageId, {
      value: study.id,
      reasonForChange: edit.reason ?? null,
    });
  }

  /** A case field (the cases tab, or an image's procedure IDs): the case service's rules and audit. */
  private async editCase(
    principal: Principal,
    actor: Actor,
    caseId: number,
    edit: Edit,
    through?: { tab: 'images'; field: CaseField },
  ): Promise<void> {
    const { column, value } = edit;
    const tab = through?.tab ?? 'cases';
    const current = await this.db
      .selectFrom('cases')
      .select(['id', 'study_id', 'status', 'proc_id', 'histo_procedure_id', 'site_id', 'subject_id', 'visit_id'])
      .select('images_expected')
      .where('id', '=', caseId)
      .executeTakeFirst();
    if (!current) throw new NotFoundError(CASE_MESSAGES.caseNotFound);
    const refusal = imCaseEditRefusal(current);
    if (refusal) throw new ConflictError(refusal);
    if (column.key === 'imagesExpected' && tab === 'cases') return this.editImagesExpected(actor, caseId, edit);
    const field = through?.field ?? IM_CASE_FIELDS[column.key as keyof typeof IM_CASE_FIELDS];
    if (!field) throw new BadRequestError(IM_EDIT_MESSAGES.notEditable(column.label));
    const before = current[CASE_FIELD_COLUMN[field]];
    if (!valuesDiffer(before, value)) throw new BadRequestError(IM_EDIT_MESSAGES.unchanged);
    if (field === 'visitId') await checkStudyOption(this.db, current.study_id, column, value);
    await this.cases.edit(
      principal,
      actor,
      caseId,
      { [field]: { value, reasonForChange: edit.reason ?? null } },
      columnReasonRule(tab),
    );
  }

  private async editImagesExpected(actor: Actor, caseId: number, edit: Edit): Promise<void> {
    const after = edit.value === null ? null : Number(edit.value);
    await this.db.transaction().execute(async (tx) => {
      const row = await tx
        .selectFrom('cases')
        .select(['study_id', 'images_expected'])
        .where('id', '=', caseId)
        .forUpdate()
        .executeTakeFirstOrThrow();
      if (!valuesDiffer(row.images_expected, after)) throw new BadRequestError(IM_EDIT_MESSAGES.unchanged);
      const [change] = requireReasonsForChange(
        [{ field: 'imagesExpected', before: row.images_expected, after, reason: edit.reason }],
        columnReasonRule('cases'),
      );
      if (!change) return;
      await tx
        .updateTable('cases')
        .set({ images_expected: after, updated_at: new Date() })
        .where('id', '=', caseId)
        .execute();
      await recordAudit(
        tx,
        actor,
        changeEvents({ action: 'CASE_EDITED', entityType: 'case', entityId: caseId, studyId: row.study_id }, [change]),
      );
    });
  }
}

interface Edit {
  column: ImColumn<string>;
  value: string | null;
  reason: string | null | undefined;
}

/**
 * Visit ID and Lab Visit ID come from the study configuration's options (doc 2 §5): none configured
 * (or no study) is 'No options configured'; another value is refused. Emptying is allowed.
 */
export function studyOptionError(
  study: { visit_ids: string[]; lab_visit_ids: string[] } | undefined,
  column: ImColumn<string>,
  value: string | null,
): string | null {
  if (value === null) return null;
  const options = (column.edit?.kind === 'labVisitOption' ? study?.lab_visit_ids : study?.visit_ids) ?? [];
  const choices = options.filter((o) => o !== '');
  if (choices.length === 0) return IM_EDIT_MESSAGES.noOptionsConfigured;
  return choices.includes(value) ? null : IM_EDIT_MESSAGES.notAnOption(column.label);
}

async function checkStudyOption(
  db: Db | Tx,
  studyId: number | null,
  column: ImColumn<string>,
  value: string | null,
): Promise<void> {
  if (value === null) return;
  const study =
    studyId === null
      ? undefined
      : await db
          .selectFrom('studies')
          .select(['visit_ids', 'lab_visit_ids'])
          .where('id', '=', studyId)
          .executeTakeFirst();
  const error = studyOptionError(study, column, value);
  if (error) throw new BadRequestError(error);
}

async function organizationName(tx: Tx, id: number): Promise<string | null> {
  const row = await tx.selectFrom('organizations').select('name').where('id', '=', id).executeTakeFirst();
  return row?.name ?? null;
}

async function organizationByName(tx: Tx, name: string): Promise<{ id: number; name: string }> {
  const row = await tx
    .selectFrom('organizations')
    .select(['id', 'name'])
    .where((eb) => eb(eb.fn('lower', ['name']), '=', name.toLowerCase()))
    .executeTakeFirst();
  if (!row) throw new BadRequestError(IM_EDIT_MESSAGES.organizationNotFound);
  return row;
}

async function caseCollectionDate(tx: Tx, caseId: number): Promise<string | null> {
  const row = await tx
    .selectFrom('cases')
    .select('specimen_collection_date')
    .where('id', '=', caseId)
    .executeTakeFirst();
  return row?.specimen_collection_date ?? null;
}
