import {
  ANNOTATION_CLASS_LISTS,
  ANNOTATION_CLASS_LIST_NAMES,
  INDICATIONS,
  MODALITIES,
  adjudicationSchema,
  canonicalAdjudication,
  canonicalEndpoint,
  endpointsSchema,
  validateStudyConfig,
  type AnnotationClassList,
  type Indication,
  type Modality,
  type StudyConfig,
} from '@lamina/domain';
import type { Selectable } from 'kysely';
import type { Db } from '../../platform/db/database.js';
import type { StudiesTable } from '../../platform/db/schema.js';
import { BadRequestError } from '../../platform/errors.js';
import type { PlannedClass, StoredClass } from './studyClasses.js';

/** The study configuration fields other than the four class lists, in the order audit rows use. */
export type ScalarField = Exclude<keyof StudyConfig, AnnotationClassList>;
export type Scalars = Pick<StudyConfig, ScalarField>;
export type ClassLists<C> = Record<AnnotationClassList, C[]>;

export const SCALAR_FIELDS: readonly ScalarField[] = [
  'name',
  'sponsor',
  'protocolIds',
  'visitIds',
  'labVisitIds',
  'indications',
  'segments',
  'anatomicalSegments',
  'modality',
  'onHold',
  'onHoldReason',
  'endpoints',
  'adjudication',
  'signatures',
];

const unique = <T>(values: readonly T[]): T[] => [...new Set(values)];
const trimAll = (values: readonly string[]): string[] => values.map((v) => v.trim());
const blankToNull = (value: string | null): string | null => {
  const trimmed = value?.trim() ?? '';
  return trimmed === '' ? null : trimmed;
};

/** How the server stores what the form sends: text trimmed, blank optional text as null, no repeated enum values. */
export function normalizeScalars(s: Scalars): Scalars {
  return {
    name: s.name.trim(),
    sponsor: blankToNull(s.sponsor),
    protocolIds: trimAll(s.protocolIds),
    visitIds: trimAll(s.visitIds),
    labVisitIds: trimAll(s.labVisitIds),
    indications: unique(s.indications),
    segments: s.segments,
    anatomicalSegments: trimAll(s.anatomicalSegments),
    modality: unique(s.modality),
    onHold: s.onHold,
    onHoldReason: blankToNull(s.onHoldReason),
    endpoints: s.endpoints.map(canonicalEndpoint),
    adjudication: canonicalAdjudication(s.adjudication),
    signatures: s.signatures,
  };
}

/**
 * The read-outcome configuration of a study row (issue 30), read back through the domain's schemas:
 * what the table holds passed them when it was written (a row that no longer does is an error, not
 * a value to pass on).
 */
export function outcomeConfigFromRow(
  row: Pick<Selectable<StudiesTable>, 'endpoints' | 'adjudication' | 'signatures'>,
): Pick<Scalars, 'endpoints' | 'adjudication' | 'signatures'> {
  return {
    endpoints: endpointsSchema.parse(row.endpoints).map(canonicalEndpoint),
    adjudication: canonicalAdjudication(adjudicationSchema.parse(row.adjudication ?? null)),
    signatures: row.signatures,
  };
}

const indicationSet = new Set<string>(INDICATIONS);
const modalitySet = new Set<string>(MODALITIES);

type StudyRow = Pick<
  Selectable<StudiesTable>,
  | 'name'
  | 'sponsor'
  | 'protocol_ids'
  | 'visit_ids'
  | 'lab_visit_ids'
  | 'indications'
  | 'segments'
  | 'anatomical_segments'
  | 'modality'
  | 'on_hold'
  | 'on_hold_reason'
  | 'endpoints'
  | 'adjudication'
  | 'signatures'
>;

export function scalarsFromRow(row: StudyRow): Scalars {
  return {
    name: row.name,
    sponsor: row.sponsor,
    protocolIds: row.protocol_ids,
    visitIds: row.visit_ids,
    labVisitIds: row.lab_visit_ids,
    indications: row.indications.filter((i): i is Indication => indicationSet.has(i)),
    segments: row.segments,
    anatomicalSegments: row.anatomical_segments,
    modality: row.modality.filter((m): m is Modality => modalitySet.has(m)),
    onHold: row.on_hold,
    onHoldReason: row.on_hold_reason,
    ...outcomeConfigFromRow(row),
  };
}

/** Study table columns for the given (validated) fields. */
export function scalarColumns(s: Partial<Scalars>) {
  return {
    ...(s.name !== undefined && { name: s.name }),
    ...(s.sponsor !== undefined && { sponsor: s.sponsor }),
    ...(s.protocolIds !== undefined && { protocol_ids: s.protocolIds }),
    ...(s.visitIds !== undefined && { visit_ids: s.visitIds }),
    ...(s.labVisitIds !== undefined && { lab_visit_ids: s.labVisitIds }),
    ...(s.indications !== undefined && { indications: s.indications }),
    ...(s.segments !== undefined && s.segments !== null && { segments: s.segments }),
    ...(s.anatomicalSegments !== undefined && { anatomical_segments: s.anatomicalSegments }),
    ...(s.modality !== undefined && { modality: s.modality }),
    ...(s.onHold !== undefined && { on_hold: s.onHold }),
    ...(s.onHoldReason !== undefined && { on_hold_reason: s.onHoldReason }),
    // JSON columns are written as text (scripts/db-types.ts); no adjudication is SQL null.
    ...(s.endpoints !== undefined && { endpoints: JSON.stringify(s.endpoints) }),
    ...(s.adjudication !== undefined && {
      adjudication: s.adjudication === null ? null : JSON.stringify(s.adjudication),
    }),
    ...(s.signatures !== undefined && { signatures: s.signatures }),
  };
}

/** Every rule of spec doc 1 §5 (the domain's validateStudyConfig): 400 with the first issue's message. */
export function assertValidConfig(scalars: Scalars, lists: ClassLists<PlannedClass>): void {
  const issues = validateStudyConfig({ ...scalars, ...lists });
  const first = issues[0];
  if (first) throw new BadRequestError(first.message);
}

/** The live classes of a study, per list. */
export async function loadStoredClasses(db: Db, studyId: number): Promise<ClassLists<StoredClass>> {
  const rows = await db
    .selectFrom('annotation_classes')
    .select(['id', 'type', 'name', 'color', 'sort_order', 'enabled'])
    .where('study_id', '=', studyId)
    .where('deleted', '=', false)
    .orderBy('sort_order')
    .orderBy('id')
    .execute();
  const lists = emptyLists<StoredClass>();
  for (const list of ANNOTATION_CLASS_LIST_NAMES) {
    lists[list] = rows
      .filter((r) => r.type === ANNOTATION_CLASS_LISTS[list])
      .map((r) => ({ id: r.id, name: r.name, color: r.color, sortOrder: r.sort_order, enabled: r.enabled }));
  }
  return lists;
}

export function emptyLists<C>(): ClassLists<C> {
  return { hpfClasses: [], pointClasses: [], freehandClasses: [], multilineClasses: [] };
}
