import { sql, type Transaction, type Updateable } from 'kysely';
import type { z } from 'zod';
import {
  ARCHIVE_CASE_PERMISSION,
  CASE_MOVE_EXCLUDED,
  CASE_STATUSES,
  VIEW_FILE_NAME_PERMISSION,
  type caseImagesQuerySchema,
  type caseSearchQuerySchema,
  type studyCaseListQuerySchema,
  type StudyCaseSortKey,
  readsAssignedCasesOnly,
  CASE_ASSIGNABLE,
  CASE_FIELD_RULES,
  CASE_FIELDS,
  CASE_HOLDABLE,
  CASE_MESSAGES,
  IMAGE_ASSIGNABLE_STATUS,
  IMAGE_STATUS_AT_STAGE,
  MANUAL_READER_PERMISSION,
  REVERT_ANY_PERMISSION,
  READ_REOPENABLE,
  caseFieldError,
  caseRequiredError,
  forwardStepFrom,
  imageQcStepFrom,
  imageStatusOnAssign,
  markScoredOutcome,
  type ForwardStep,
  isEmptyValue,
  mayViewCaseField,
  normaliseCaseField,
  revertChoices,
  revertRefused,
  stepNotPermitted,
  valuesDiffer,
  CASE_STATUS_LABELS,
  IMAGE_ACTION_MESSAGES,
  type AssignAdjudicatorRequest,
  type SignatureKind,
  SIGNATURE_MESSAGES,
  type CaseField,
  type CaseStatus,
  type CaseView,
  type CreateCaseRequest,
  type EditCaseRequest,
  type ImageStatus,
} from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import type { DB } from '../../platform/db/schema.js';
import type { Principal } from '../../platform/auth/principal.js';
import { recordAudit, type Actor, type AuditEvent } from '../../platform/audit/audit.js';
import {
  changeEvents,
  requireReasonsForChange,
  type FieldChange,
  type ReasonRule,
} from '../../platform/audit/changes.js';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError } from '../../platform/errors.js';
import { pageWindow, parseSort } from '../../platform/db/paging.js';
import {
  assignableImages,
  caseImages,
  caseReaders,
  latestCaseComment,
  listStudyCases,
  readersInStudy,
  searchCases,
  selectCase,
} from './caseQueries.js';
import { revokeCaseReaders } from '../../access/readerVisibility.js';
import { lockImage } from '../images/imageQueries.js';
import {
  adjudicationRequired,
  clearReadOutcomes,
  freezeReadOutcomes,
  frozenValues,
} from '../outcomes/outcomeService.js';
import { authenticateSigner, recordSignature, studySigns, type Signer } from '../signatures/signatureService.js';
import { presentCase } from './casePresenter.js';

type Tx = Transaction<DB>;

/** What signs an action where the study asks for electronic signatures (issue 30). */
interface SigningOptions {
  signaturePassword?: string | undefined;
  /** The request's session: a single sign-on account's fresh sign-in at its provider is stamped there. */
  sessionId?: string | null | undefined;
}

/** The case row's column of each case field. */
export const CASE_FIELD_COLUMN: Record<
  CaseField,
  'proc_id' | 'histo_procedure_id' | 'subject_id' | 'site_id' | 'visit_id'
> = {
  procId: 'proc_id',
  histoProcedureId: 'histo_procedure_id',
  subjectId: 'subject_id',
  siteId: 'site_id',
  visitId: 'visit_id',
};

export interface LockedCase {
  id: number;
  study_id: number;
  status: CaseStatus;
  on_hold_from: CaseStatus | null;
  prev_workflow_statuses: CaseStatus[];
  proc_id: string | null;
  histo_procedure_id: string | null;
  subject_id: string | null;
  site_id: string | null;
  visit_id: string | null;
}

/** The case row, locked for the caller's transaction (404 'Case not found' when there is none). */
export async function lockCase(tx: Tx, caseId: number): Promise<LockedCase> {
  const row = await tx
    .selectFrom('cases')
    .select([
      'id',
      'study_id',
      'status',
      'on_hold_from',
      'prev_workflow_statuses',
      'proc_id',
      'histo_procedure_id',
      'subject_id',
      'site_id',
      'visit_id',
    ])
    .where('id', '=', caseId)
    .forUpdate()
    .executeTakeFirst();
  if (!row) throw new NotFoundError(CASE_MESSAGES.caseNotFound);
  return {
    ...row,
    status: row.status as CaseStatus,
    on_hold_from: row.on_hold_from as CaseStatus | null,
    prev_workflow_statuses: row.prev_workflow_statuses as CaseStatus[],
  };
}

/** Every case edit needs a reason for each changed field and list (doc 2 §5), first values included. */
const caseEditReasonRule = (before: unknown, after: unknown, reason: string | null | undefined) =>
  valuesDiffer(before, after) && isEmptyValue(reason) ? CASE_MESSAGES.editReasonRequired : null;

/** A reason the spec makes mandatory for an action: trimmed, or the action's own message. */
function requiredReason(reason: string | null | undefined, message: string): string {
  const trimmed = reason?.trim() ?? '';
  if (trimmed === '') throw new BadRequestError(message);
  return trimmed;
}

/**
 * Cases: creation, edits with reasons, the workflow of docs/WORKFLOW.md (forward, back, hold,
 * archive), image assignment. Every mutation locks the case row, checks its rule, changes the case
 * and its images and writes the audit rows in one transaction; a refusal changes nothing. The lists
 * (the case search, the Cases tab, the case dialog's images) apply here what a user may search and
 * sort by; their presenters, what the user may see of each row.
 */
export class CaseService {
  constructor(private readonly db: Db) {}

  /** The Case as `principal` may see it (the route's scope has checked visibility). */
  async view(principal: Principal, caseId: number): Promise<CaseView> {
    const row = await selectCase(this.db, caseId, principal);
    if (!row) throw new NotFoundError(CASE_MESSAGES.caseNotFound);
    const [readers, images, comment] = await Promise.all([
      caseReaders(this.db, caseId, row.study_id),
      caseImages(this.db, caseId, principal),
      latestCaseComment(this.db, caseId, principal),
    ]);
    return presentCase(row, readers, images, principal, comment);
  }

