import type { Transaction } from 'kysely';
import {
  CASE_FIELD_RULES,
  CASE_MESSAGES,
  CASE_STATUS_LABELS,
  IMAGE_ACTION_MESSAGES,
  IMAGE_MOVE_BLOCKED,
  IMAGE_STATUS_LABELS,
  MESSAGES,
  imageStatusOnAssign,
  isEmptyValue,
  mayViewCaseField,
  type CaseStatus,
  type ImageStatus,
  type MoveChange,
  type MoveImageRequest,
} from '@lamina/domain';
import type { Db } from '../platform/db/database.js';
import type { DB } from '../platform/db/schema.js';
import type { Principal } from '../platform/auth/principal.js';
import { recordAudit, type Actor, type AuditEvent } from '../platform/audit/audit.js';
import { BadRequestError, ConflictError, NotFoundError } from '../platform/errors.js';
import { canSeeStudy } from '../platform/rbac/studyScope.js';
import { revokeCaseReaders } from '../access/readerVisibility.js';
import { lockImage, type LockedImage } from '../modules/images/imageQueries.js';
import { imageCaseEvents, lockCase } from '../modules/cases/caseService.js';

type Tx = Transaction<DB>;

/** Image statuses an image may leave one case for another in (it is in, or waiting for, a case). */
const CASE_WORKFLOW_IMAGE_STATUSES: readonly string[] = ['CASE_ASSIGNMENT_PENDING', 'LAB_QC_PENDING', 'ISC_QC_PENDING'];

/** Image statuses of the case workflow: a moved image starts it again from Case Assignment Pending. */
const WORKFLOW_STATUSES: readonly string[] = [
  'STUDY_ASSIGNMENT_PENDING',
  'CASE_ASSIGNMENT_PENDING',
  'LAB_QC_PENDING',
  'ISC_QC_PENDING',
];

// Move Image (doc 2 §4): an image goes into another case of its study, or into another study.
// Either way it leaves its case, whose readers lose it (their tile tokens stop), and its status
// follows the case workflow: the image, its cases and reader access change in one transaction with
// their audit rows. With `preview` nothing changes and the answer is the warnings list.

/** PATCH /api/images/{id}/case: into another case of the image's study. */
export async function moveImageToCase(
  db: Db,
  principal: Principal,
  actor: Actor,
  imageId: number,
  request: MoveImageRequest,
): Promise<MoveChange[]> {
  const failure = IMAGE_ACTION_MESSAGES.unableToMoveCase;
  return db.transaction().execute(async (tx) => {
    const image = await lockImage(tx, imageId);
    assertMovable(image, failure);
    if (image.study_id === null) throw new ConflictError(`${failure} ${IMAGE_ACTION_MESSAGES.noStudy}`);
    if (image.case_id === request.value) throw new ConflictError(`${failure} ${IMAGE_ACTION_MESSAGES.sameCase}`);
    const target = await lockCase(tx, request.value);
    if (target.study_id !== image.study_id) throw new NotFoundError(CASE_MESSAGES.caseNotFound);
    if (!CASE_WORKFLOW_IMAGE_STATUSES.includes(image.status))
      throw new ConflictError(`${failure} ${CASE_MESSAGES.imageNotAssignable}`);
    const status = imageStatusOnAssign(target.status, target.on_hold_from);
    if (!status) throw new ConflictError(`${failure} ${CASE_MESSAGES.notAssignableStatus}`);
    const changes = [
      ...(await caseChanges(tx, principal, image.case_id, target.id)),
      ...imageStatusChange(image.status, status),
    ];
    if (request.preview) return changes;
    const reason = moveReason(request.reasonForChange, failure);
    await revokeCaseReaders(tx, image.case_id);
    await tx
      .updateTable('images')
      .set({ case_id: target.id, status, updated_at: new Date() })
      .where('id', '=', imageId)
      .execute();
    await recordAudit(
      tx,
      actor,
      imageCaseEvents(imageId, image.study_id, {
        fromCase: image.case_id,
        toCase: target.id,
        fromStatus: image.status,
        toStatus: status,
        reason,
      }),
    );
    return changes;
  });
}

