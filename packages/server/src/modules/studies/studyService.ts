import type { z } from 'zod';
import {
  ANNOTATION_CLASS_LISTS,
  STUDY_COUNTS_BY_KIND,
  VIEW_SPONSOR_PERMISSION,
  studyListKind,
  type StudyCountKey,
  type StudySortKey,
  type studyListQuerySchema,
  ANNOTATION_CLASS_LIST_NAMES,
  STUDY_MESSAGES,
  studyReasonForChangeError,
  valuesDiffer,
  withCeliacDefaults,
  type AnnotationClassList,
  type StudyConfig,
  type StudyUpdate,
  type StudyView,
  type StudyUserAssignment,
  type StudyUserGroup,
  coveringStudyReason,
  STUDY_REASON_GROUPS,
  type StudyField,
  type StudyReasonGroup,
} from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import type { Principal } from '../../platform/auth/principal.js';
import { recordAudit, type Actor, type AuditEvent } from '../../platform/audit/audit.js';
import { changeEvents, requireReasonsForChange, type FieldChange } from '../../platform/audit/changes.js';
import { ConflictError, NotFoundError } from '../../platform/errors.js';
import { pageWindow, parseSort } from '../../platform/db/paging.js';
import { visibleStudies } from '../../platform/rbac/studyScope.js';
import { applyClassPlan, classSnapshot, planClassList, type ClassListPlan, type PlannedClass } from './studyClasses.js';
import {
  SCALAR_FIELDS,
  assertValidConfig,
  emptyLists,
  loadStoredClasses,
  normalizeScalars,
  scalarColumns,
  scalarsFromRow,
  type ClassLists,
  type Scalars,
} from './studyConfig.js';
import { onlyAnnotationsOf } from '../../access/annotationVisibility.js';
import {
  classesWithAnnotations,
  findStudySummary,
  listStudies,
  listStudyClasses,
  studyNameTaken,
} from './studyQueries.js';
import { presentStudyView } from './studyPresenter.js';
import { grantStudyAccessInTransaction } from '../studyAccess/studyAccessService.js';
import { assertMayGrantOnCreate, studyAccessOfPayload } from '../studyAccess/studyAccessPolicy.js';
import { listStudyUsers } from '../studyAccess/studyAccessQueries.js';

/** A study access row to create with a new study. */

const CELIAC = 'CELIAC_DISEASE';

/** Adds the celiac default point and line classes (spec doc 1 §5), keeping names that exist. */
function addCeliacDefaults(lists: ClassLists<PlannedClass>): void {
  const withDefaults = withCeliacDefaults({
    pointClasses: lists.pointClasses,
    multilineClasses: lists.multilineClasses,
  });
  const plain = (c: PlannedClass): PlannedClass => ({
    ...(c.id !== undefined && { id: c.id }),
    name: c.name,
    color: c.color,
    sortOrder: c.sortOrder,
    enabled: c.enabled,
  });
  lists.pointClasses = withDefaults.pointClasses.map(plain);
  lists.multilineClasses = withDefaults.multilineClasses.map(plain);
}

/** The first reason that is not blank. */
function firstReason(...reasons: (string | null | undefined)[]): string | undefined {
  return reasons.find((r): r is string => typeof r === 'string' && r.trim() !== '');
}

function isCountKey(key: StudySortKey): key is StudySortKey & StudyCountKey {
  return key.startsWith('numberOf');
}

/**
 * Study configuration: create and edit with every rule of spec doc 1 §5, audited field by field;
 * the studies list and what it may be sorted by.
 */
export class StudyService {
  constructor(private readonly db: Db) {}

  /**
   * GET /api/studies/list: one page of the studies the user may see. A count the user's kind does
   * not see, or the sponsor without the sponsor permission, is no sort key for them (its order would
   * tell it): the list falls back to the newest first.
   */
  async list(principal: Principal, query: z.output<typeof studyListQuerySchema>) {
    const { name, page, pageSize, sort } = query;
    const parsed = parseSort<StudySortKey>(sort);
    const hidden =
      (isCountKey(parsed.key) &&
        !STUDY_COUNTS_BY_KIND[studyListKind(principal.workAsRole?.name)].includes(parsed.key)) ||
      (parsed.key === 'sponsor' && !principal.actions.has(VIEW_SPONSOR_PERMISSION));
    const { key, descending } = hidden ? { key: 'createdAt' as const, descending: true } : parsed;
    return listStudies(this.db, {
      userId: principal.id,
      visible: visibleStudies(principal),
      name: name?.trim() || undefined,
      sort: key,
      descending,
      ...pageWindow(page, pageSize),
    });
  }