  /**
   * GET /api/cases: the case search of the Assign to Case dialog (cases that take images) and the
   * Move dialog (not Completed or Processed). Subject, site and visit IDs are searched only for a
   * user who may view all three: a match would reveal them.
   */
  async search(principal: Principal, query: z.output<typeof caseSearchQuerySchema>) {
    const { studyId, searchText, purpose } = query;
    const statuses =
      purpose === 'assign'
        ? CASE_ASSIGNABLE
        : purpose === 'move'
          ? CASE_STATUSES.filter((s) => !CASE_MOVE_EXCLUDED.includes(s))
          : undefined;
    return searchCases(this.db, principal, {
      studyId,
      text: searchText?.trim() || undefined,
      ...(statuses ? { statuses } : {}),
      blindedFields: (['subjectId', 'siteId', 'visitId'] as const).every((f) => mayViewCaseField(principal.actions, f)),
    });
  }

  /**
   * GET /api/studies/{id}/cases: one page of the study's Cases tab. Blinded fields are never sorted
   * by for a user who may not see them (the order would tell): the list falls back to the newest first.
   */
  async studyCases(principal: Principal, studyId: number, query: z.output<typeof studyCaseListQuerySchema>) {
    const { procId, status, assignee, page, pageSize, sort } = query;
    const parsed = parseSort<StudyCaseSortKey>(sort);
    const sortable =
      (parsed.key !== 'subjectId' && parsed.key !== 'visitId') || mayViewCaseField(principal.actions, parsed.key);
    const { key, descending } = sortable ? parsed : parseSort<StudyCaseSortKey>('-createdAt');
    return listStudyCases(this.db, principal, {
      studyId,
      procId: procId?.trim() || undefined,
      status,
      assignee: assignee === undefined || assignee === 'any' || assignee === 'unassigned' ? assignee : Number(assignee),
      sort: key,
      descending,
      ...pageWindow(page, pageSize),
    });
  }

  /**
   * GET /api/studies/{id}/cases/images: the case dialog's images that may join a case, by id, or by
   * file name only for a user with the file-name permission (else a match would reveal the name).
   */
  async assignableImages(principal: Principal, studyId: number, query: z.output<typeof caseImagesQuerySchema>) {
    const { id, name, exclude } = query;
    return assignableImages(this.db, studyId, {
      id,
      name: name?.trim() || undefined,
      exclude: exclude ? exclude.split(',').map(Number) : [],
      searchNames: principal.actions.has(VIEW_FILE_NAME_PERMISSION),
    });
  }

