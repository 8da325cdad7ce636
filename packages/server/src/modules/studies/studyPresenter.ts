import {
  ANNOTATION_CLASS_LISTS,
  ANNOTATION_CLASS_LIST_NAMES,
  INDICATIONS,
  MODALITIES,
  STUDY_COUNTS_BY_KIND,
  studyListKind,
  studyUserGroup,
  type AnnotationClassList,
  type AnnotationClassView,
  type Indication,
  type Modality,
  type StudyCountKey,
  type StudyListKind,
  type StudyListRow,
  type StudyUserRef,
  type StudyView,
  VIEW_SPONSOR_PERMISSION,
} from '@lamina/domain';
import type { Principal } from '../../platform/auth/principal.js';
import type { StudyClassRow, StudyRowWithCounts } from './studyQueries.js';
import type { StudyUserRow } from '../studyAccess/studyAccessQueries.js';
import { presentStudyUser } from '../studyAccess/studyAccessPresenter.js';
import { outcomeConfigFromRow } from './studyConfig.js';

/**
 * Study rows → the domain's StudyListRow / StudyView. Blinding lives here, so no route can forget it:
 * - readers (work-as CR or NOTO) do not receive the study's visit and lab visit IDs;
 * - the sponsor goes only to users with AP_StudyData_ViewSponsor (null for the others);
 * - the uploader / reader / read-only user lists go only to users who configure studies or manage
 *   users (S_Main_EditStudy or UM_ViewUsersPage); others receive empty lists.
 */

const indicationSet = new Set<string>(INDICATIONS);
const modalitySet = new Set<string>(MODALITIES);

function mayManageStudyUsers(principal: Principal): boolean {
  return principal.actions.has('S_Main_EditStudy') || principal.actions.has('UM_ViewUsersPage');
}

function isBlindedReader(principal: Principal): boolean {
  return studyListKind(principal.workAsRole?.name) === 'reader';
}

/** A study row as the list has it: without the read-outcome configuration (the study view's only). */
type StudyListRowWithCounts = Omit<StudyRowWithCounts, 'endpoints' | 'adjudication' | 'signatures'>;

export function presentStudyRow(row: StudyListRowWithCounts, principal: Principal): StudyListRow {
  const blinded = isBlindedReader(principal);
  return {
    id: row.id,
    name: row.name,
    sponsor: principal.actions.has(VIEW_SPONSOR_PERMISSION) ? row.sponsor : null,
    protocolIds: row.protocol_ids,
    visitIds: blinded ? [] : row.visit_ids,
    labVisitIds: blinded ? [] : row.lab_visit_ids,
    indications: row.indications.filter((i): i is Indication => indicationSet.has(i)),
    segments: row.segments,
    anatomicalSegments: row.anatomical_segments,
    modality: row.modality.filter((m): m is Modality => modalitySet.has(m)),
    onHold: row.on_hold,
    onHoldReason: row.on_hold_reason,
    createdAt: row.created_at.toISOString(),
    isNoto: row.is_noto,
    mostRecentUploadAt: toIso(row.most_recent_upload_at),
    ...presentCounts(row, studyListKind(principal.workAsRole?.name)),
  };
}

/** The counts of the user's kind; the others are null (doc 1 §2.4, {@link STUDY_COUNTS_BY_KIND}). */
function presentCounts(row: StudyListRowWithCounts, kind: StudyListKind): Record<StudyCountKey, number | null> {
  const all: Record<StudyCountKey, number> = {
    numberOfUnassignedImages: row.unassigned_images ?? 0,
    numberOfCasesNeedingQC: row.cases_needing_qc ?? 0,
    numberOfQueriesOpen: row.queries_open ?? 0,
    numberOfQueriesAnswered: row.queries_answered ?? 0,
    numberOfAssignedReadCases: row.assigned_read_cases ?? 0,
    numberOfAssignedUnreadCases: row.assigned_unread_cases ?? 0,
  };
  const shown = STUDY_COUNTS_BY_KIND[kind];
  const counts = {} as Record<StudyCountKey, number | null>;
  for (const key of Object.keys(all) as StudyCountKey[]) counts[key] = shown.includes(key) ? all[key] : null;
  return counts;
}

function toIso(value: Date | string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return (value instanceof Date ? value : new Date(value)).toISOString();
}

export function presentClass(row: StudyClassRow): AnnotationClassView {
  return {
    id: row.id,
    name: row.name,
    color: row.color,
    sortOrder: row.sort_order,
    type: row.type,
    enabled: row.enabled,
    deleted: row.deleted,
    count: row.count ?? 0,
  };
}

export function presentStudyView(
  row: StudyRowWithCounts,
  classes: readonly StudyClassRow[],
  users: readonly StudyUserRow[],
  principal: Principal,
): StudyView {
  const lists = Object.fromEntries(
    ANNOTATION_CLASS_LIST_NAMES.map((list) => [
      list,
      classes.filter((c) => c.type === ANNOTATION_CLASS_LISTS[list]).map(presentClass),
    ]),
  ) as Record<AnnotationClassList, AnnotationClassView[]>;
  const groups: Record<'uploaders' | 'readers' | 'readonlyUsers', StudyUserRef[]> = {
    uploaders: [],
    readers: [],
    readonlyUsers: [],
  };
  if (mayManageStudyUsers(principal)) {
    for (const user of users) groups[studyUserGroup(user.role_name)].push(presentStudyUser(user));
  }
  return { ...presentStudyRow(row, principal), ...groups, ...lists, ...outcomeConfigFromRow(row) };
}