  /** The study view (GET /api/studies/{id}); the caller has checked that the study is visible. */
  async view(studyId: number, principal: Principal, db: Db = this.db): Promise<StudyView> {
    const row = await findStudySummary(db, studyId, principal.id);
    if (!row) throw new NotFoundError(STUDY_MESSAGES.studyNotFound);
    const [classes, users] = await Promise.all([
      listStudyClasses(db, studyId, onlyAnnotationsOf(principal)),
      listStudyUsers(db, studyId),
    ]);
    return presentStudyView(row, classes, users, principal);
  }

  /**
   * Creates a study (POST /api/studies); celiac defaults are added when celiac is chosen, and the
   * study access of the payload's user lists is granted in the same transaction.
   */
  /**
   * POST /api/studies: the configuration checked, the access the payload's user lists ask for
   * checked against the principal (studyAccessPolicy), then one transaction.
   */
  async create(
    config: StudyConfig,
    userLists: Record<StudyUserGroup, readonly StudyUserAssignment[]>,
    principal: Principal,
    actor: Actor,
  ): Promise<number> {
    const access = studyAccessOfPayload(userLists);
    assertMayGrantOnCreate(principal, access);
    const createdBy = principal.id;
    const scalars = normalizeScalars(config);
    const lists = emptyLists<PlannedClass>();
    for (const list of ANNOTATION_CLASS_LIST_NAMES) lists[list] = planClassList([], config[list]).classes;
    if (scalars.indications.includes(CELIAC)) addCeliacDefaults(lists);
    assertValidConfig(scalars, lists);

    return this.db.transaction().execute(async (tx) => {
      if (await studyNameTaken(tx, scalars.name)) throw new ConflictError(STUDY_MESSAGES.nameTaken);
      const study = await tx
        .insertInto('studies')
        .values({ ...scalarColumns(scalars), name: scalars.name, created_by: createdBy })
        .returning('id')
        .executeTakeFirstOrThrow();
      for (const list of ANNOTATION_CLASS_LIST_NAMES) {
        await applyClassPlan(tx, study.id, ANNOTATION_CLASS_LISTS[list], [], { classes: lists[list], deletions: [] });
      }
      const saved = await loadStoredClasses(tx, study.id);
      const base = { action: 'STUDY_CREATED', entityType: 'study', entityId: study.id, studyId: study.id } as const;
      const events: AuditEvent[] = [{ ...base, newValue: scalars.name }];
      for (const field of SCALAR_FIELDS) events.push({ ...base, field, newValue: scalars[field] });
      for (const list of ANNOTATION_CLASS_LIST_NAMES)
        events.push({ ...base, field: list, newValue: saved[list].map(classSnapshot) });
      await recordAudit(tx, actor, events);
      for (const grant of access) {
        await grantStudyAccessInTransaction(
          tx,
          { studyId: study.id, userId: grant.userId, roleId: grant.roleId },
          grant.roleName,
          actor,
        );
      }
      return study.id;
    });
  }