  /** POST /api/cases. */
  async create(principal: Principal, actor: Actor, request: CreateCaseRequest): Promise<number> {
    const values: Record<CaseField, string | null> = {
      procId: normaliseCaseField(request.procId),
      histoProcedureId: null,
      subjectId: normaliseCaseField(request.subjectId),
      siteId: normaliseCaseField(request.siteId),
      visitId: normaliseCaseField(request.visitId),
    };
    for (const field of CASE_FIELDS) {
      const message = caseRequiredError(field, values[field]) ?? caseFieldError(field, values[field]);
      if (message) throw new BadRequestError(message);
      if (values[field] !== null && !mayViewCaseField(principal.actions, field)) throw new ForbiddenError();
    }
    const readers = [...new Set(request.readers ?? [])];
    const images = [...new Set(request.images ?? [])];
    if (readers.length > 0 && !principal.actions.has(MANUAL_READER_PERMISSION))
      throw new ForbiddenError(CASE_MESSAGES.manualReadersNotAllowed);

    return this.db.transaction().execute(async (tx) => {
      await this.checkVisit(tx, request.studyId, values.visitId);
      await this.checkProcIdFree(tx, request.studyId, values.procId, null);
      await this.checkReaders(tx, request.studyId, readers);
      const created = await tx
        .insertInto('cases')
        .values({
          study_id: request.studyId,
          proc_id: values.procId,
          subject_id: values.subjectId,
          site_id: values.siteId,
          visit_id: values.visitId,
          status: 'PENDING_LAB_QC',
          prev_workflow_statuses: [],
          created_by: principal.id,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const events: AuditEvent[] = [
        {
          action: 'CASE_CREATED',
          entityType: 'case',
          entityId: created.id,
          studyId: request.studyId,
          newValue: {
            procId: values.procId,
            subjectId: values.subjectId,
            siteId: values.siteId,
            visitId: values.visitId,
          },
        },
      ];
      if (readers.length > 0) {
        await tx
          .insertInto('case_readers')
          .values(readers.map((userId) => ({ case_id: created.id, user_id: userId })))
          .execute();
        events.push({
          action: 'CASE_READERS_CHANGED',
          entityType: 'case',
          entityId: created.id,
          studyId: request.studyId,
          field: 'readers',
          oldValue: [],
          newValue: readers,
        });
      }
      const locked = await lockCase(tx, created.id);
      events.push(...(await this.attachImages(tx, locked, images, null)));
      await recordAudit(tx, actor, events);
      return created.id;
    });
  }

  /**
   * PATCH /api/cases/{id}: only changed fields; each change needs its reason (the case dialog's
   * rule), or the caller's rule (Image Management's Edit Column asks one only where a value existed).
   */
  async edit(
    principal: Principal,
    actor: Actor,
    caseId: number,
    request: EditCaseRequest,
    reasonRule: ReasonRule = caseEditReasonRule,
  ): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      const current = await lockCase(tx, caseId);
      const changes: FieldChange[] = [];
      const values: Partial<Record<CaseField, string | null>> = {};
      for (const field of CASE_FIELDS) {
        const given = request[field];
        if (!given) continue;
        const value = normaliseCaseField(given.value);
        const message = (field === 'procId' ? caseRequiredError(field, value) : null) ?? caseFieldError(field, value);
        if (message) throw new BadRequestError(message);
        if (!valuesDiffer(current[CASE_FIELD_COLUMN[field]], value)) continue;
        // A field the user may not see is one they may not change (blinded fields).
        if (!mayViewCaseField(principal.actions, field)) throw new ForbiddenError();
        values[field] = value;
        changes.push({ field, before: current[CASE_FIELD_COLUMN[field]], after: value, reason: given.reasonForChange });
      }
      const readerIds = request.readers ? [...new Set(request.readers.ids)] : null;
      const imageIds = request.images ? [...new Set(request.images.ids)] : null;
      // The current lists are read only when the request edits them.
      const currentReaders = readerIds
        ? (
            await tx
              .selectFrom('case_readers')
              .select('user_id')
              .where('case_id', '=', caseId)
              .where('role', '=', 'PRIMARY')
              .orderBy('user_id')
              .execute()
          ).map((r) => r.user_id)
        : [];
      const currentImages = imageIds
        ? (
            await tx
              .selectFrom('images')
              .select('id')
              .where('case_id', '=', caseId)
              .where('status', '!=', 'ARCHIVED')
              .orderBy('id')
              .execute()
          ).map((r) => r.id)
        : [];
      const sorted = (ids: number[]) => [...ids].sort((a, b) => a - b);
      if (readerIds && valuesDiffer(currentReaders, sorted(readerIds)))
        changes.push({
          field: 'readers',
          before: currentReaders,
          after: sorted(readerIds),
          reason: request.readers?.reasonForChange,
        });
      if (imageIds && valuesDiffer(currentImages, sorted(imageIds)))
        changes.push({
          field: 'images',
          before: currentImages,
          after: sorted(imageIds),
          reason: request.images?.reasonForChange,
        });
      const real = requireReasonsForChange(changes, reasonRule);
      if (real.length === 0) return;

      const fieldChanges = real.filter((c) => c.field !== 'readers' && c.field !== 'images');
      if (values.visitId !== undefined) await this.checkVisit(tx, current.study_id, values.visitId);
      if (values.procId !== undefined) await this.checkProcIdFree(tx, current.study_id, values.procId, caseId);
      if (fieldChanges.length > 0) {
        const set: Partial<Record<(typeof CASE_FIELD_COLUMN)[CaseField], string | null>> = {};
        for (const change of fieldChanges)
          set[CASE_FIELD_COLUMN[change.field as CaseField]] = change.after as string | null;
        await tx
          .updateTable('cases')
          .set({ ...set, updated_at: new Date() })
          .where('id', '=', caseId)
          .execute();
      }
      const base = { action: 'CASE_EDITED', entityType: 'case', entityId: caseId, studyId: current.study_id };
      const events: AuditEvent[] = changeEvents(base, fieldChanges);

      const readerChange = real.find((c) => c.field === 'readers');
      if (readerChange && readerIds) {
        if (!principal.actions.has(MANUAL_READER_PERMISSION))
          throw new ForbiddenError(CASE_MESSAGES.manualReadersNotAllowed);
        await this.checkReaders(tx, current.study_id, readerIds);
        const removed = currentReaders.filter((id) => !readerIds.includes(id));
        const added = readerIds.filter((id) => !currentReaders.includes(id));
        const adjudicator = await tx
          .selectFrom('case_readers')
          .select('user_id')
          .where('case_id', '=', caseId)
          .where('role', '=', 'ADJUDICATOR')
          .executeTakeFirst();
        if (adjudicator && added.includes(adjudicator.user_id))
          throw new BadRequestError(CASE_MESSAGES.adjudicatorIsReader);
        if (removed.length > 0) {
          await revokeCaseReaders(tx, caseId, removed);
          await tx.deleteFrom('case_readers').where('case_id', '=', caseId).where('user_id', 'in', removed).execute();
        }
        if (added.length > 0)
          await tx
            .insertInto('case_readers')
            .values(added.map((userId) => ({ case_id: caseId, user_id: userId })))
            .execute();
        events.push(...changeEvents({ ...base, action: 'CASE_READERS_CHANGED' }, [readerChange]));
        // A removed reader's read goes with their assignment, and so do its frozen values (issue 30).
        events.push(
          ...(await clearReadOutcomes(tx, {
            caseId,
            studyId: current.study_id,
            readerIds: removed,
            reason: readerChange.reason?.trim() ?? null,
          })),
        );
      }
      const imageChange = real.find((c) => c.field === 'images');
      if (imageChange && imageIds) {
        const reason = imageChange.reason?.trim() ?? null;
        const removed = currentImages.filter((id) => !imageIds.includes(id));
        const added = imageIds.filter((id) => !currentImages.includes(id));
        events.push(...changeEvents({ ...base, action: 'CASE_IMAGES_CHANGED' }, [imageChange]));
        events.push(...(await this.detachImages(tx, current, removed, reason)));
        events.push(...(await this.attachImages(tx, current, added, reason)));
      }
      await recordAudit(tx, actor, events);
    });
  }

  /**
   * PATCH /api/cases/{id}/status/forward: the step of docs/WORKFLOW.md, with its permission. From
   * PROCESSED it is Mark as Scored: the reader's own read, and the case completes with the last one.
   * Returns the message to show.
   */
  async forward(
    principal: Principal,
    actor: Actor,
    caseId: number,
    options: { includeAiCounts?: boolean | undefined } & SigningOptions = {},
  ): Promise<string> {
    const signer = await this.signerFor(principal, actor, await this.caseStudy(caseId), options);
    return this.db.transaction().execute(async (tx) => {
      const current = await lockCase(tx, caseId);
      const step = forwardStepFrom(current.status);
      if (!step) throw new ConflictError(CASE_MESSAGES.unableToTransition);
      // The route lets in a holder of any step's permission; this step needs its own (doc 3 §8's message).
      if (!principal.actions.has(step.permission))
        throw new ForbiddenError(`${CASE_MESSAGES.unableToTransition} ${stepNotPermitted(step.permission)}`);
      const live = await this.liveImageCount(tx, caseId);
      if (live === 0) throw new ConflictError(`${CASE_MESSAGES.unableToTransition} ${CASE_MESSAGES.noLiveImages}`);
      const events: AuditEvent[] = [];
      if (step.to === 'COMPLETED') {
        const readers = (
          await tx
            .selectFrom('case_readers')
            .select(['user_id', 'read_at', 'role'])
            .where('case_id', '=', caseId)
            .execute()
        ).map((r) => ({ userId: r.user_id, readAt: r.read_at, role: r.role }));
        // Processed: a primary reader's read; Pending Adjudication: the adjudicator's (issue 30).
        const role = current.status === 'PENDING_ADJUDICATION' ? 'ADJUDICATOR' : 'PRIMARY';
        const outcome = markScoredOutcome(readers, principal.id, current.status);
        if (!outcome.assigned)
          throw new ForbiddenError(
            `${CASE_MESSAGES.unableToTransition} ${
              role === 'ADJUDICATOR' ? CASE_MESSAGES.notAdjudicator : CASE_MESSAGES.notAssignedReader
            }`,
          );
        if (outcome.alreadyRead)
          throw new ConflictError(`${CASE_MESSAGES.unableToTransition} ${CASE_MESSAGES.alreadyScored}`);
        const readAt = new Date();
        const includeAiCounts = options.includeAiCounts ?? null;
        await tx
          .updateTable('case_readers')
          // The reader's choice of imported AI counts belongs to their read (issue 26), not the image.
          .set({ read_at: readAt, include_ai_counts: includeAiCounts })
          .where('case_id', '=', caseId)
          .where('user_id', '=', principal.id)
          .execute();
        events.push(
          {
            action: 'CASE_READ_MARKED',
            entityType: 'case',
            entityId: caseId,
            studyId: current.study_id,
            field: 'read_at',
            newValue: { reader: principal.username, includeAiCounts },
          },
          // The reader's endpoint values are frozen with their read (issue 30).
          ...(await freezeReadOutcomes(tx, {
            caseId,
            studyId: current.study_id,
            reader: { id: principal.id, username: principal.username },
            scoredAt: readAt,
            includeAiCounts,
            role,
          })),
        );
        // In a study that signs its reads, the read is the reader's electronic signature (issue 30):
        // of the case, their role and the values frozen with it.
        events.push(
          ...(await this.sign(tx, signer, {
            kind: step.signature,
            studyId: current.study_id,
            caseId,
            signedAt: readAt,
            content: {
              record: 'case_read',
              caseId,
              readerId: principal.id,
              role,
              readAt: readAt.toISOString(),
              includeAiCounts,
              values: await frozenValues(tx, caseId, principal.id, role),
            },
          })),
        );
        if (!outcome.completes) {
          await recordAudit(tx, actor, events);
          return CASE_MESSAGES.scored;
        }
        // The last primary read: the case completes unless the study's rule asks for adjudication.
        // The reader is told only that their case was scored — as when another read is still open —
        // so that a read's disagreement with the others never shows to them.
        if (role === 'PRIMARY' && (await adjudicationRequired(tx, caseId, current.study_id))) {
          events.push(...(await this.awaitAdjudication(tx, current)));
          await recordAudit(tx, actor, events);
          return CASE_MESSAGES.scored;
        }
      }
      if (step.to !== 'COMPLETED') events.push(...(await this.signQc(tx, signer, current, step, null)));
      events.push(...(await this.advance(tx, principal, current, step)));
      await recordAudit(tx, actor, events);
      return step.to === 'COMPLETED' ? CASE_MESSAGES.scoredComplete : CASE_MESSAGES.forwarded;
    });
  }

  /** PATCH /api/images/{id}/pass-qc: one image's QC; the case follows when all its images have passed. */
  async passImageQc(principal: Principal, actor: Actor, imageId: number, options: SigningOptions = {}): Promise<void> {
    // 'Unable to transition image status.' (doc 2 §8, doc 3 §8), then Lamina's reason.
    const failure = IMAGE_ACTION_MESSAGES.unableToTransitionImage;
    const image = await this.db.selectFrom('images').select('study_id').where('id', '=', imageId).executeTakeFirst();
    const signer = await this.signerFor(principal, actor, image?.study_id ?? null, options);
    await this.db.transaction().execute(async (tx) => {
      const image = await lockImage(tx, imageId);
      if (image.case_id === null) throw new ConflictError(`${failure} ${IMAGE_ACTION_MESSAGES.notInCase}`);
      const current = await lockCase(tx, image.case_id);
      const step = imageQcStepFrom(image.status as ImageStatus);
      if (!step || current.status !== step.caseStatus)
        throw new ConflictError(`${failure} ${IMAGE_ACTION_MESSAGES.qcNotNow}`);
      // The route lets in a holder of either step's permission; this step needs its own.
      if (!principal.actions.has(step.permission))
        throw new ForbiddenError(`${failure} ${stepNotPermitted(step.permission)}`);
      await tx
        .updateTable('images')
        .set({ status: step.to, updated_at: new Date() })
        .where('id', '=', imageId)
        .execute();
      const events: AuditEvent[] = [
        ...(await this.signQc(tx, signer, current, step, { id: imageId, from: image.status as ImageStatus })),
        {
          action: 'IMAGE_QC_PASSED',
          entityType: 'image',
          entityId: imageId,
          studyId: current.study_id,
          field: 'status',
          oldValue: image.status,
          newValue: step.to,
        },
      ];
      const behind = await tx
        .selectFrom('images')
        .select('id')
        .where('case_id', '=', current.id)
        .where('status', 'not in', ['ARCHIVED', step.to])
        .limit(1)
        .executeTakeFirst();
      const caseStep = forwardStepFrom(current.status);
      if (!behind && caseStep) events.push(...(await this.advance(tx, principal, current, caseStep)));
      await recordAudit(tx, actor, events);
    });
  }

  /** PATCH /api/cases/{id}/comment. */
  async comment(
    principal: Principal,
    actor: Actor,
    caseId: number,
    request: { imageId?: number | null | undefined; comment: string },
  ): Promise<void> {
    const text = request.comment.trim();
    if (text === '') throw new BadRequestError(`${CASE_MESSAGES.unableToComment(caseId)}. Comment is required`);
    await this.db.transaction().execute(async (tx) => {
      const current = await lockCase(tx, caseId);
      const imageId = request.imageId ?? null;
      if (imageId !== null) {
        const image = await tx
          .selectFrom('images')
          .select('id')
          .where('id', '=', imageId)
          .where('case_id', '=', caseId)
          .executeTakeFirst();
        if (!image) throw new BadRequestError(`${CASE_MESSAGES.unableToComment(caseId)}. The image is not in the case`);
      }
      await tx
        .insertInto('case_comments')
        .values({
          case_id: caseId,
          image_id: imageId,
          user_id: principal.id,
          comment: text,
          by_reader: readsAssignedCasesOnly(principal.workAsRole),
        })
        .execute();
      await recordAudit(tx, actor, [
        {
          action: 'CASE_COMMENTED',
          entityType: 'case',
          entityId: caseId,
          studyId: current.study_id,
          field: 'comment',
          newValue: { imageId, comment: text },
        },
      ]);
    });
  }

  /**
   * Every primary reader has marked the case and the adjudication rule fired (issue 30): the case
   * waits in Pending Adjudication for its adjudicator; its images stay Ready for Reading.
   */
  private async awaitAdjudication(tx: Tx, current: LockedCase): Promise<AuditEvent[]> {
    return [await this.moveStatus(tx, current, 'PENDING_ADJUDICATION', 'CASE_STATUS_FORWARDED')];
  }

  /**
   * The case's status moves to `to`: the status it leaves joins its history, `set` changes more of
   * the row, and the event (forwarded, or reverted with its reason) is returned for the audit.
   */
  private async moveStatus(
    tx: Tx,
    current: LockedCase,
    to: CaseStatus,
    action: 'CASE_STATUS_FORWARDED' | 'CASE_STATUS_REVERTED',
    more: { set?: Updateable<DB['cases']>; reason?: string | null } = {},
  ): Promise<AuditEvent> {
    await tx
      .updateTable('cases')
      .set({
        ...more.set,
        status: to,
        prev_workflow_statuses: [...current.prev_workflow_statuses, current.status],
        ...(action === 'CASE_STATUS_REVERTED' && { case_status_reverted: true }),
        updated_at: new Date(),
      })
      .where('id', '=', current.id)
      .execute();
    return {
      action,
      entityType: 'case',
      entityId: current.id,
      studyId: current.study_id,
      field: 'status',
      oldValue: current.status,
      newValue: to,
      ...(action === 'CASE_STATUS_REVERTED' && { reason: more.reason ?? null }),
    };
  }

  /**
   * The case leaves adjudication (a primary read reopened, the case set back): its adjudicator's
   * assignment goes, with their read and its frozen values, and their tile access stops.
   */
  private async removeAdjudicator(tx: Tx, current: LockedCase, reason: string | null): Promise<AuditEvent[]> {
    const adjudicator = await tx
      .selectFrom('case_readers')
      .select('user_id')
      .where('case_id', '=', current.id)
      .where('role', '=', 'ADJUDICATOR')
      .executeTakeFirst();
    if (!adjudicator) return [];
    const cleared = await clearReadOutcomes(tx, {
      caseId: current.id,
      studyId: current.study_id,
      readerIds: [adjudicator.user_id],
      reason,
    });
    await revokeCaseReaders(tx, current.id, [adjudicator.user_id]);
    await tx
      .deleteFrom('case_readers')
      .where('case_id', '=', current.id)
      .where('user_id', '=', adjudicator.user_id)
      .execute();
    return [
      {
        action: 'CASE_ADJUDICATOR_CHANGED',
        entityType: 'case',
        entityId: current.id,
        studyId: current.study_id,
        field: 'adjudicator',
        oldValue: adjudicator.user_id,
        newValue: null,
        reason,
      },
      ...cleared,
    ];
  }

  /**
   * PATCH /api/cases/{id}/adjudicator (issue 30): ISC or DM assigns the adjudicator of a case
   * pending adjudication — a central reader of the study who is not one of the case's readers. It
   * gives them sight of the case (a case_readers row of role ADJUDICATOR) and its read. Replacing
   * an adjudicator needs a reason; the one replaced loses sight of the case.
   */
  async assignAdjudicator(actor: Actor, caseId: number, request: AssignAdjudicatorRequest): Promise<void> {
    const refused = (message: string) => `${CASE_MESSAGES.unableToAssignAdjudicator} ${message}`;
    await this.db.transaction().execute(async (tx) => {
      const current = await lockCase(tx, caseId);
      if (current.status !== 'PENDING_ADJUDICATION')
        throw new ConflictError(refused(CASE_MESSAGES.notPendingAdjudication));
      const assigned = await tx
        .selectFrom('case_readers')
        .select(['user_id', 'role'])
        .where('case_id', '=', caseId)
        .execute();
      if (assigned.some((r) => r.role === 'PRIMARY' && r.user_id === request.readerId))
        throw new BadRequestError(refused(CASE_MESSAGES.adjudicatorIsReader));
      if (!(await readersInStudy(tx, current.study_id, [request.readerId])).has(request.readerId))
        throw new BadRequestError(refused(CASE_MESSAGES.adjudicatorNotInStudy));
      const previous = assigned.find((r) => r.role === 'ADJUDICATOR')?.user_id ?? null;
      if (previous === request.readerId) throw new ConflictError(refused(CASE_MESSAGES.adjudicatorUnchanged));
      const reason = request.reasonForChange?.trim() || null;
      if (previous !== null && reason === null) throw new BadRequestError(CASE_MESSAGES.adjudicatorReasonRequired);
      if (previous !== null) {
        await revokeCaseReaders(tx, caseId, [previous]);
        await tx.deleteFrom('case_readers').where('case_id', '=', caseId).where('user_id', '=', previous).execute();
      }
      await tx
        .insertInto('case_readers')
        .values({ case_id: caseId, user_id: request.readerId, role: 'ADJUDICATOR' })
        .execute();
      await recordAudit(tx, actor, [
        {
          action: 'CASE_ADJUDICATOR_CHANGED',
          entityType: 'case',
          entityId: caseId,
          studyId: current.study_id,
          field: 'adjudicator',
          oldValue: previous,
          newValue: request.readerId,
          reason,
        },
      ]);
    });
  }

  /** The study of a case (null: no such case; the route's scope answers that). */
  private async caseStudy(caseId: number): Promise<number | null> {
    const row = await this.db.selectFrom('cases').select('study_id').where('id', '=', caseId).executeTakeFirst();
    return row?.study_id ?? null;
  }

  /**
   * The signer of an action where the study signs it (issue 30), authenticated by their password
   * before the action's transaction: a wrong password is a failed login whatever the action does.
   */
  private async signerFor(
    principal: Principal,
    actor: Actor,
    studyId: number | null,
    options: SigningOptions,
  ): Promise<Signer | null> {
    if (studyId === null || !(await studySigns(this.db, studyId))) return null;
    return authenticateSigner(
      this.db,
      principal,
      { password: options.signaturePassword, sessionId: options.sessionId ?? null },
      actor,
    );
  }

  /**
   * The signature of an action, in its transaction: recorded when the signer gave their password; a
   * study that signs the action (asked again here: the setting may have changed since) refuses it
   * without one.
   */
  private async sign(tx: Tx, signer: Signer | null, signed: Parameters<typeof recordSignature>[2]) {
    if (signer) return recordSignature(tx, signer, signed);
    if (await studySigns(tx, signed.studyId)) throw new BadRequestError(SIGNATURE_MESSAGES.required);
    return [];
  }

  /** A QC pass signed (issue 30): of the case's step, or of one image's. */
  private async signQc(
    tx: Tx,
    signer: Signer | null,
    current: LockedCase,
    step: { from: string; to: string; signature: SignatureKind },
    image: { id: number; from: ImageStatus } | null,
  ): Promise<AuditEvent[]> {
    const signedAt = new Date();
    return this.sign(tx, signer, {
      kind: step.signature,
      studyId: current.study_id,
      caseId: current.id,
      imageId: image?.id ?? null,
      signedAt,
      content: image
        ? { record: 'image_qc', imageId: image.id, caseId: current.id, from: image.from, to: step.to }
        : {
            record: 'case_qc',
            caseId: current.id,
            from: step.from,
            to: step.to,
            images: (
              await tx
                .selectFrom('images')
                .select('id')
                .where('case_id', '=', current.id)
                .where('status', '!=', 'ARCHIVED')
                .orderBy('id')
                .execute()
            ).map((i) => i.id),
          },
    });
  }

  /** The case takes a forward step: status, history, the step's user column, its images. */
  private async advance(tx: Tx, principal: Principal, current: LockedCase, step: ForwardStep): Promise<AuditEvent[]> {
    const now = new Date();
    return [
      await this.moveStatus(tx, current, step.to, 'CASE_STATUS_FORWARDED', {
        set: {
          [step.records]: principal.id,
          ...(step.to === 'PROCESSED' ? { qc_completed_at: now } : {}),
          ...(step.to === 'COMPLETED' ? { read_completed_at: now } : {}),
        },
      }),
      ...(await this.moveImages(tx, current, [step.images.from], step.images.to, null)),
    ];
  }

  /** PATCH /api/cases/{id}/status/back: to an allowed earlier status, with a reason; the images follow. */
  async back(
    principal: Principal,
    actor: Actor,
    caseId: number,
    request: { value?: CaseStatus | null | undefined; reason?: string | null | undefined },
  ): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      const current = await lockCase(tx, caseId);
      const target = request.value ?? null;
      const label = target ? CASE_STATUS_LABELS[target] : 'a new status';
      if (!target || isEmptyValue(request.reason)) throw new BadRequestError(revertRefused(label));
      const choices = revertChoices(
        { status: current.status, prevWorkflowStatuses: current.prev_workflow_statuses },
        principal.actions.has(REVERT_ANY_PERMISSION),
      );
      const stage = choices.find((s) => s === target);
      if (!stage) throw new ConflictError(`${CASE_MESSAGES.unableToTransition} ${revertRefused(label)}`);
      const reason = request.reason?.trim() ?? null;
      const events: AuditEvent[] = [
        await this.moveStatus(tx, current, stage, 'CASE_STATUS_REVERTED', { reason }),
        ...(await this.moveImages(tx, current, null, IMAGE_STATUS_AT_STAGE[stage], reason)),
        // Set back, the case is read again from the start: no adjudication any more (issue 30).
        ...(await this.removeAdjudicator(tx, current, reason)),
        ...(await this.reopenReads(tx, caseId, current.study_id, reason)),
      ];
      await recordAudit(tx, actor, events);
    });
  }

  /**
   * A reverted case is read again: every reader's Mark as Scored is undone, which unlocks their
   * annotations (issue 14: a reader's annotations are locked once they marked the case scored) and
   * clears their frozen endpoint values (issue 30).
   */
  private async reopenReads(tx: Tx, caseId: number, studyId: number, reason: string | null): Promise<AuditEvent[]> {
    const reopened = await tx
      .updateTable('case_readers')
      .set({ read_at: null, include_ai_counts: null })
      .where('case_id', '=', caseId)
      .where('read_at', 'is not', null)
      .returning('user_id')
      .execute();
    return [
      ...reopened.map((r) => ({
        action: 'CASE_READ_REOPENED',
        entityType: 'case',
        entityId: caseId,
        studyId,
        field: 'read_at',
        oldValue: `reader ${r.user_id}`,
        newValue: null,
        reason,
      })),
      ...(await clearReadOutcomes(tx, { caseId, studyId, readerIds: reopened.map((r) => r.user_id), reason })),
    ];
  }

  /**
   * PATCH /api/cases/{id}/reads/{readerId}/reopen (issue 29): one reader's Mark as Scored is undone,
   * with a reason — their annotations on the case's images unlock (annotationService.readLocked), the
   * other readers' reads and locks stay. A completed case returns to Processed (its images to Ready
   * for Reading) until that reader marks it again. 404 when the user is not a reader of the case,
   * 409 when they have not scored it or the case is not being read.
   */
  async reopenRead(actor: Actor, caseId: number, readerId: number, reasonForChange: string | null | undefined) {
    const reason = requiredReason(reasonForChange, CASE_MESSAGES.reopenReasonRequired);
    await this.db.transaction().execute(async (tx) => {
      const current = await lockCase(tx, caseId);
      const read = await tx
        .selectFrom('case_readers')
        .innerJoin('users', 'users.id', 'case_readers.user_id')
        .select(['case_readers.read_at', 'case_readers.role', 'users.username'])
        .where('case_readers.case_id', '=', caseId)
        .where('case_readers.user_id', '=', readerId)
        .forUpdate(['case_readers'])
        .executeTakeFirst();
      if (!read) throw new NotFoundError(CASE_MESSAGES.notReaderOfCase);
      if (read.read_at === null)
        throw new ConflictError(`${CASE_MESSAGES.unableToReopenRead} ${CASE_MESSAGES.readNotScored}`);
      if (!READ_REOPENABLE.includes(current.status))
        throw new ConflictError(`${CASE_MESSAGES.unableToReopenRead} ${CASE_MESSAGES.reopenNotNow}`);
      await tx
        .updateTable('case_readers')
        .set({ read_at: null, include_ai_counts: null })
        .where('case_id', '=', caseId)
        .where('user_id', '=', readerId)
        .execute();
      const events: AuditEvent[] = [
        {
          action: 'CASE_READ_REOPENED',
          entityType: 'case',
          entityId: caseId,
          studyId: current.study_id,
          field: 'read_at',
          oldValue: { reader: read.username, readAt: read.read_at.toISOString() },
          newValue: null,
          reason,
        },
        ...(await clearReadOutcomes(tx, { caseId, studyId: current.study_id, readerIds: [readerId], reason })),
      ];
      // Issue 30: a primary read reopened takes the case out of adjudication (the primary values
      // change, so the rule is asked again when it is marked); the adjudicator's read reopened
      // returns a completed case to Pending Adjudication.
      const back = read.role === 'ADJUDICATOR' ? 'PENDING_ADJUDICATION' : 'PROCESSED';
      if (read.role === 'PRIMARY') events.push(...(await this.removeAdjudicator(tx, current, reason)));
      if (current.status !== back) {
        events.push(
          await this.moveStatus(tx, current, back, 'CASE_STATUS_REVERTED', {
            set: { read_completed_at: null },
            reason,
          }),
        );
        if (current.status === 'COMPLETED')
          events.push(
            ...(await this.moveImages(
              tx,
              current,
              [IMAGE_STATUS_AT_STAGE.COMPLETED],
              IMAGE_STATUS_AT_STAGE.PROCESSED,
              reason,
            )),
          );
      }
      await recordAudit(tx, actor, events);
    });
  }

  /** PATCH /api/cases/{id}/status/on_hold and /off_hold. */
  async hold(actor: Actor, caseId: number, on: boolean, reasonForChange: string | null | undefined): Promise<void> {
    const failure = on ? CASE_MESSAGES.couldNotHold : CASE_MESSAGES.couldNotRemoveHold;
    const reason = requiredReason(reasonForChange, `${failure} ${MESSAGES_REASON}`);
    await this.db.transaction().execute(async (tx) => {
      const current = await lockCase(tx, caseId);
      if (on ? !CASE_HOLDABLE.includes(current.status) : current.status !== 'ON_HOLD' || !current.on_hold_from)
        throw new ConflictError(failure);
      const to: CaseStatus = on ? 'ON_HOLD' : (current.on_hold_from as CaseStatus);
      await tx
        .updateTable('cases')
        .set({
          status: to,
          on_hold_from: on ? current.status : null,
          prev_workflow_statuses: [...current.prev_workflow_statuses, current.status],
          updated_at: new Date(),
        })
        .where('id', '=', caseId)
        .execute();
      await recordAudit(tx, actor, [
        {
          action: on ? 'CASE_PUT_ON_HOLD' : 'CASE_HOLD_REMOVED',
          entityType: 'case',
          entityId: caseId,
          studyId: current.study_id,
          field: 'status',
          oldValue: current.status,
          newValue: to,
          reason,
        },
      ]);
    });
  }

  /** PATCH /api/cases/{id}/archive: the case and all its images, with a reason. */
  async archive(principal: Principal, actor: Actor, caseId: number, reasonForChange: string | null | undefined) {
    if (!principal.actions.has(ARCHIVE_CASE_PERMISSION)) throw new ForbiddenError();
    const reason = requiredReason(reasonForChange, CASE_MESSAGES.archiveReasonRequired);
    await this.db.transaction().execute(async (tx) => {
      const current = await lockCase(tx, caseId);
      if (current.status === 'ARCHIVED') throw new ConflictError(CASE_MESSAGES.unableToTransition);
      await revokeCaseReaders(tx, caseId);
      const now = new Date();
      await tx
        .updateTable('cases')
        .set({
          status: 'ARCHIVED',
          prev_workflow_statuses: [...current.prev_workflow_statuses, current.status],
          archived_at: now,
          updated_at: now,
        })
        .where('id', '=', caseId)
        .execute();
      await recordAudit(tx, actor, [
        {
          action: 'CASE_ARCHIVED',
          entityType: 'case',
          entityId: caseId,
          studyId: current.study_id,
          field: 'status',
          oldValue: current.status,
          newValue: 'ARCHIVED',
          reason,
        },
        ...(await this.moveImages(tx, current, null, 'ARCHIVED', reason, 'IMAGE_ARCHIVED')),
      ]);
    });
  }

  /** PUT|PATCH /api/cases/{caseId}/assign: one image joins the case, with a reason. */
  async assign(actor: Actor, caseId: number, imageId: number, reasonForChange: string | null | undefined) {
    const reason = requiredReason(reasonForChange, `${CASE_MESSAGES.unableToAssign} ${MESSAGES_REASON}`);
    await this.db.transaction().execute(async (tx) => {
      const current = await lockCase(tx, caseId);
      await recordAudit(tx, actor, await this.attachImages(tx, current, [imageId], reason));
    });
  }

  private async liveImageCount(tx: Tx, caseId: number): Promise<number> {
    const row = await tx
      .selectFrom('images')
      .select(sql<number>`count(*)::int`.as('n'))
      .where('case_id', '=', caseId)
      .where('status', '!=', 'ARCHIVED')
      .executeTakeFirstOrThrow();
    return row.n;
  }

  /** Visit IDs come from the study configuration when it lists any (doc 2 §5). */
  private async checkVisit(tx: Tx, studyId: number, visitId: string | null): Promise<void> {
    if (visitId === null) return;
    const study = await tx.selectFrom('studies').select('visit_ids').where('id', '=', studyId).executeTakeFirst();
    const visits = study?.visit_ids ?? [];
    if (visits.length > 0 && !visits.includes(visitId))
      throw new BadRequestError(`${CASE_FIELD_RULES.visitId.label} must be one of the study’s visits`);
  }

  private async checkProcIdFree(tx: Tx, studyId: number, procId: string | null, caseId: number | null) {
    if (procId === null) return;
    let query = tx
      .selectFrom('cases')
      .select('id')
      .where('study_id', '=', studyId)
      .where('status', '!=', 'ARCHIVED')
      .where(sql`lower(proc_id)`, '=', procId.toLowerCase());
    if (caseId !== null) query = query.where('id', '!=', caseId);
    if (await query.executeTakeFirst()) throw new ConflictError(CASE_MESSAGES.duplicateProcId);
  }

  private async checkReaders(tx: Tx, studyId: number, readers: readonly number[]): Promise<void> {
    const valid = await readersInStudy(tx, studyId, readers);
    if (readers.some((id) => !valid.has(id))) throw new BadRequestError(CASE_MESSAGES.readerNotInStudy);
  }

  /** Images join a case: each must wait for a case in the case's study; they take the case's stage. */
  private async attachImages(
    tx: Tx,
    current: LockedCase,
    imageIds: readonly number[],
    reason: string | null,
  ): Promise<AuditEvent[]> {
    if (imageIds.length === 0) return [];
    const status = imageStatusOnAssign(current.status, current.on_hold_from);
    if (!CASE_ASSIGNABLE.includes(current.status) || !status)
      throw new ConflictError(`${CASE_MESSAGES.unableToAssign} ${CASE_MESSAGES.notAssignableStatus}`);
    const rows = await tx
      .selectFrom('images')
      .select(['id', 'study_id', 'case_id', 'status'])
      .where('id', 'in', [...imageIds])
      .forUpdate()
      .execute();
    for (const id of imageIds) {
      const image = rows.find((r) => r.id === id);
      if (!image || image.study_id !== current.study_id)
        throw new BadRequestError(`${CASE_MESSAGES.unableToAssign} ${CASE_MESSAGES.imageInOtherStudy}`);
      if (image.case_id !== null || image.status !== IMAGE_ASSIGNABLE_STATUS)
        throw new ConflictError(`${CASE_MESSAGES.unableToAssign} ${CASE_MESSAGES.imageNotAssignable}`);
    }
    await tx
      .updateTable('images')
      .set({ case_id: current.id, status, updated_at: new Date() })
      .where('id', 'in', [...imageIds])
      .execute();
    return rows.flatMap((image) =>
      imageCaseEvents(image.id, current.study_id, {
        fromCase: null,
        toCase: current.id,
        fromStatus: image.status,
        toStatus: status,
        reason,
      }),
    );
  }

  /** Images leave a case: back to Case Assignment Pending (only while the case takes images). */
  private async detachImages(
    tx: Tx,
    current: LockedCase,
    imageIds: readonly number[],
    reason: string | null,
  ): Promise<AuditEvent[]> {
    if (imageIds.length === 0) return [];
    if (!CASE_ASSIGNABLE.includes(current.status))
      throw new ConflictError(`${CASE_MESSAGES.unableToAssign} ${CASE_MESSAGES.notAssignableStatus}`);
    const rows = await tx
      .selectFrom('images')
      .select(['id', 'status'])
      .where('id', 'in', [...imageIds])
      .where('case_id', '=', current.id)
      .forUpdate()
      .execute();
    await revokeCaseReaders(tx, current.id);
    await tx
      .updateTable('images')
      .set({ case_id: null, status: IMAGE_ASSIGNABLE_STATUS, updated_at: new Date() })
      .where('id', 'in', [...imageIds])
      .where('case_id', '=', current.id)
      .execute();
    return rows.flatMap((image) =>
      imageCaseEvents(image.id, current.study_id, {
        fromCase: current.id,
        toCase: null,
        fromStatus: image.status,
        toStatus: IMAGE_ASSIGNABLE_STATUS,
        reason,
      }),
    );
  }

  /** The case's live images (those in `from`, or all) take status `to`; one audit row per image. */
  private async moveImages(
    tx: Tx,
    current: LockedCase,
    from: readonly ImageStatus[] | null,
    to: ImageStatus,
    reason: string | null,
    action = 'IMAGE_STATUS_CHANGED',
  ): Promise<AuditEvent[]> {
    let query = tx
      .updateTable('images')
      .set({ status: to, updated_at: new Date() })
      .where('case_id', '=', current.id)
      .where('status', '!=', 'ARCHIVED')
      .where('status', '!=', to);
    if (from) query = query.where('status', 'in', [...from]);
    const before = await tx
      .selectFrom('images')
      .select(['id', 'status'])
      .where('case_id', '=', current.id)
      .where('status', '!=', 'ARCHIVED')
      .where('status', '!=', to)
      .$if(from !== null, (q) => q.where('status', 'in', [...(from ?? [])]))
      .forUpdate()
      .execute();
    await query.execute();
    return before.map((image) => ({
      action,
      entityType: 'image',
      entityId: image.id,
      studyId: current.study_id,
      field: 'status',
      oldValue: image.status,
      newValue: to,
      reason,
    }));
  }
}

/**
 * The audit rows of an image changing case: IMAGE_CASE_ASSIGNED (into a case, or from one to
 * another) or IMAGE_CASE_REMOVED, and IMAGE_STATUS_CHANGED when its status changes with it.
 */
export function imageCaseEvents(
  imageId: number,
  studyId: number | null,
  change: {
    fromCase: number | null;
    toCase: number | null;
    fromStatus: string;
    toStatus: string;
    reason: string | null;
  },
): AuditEvent[] {
  const base = { entityType: 'image', entityId: imageId, studyId, reason: change.reason };
  const events: AuditEvent[] = [
    {
      ...base,
      action: change.toCase === null ? 'IMAGE_CASE_REMOVED' : 'IMAGE_CASE_ASSIGNED',
      field: 'case_id',
      oldValue: change.fromCase,
      newValue: change.toCase,
    },
  ];
  if (change.fromStatus !== change.toStatus)
    events.push({
      ...base,
      action: 'IMAGE_STATUS_CHANGED',
      field: 'status',
      oldValue: change.fromStatus,
      newValue: change.toStatus,
    });
  return events;
}

/** Appended to the spec's hold and assign failures when the reason is missing. */
const MESSAGES_REASON = 'Must include reason for change.';