/** PATCH /api/images/{id}/study: into another study the user can see; leaves its case. */
export async function moveImageToStudy(
  db: Db,
  principal: Principal,
  actor: Actor,
  imageId: number,
  request: MoveImageRequest,
): Promise<MoveChange[]> {
  const failure = IMAGE_ACTION_MESSAGES.unableToMoveStudy;
  return db.transaction().execute(async (tx) => {
    const image = await lockImage(tx, imageId);
    assertMovable(image, failure);
    if (image.study_id === request.value) throw new ConflictError(`${failure} ${IMAGE_ACTION_MESSAGES.sameStudy}`);
    if (!(await canSeeStudy(tx, principal, request.value))) throw new NotFoundError(MESSAGES.studyNotFound);
    const studies = await tx
      .selectFrom('studies')
      .select(['id', 'name', 'sponsor'])
      .where('id', 'in', [request.value, ...(image.study_id !== null ? [image.study_id] : [])])
      .execute();
    const from = studies.find((s) => s.id === image.study_id);
    const to = studies.find((s) => s.id === request.value);
    const status = WORKFLOW_STATUSES.includes(image.status) ? 'CASE_ASSIGNMENT_PENDING' : image.status;
    const changes: MoveChange[] = [{ label: 'Study Name', from: from?.name ?? null, to: to?.name ?? null }];
    if (principal.actions.has('AP_StudyData_ViewSponsor') && (from?.sponsor ?? null) !== (to?.sponsor ?? null))
      changes.push({ label: 'Sponsor', from: from?.sponsor ?? null, to: to?.sponsor ?? null });
    changes.push(
      ...(await caseChanges(tx, principal, image.case_id, null)),
      ...imageStatusChange(image.status, status),
    );
    if (request.preview) return changes;

    // A first study is no change of recorded data: its reason is optional (doc 2 §5, Edit Column).
    const reason =
      image.study_id === null && isEmptyValue(request.reasonForChange)
        ? null
        : moveReason(request.reasonForChange, failure);
    await revokeCaseReaders(tx, image.case_id);
    await tx
      .updateTable('images')
      .set({ study_id: request.value, case_id: null, status, updated_at: new Date() })
      .where('id', '=', imageId)
      .execute();
    const base = { entityType: 'image', entityId: imageId, reason };
    const events: AuditEvent[] = [
      // Recorded under both studies, so each study's audit trail shows the image leaving or arriving.
      {
        ...base,
        action: 'IMAGE_MOVED_STUDY',
        studyId: image.study_id,
        field: 'study_id',
        oldValue: image.study_id,
        newValue: request.value,
      },
      {
        ...base,
        action: 'IMAGE_MOVED_STUDY',
        studyId: request.value,
        field: 'study_id',
        oldValue: image.study_id,
        newValue: request.value,
      },
    ];
    if (image.case_id !== null)
      events.push({
        ...base,
        action: 'IMAGE_CASE_REMOVED',
        studyId: image.study_id,
        field: 'case_id',
        oldValue: image.case_id,
        newValue: null,
      });
    if (status !== image.status)
      events.push({
        ...base,
        action: 'IMAGE_STATUS_CHANGED',
        studyId: request.value,
        field: 'status',
        oldValue: image.status,
        newValue: status,
      });
    await recordAudit(tx, actor, events);
    return changes;
  });
}

/** What moving an image out of its case changes, as the warnings list says it (blinded fields by permission). */
async function caseChanges(
  tx: Tx,
  principal: Principal,
  fromCaseId: number | null,
  toCaseId: number | null,
): Promise<MoveChange[]> {
  const load = async (id: number | null) =>
    id === null
      ? null
      : ((await tx
          .selectFrom('cases')
          .select(['proc_id', 'subject_id', 'visit_id', 'site_id', 'status'])
          .where('id', '=', id)
          .executeTakeFirst()) ?? null);
  const [from, to] = [await load(fromCaseId), await load(toCaseId)];
  const changes: MoveChange[] = [];
  const push = (label: string, a: string | null | undefined, b: string | null | undefined) => {
    if ((a ?? null) !== (b ?? null)) changes.push({ label, from: a ?? null, to: b ?? null });
  };
  push('Case', from?.proc_id, to?.proc_id);
  for (const field of ['subjectId', 'visitId', 'siteId'] as const) {
    if (!mayViewCaseField(principal.actions, field)) continue;
    const column = field === 'subjectId' ? 'subject_id' : field === 'visitId' ? 'visit_id' : 'site_id';
    push(`Case ${CASE_FIELD_RULES[field].label}`, from?.[column], to?.[column]);
  }
  const label = (s: string | undefined) => (s ? CASE_STATUS_LABELS[s as CaseStatus] : null);
  push('Case Status', label(from?.status), label(to?.status));
  return changes;
}

function imageStatusChange(from: string, to: string): MoveChange[] {
  return from === to
    ? []
    : [
        {
          label: 'Image Status',
          from: IMAGE_STATUS_LABELS[from as ImageStatus],
          to: IMAGE_STATUS_LABELS[to as ImageStatus],
        },
      ];
}

/** The reason a move needs (the spec's failure message with the reason rule). */
function moveReason(reason: string | null | undefined, failure: string): string {
  if (isEmptyValue(reason)) throw new BadRequestError(`${failure} ${IMAGE_ACTION_MESSAGES.moveReasonRequired}`);
  return (reason ?? '').trim();
}

/** Refuses moving an image that is archived or in reading (doc 2 §4). */
function assertMovable(image: LockedImage, failure: string): void {
  if (image.status === 'ARCHIVED') throw new ConflictError(`${failure} ${IMAGE_ACTION_MESSAGES.alreadyArchived}`);
  if ((IMAGE_MOVE_BLOCKED as readonly string[]).includes(image.status))
    throw new ConflictError(`${failure} ${IMAGE_ACTION_MESSAGES.moveBlocked}`);
}