  /**
   * Edits a study (PUT /api/studies/{id}): the changed fields are merged into the stored
   * configuration, the merged configuration must pass every rule, each changed field needs a
   * reason (lab visit IDs may use the visit IDs' reason; classes added because celiac was chosen
   * use the indications' reason). Returns false when nothing changed.
   */
  async update(studyId: number, update: StudyUpdate, actor: Actor): Promise<boolean> {
    return this.db.transaction().execute(async (tx) => {
      const row = await tx.selectFrom('studies').selectAll().where('id', '=', studyId).forUpdate().executeTakeFirst();
      if (!row) throw new NotFoundError(STUDY_MESSAGES.studyNotFound);
      const before = scalarsFromRow(row);
      const after = normalizeScalars(mergeScalars(before, update));

      const stored = await loadStoredClasses(tx, studyId);
      const plans: Partial<Record<AnnotationClassList, ClassListPlan>> = {};
      const lists = emptyLists<PlannedClass>();
      for (const list of ANNOTATION_CLASS_LIST_NAMES) {
        const sent = update[list];
        if (sent) plans[list] = planClassList(stored[list], sent.value);
        lists[list] = plans[list]?.classes ?? stored[list];
      }
      const celiacAdded = after.indications.includes(CELIAC) && !before.indications.includes(CELIAC);
      if (celiacAdded) addCeliacDefaults(lists);

      const deletions = Object.values(plans).flatMap((p) => p.deletions);
      if ((await classesWithAnnotations(tx, deletions)).length > 0)
        throw new ConflictError(STUDY_MESSAGES.classHasAnnotations);
      assertValidConfig(after, lists);

      // The reason written for a group: on any of its fields (the form sends it on each).
      const given = (group: StudyReasonGroup) =>
        firstReason(...STUDY_REASON_GROUPS[group].map((f) => update[f]?.reasonForChange));
      const reasonOf = (field: StudyField) => coveringStudyReason(field, given, celiacAdded);
      const changes: FieldChange[] = [];
      for (const field of SCALAR_FIELDS) {
        if (valuesDiffer(before[field], after[field]))
          changes.push({ field, before: before[field], after: after[field], reason: reasonOf(field) });
      }
      const changedLists = ANNOTATION_CLASS_LIST_NAMES.filter((list) =>
        valuesDiffer(stored[list].map(classSnapshot), lists[list].map(classSnapshot)),
      );
      for (const list of changedLists) {
        changes.push({
          field: list,
          before: stored[list].map(classSnapshot),
          after: lists[list].map(classSnapshot),
          reason: reasonOf(list),
        });
      }
      // Every changed field of an existing study needs a reason (the domain's study rule).
      requireReasonsForChange(changes, studyReasonForChangeError);
      if (changes.length === 0) return false;
      if (after.name !== before.name && (await studyNameTaken(tx, after.name, studyId)))
        throw new ConflictError(STUDY_MESSAGES.nameTaken);

      const changedScalars = Object.fromEntries(
        changes.filter((c) => c.field in after).map((c) => [c.field, c.after]),
      ) as Partial<Scalars>;
      if (Object.keys(changedScalars).length > 0) {
        await tx
          .updateTable('studies')
          .set({ ...scalarColumns(changedScalars), updated_at: new Date() })
          .where('id', '=', studyId)
          .execute();
      }
      for (const list of changedLists) {
        const plan = { classes: lists[list], deletions: plans[list]?.deletions ?? [] };
        await applyClassPlan(tx, studyId, ANNOTATION_CLASS_LISTS[list], stored[list], plan);
      }
      if (changedLists.length > 0) {
        const saved = await loadStoredClasses(tx, studyId);
        for (const change of changes) {
          if (changedLists.includes(change.field as AnnotationClassList))
            change.after = saved[change.field as AnnotationClassList].map(classSnapshot);
        }
      }
      await recordAudit(
        tx,
        actor,
        changeEvents({ action: 'STUDY_UPDATED', entityType: 'study', entityId: studyId, studyId }, changes),
      );
      return true;
    });
  }
}

/** The stored configuration with the sent fields replaced. */
function mergeScalars(before: Scalars, u: StudyUpdate): Scalars {
  return {
    name: u.name ? u.name.value : before.name,
    sponsor: u.sponsor ? u.sponsor.value : before.sponsor,
    protocolIds: u.protocolIds ? u.protocolIds.value : before.protocolIds,
    visitIds: u.visitIds ? u.visitIds.value : before.visitIds,
    labVisitIds: u.labVisitIds ? u.labVisitIds.value : before.labVisitIds,
    indications: u.indications ? u.indications.value : before.indications,
    segments: u.segments ? u.segments.value : before.segments,
    anatomicalSegments: u.anatomicalSegments ? u.anatomicalSegments.value : before.anatomicalSegments,
    modality: u.modality ? u.modality.value : before.modality,
    onHold: u.onHold ? u.onHold.value : before.onHold,
    onHoldReason: u.onHoldReason ? u.onHoldReason.value : before.onHoldReason,
    endpoints: u.endpoints ? u.endpoints.value : before.endpoints,
    adjudication: u.adjudication ? u.adjudication.value : before.adjudication,
    signatures: u.signatures ? u.signatures.value : before.signatures,
  };
}
