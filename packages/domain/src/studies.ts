import type { Permission } from './permissions.js';
import { z } from 'zod';
import { PAGE_SIZES, TEXT_LIMITS } from './constants.js';
import { valuesDiffer } from './reasonForChange.js';
import {
  adjudicationRefusal,
  adjudicationSchema,
  endpointDefinitionSchema,
  endpointRefusal,
  endpointsSchema,
  type Adjudication,
  type EndpointDefinition,
} from './endpoints.js';
import type { RoleName } from './roles.js';

/** Indications (wire values fixed by the studies issue; labels as spec doc 1 §1). */
export const INDICATIONS = [
  'CROHNS_DISEASE',
  'ULCERATIVE_COLITIS',
  'EOSINOPHILIC_ESOPHAGITIS',
  'NASH',
  'POUCHITIS',
  'CELIAC_DISEASE',
  'PRIMARY_SCLEROSING_CHOLANGITIS',
  'EOSINOPHILIC_DUODENITIS',
  'EOSINOPHILIC_GASTROENTERITIS',
] as const;
export type Indication = (typeof INDICATIONS)[number];

export const INDICATION_LABELS: Readonly<Record<Indication, string>> = {
  CROHNS_DISEASE: "Crohn's Disease",
  ULCERATIVE_COLITIS: 'Ulcerative Colitis',
  EOSINOPHILIC_ESOPHAGITIS: 'Eosinophilic Esophagitis',
  NASH: 'Nonalcoholic Steatohepatitis (NASH)',
  POUCHITIS: 'Pouchitis',
  CELIAC_DISEASE: 'Celiac Disease',
  PRIMARY_SCLEROSING_CHOLANGITIS: 'Primary Sclerosing Cholangitis',
  EOSINOPHILIC_DUODENITIS: 'Eosinophilic Duodenitis',
  EOSINOPHILIC_GASTROENTERITIS: 'Eosinophilic Gastroenteritis',
};

export const MODALITIES = ['HISTOPATHOLOGY', 'IMMUNOHISTOCHEMISTRY', 'ENDOSCOPY'] as const;
export type Modality = (typeof MODALITIES)[number];
export const MODALITY_LABELS: Readonly<Record<Modality, string>> = {
  HISTOPATHOLOGY: 'Histopathology',
  IMMUNOHISTOCHEMISTRY: 'Immunohistochemistry',
  ENDOSCOPY: 'Endoscopy',
};

/** The four annotation-class lists of a study and their class types (spec doc 1 §3). */
export const ANNOTATION_CLASS_LISTS = {
  hpfClasses: 'HPF',
  pointClasses: 'POINT',
  freehandClasses: 'FREEHAND',
  multilineClasses: 'MULTILINE',
} as const;
export type AnnotationClassList = keyof typeof ANNOTATION_CLASS_LISTS;
export type AnnotationClassType = (typeof ANNOTATION_CLASS_LISTS)[AnnotationClassList];
export const ANNOTATION_CLASS_LIST_NAMES = Object.keys(ANNOTATION_CLASS_LISTS) as AnnotationClassList[];

/** Default colour swatches (spec doc 1 §9). */
export const CLASS_COLOR_SWATCHES = [
  '#87FF01',
  '#FF001E',
  '#FF9F00',
  '#FDEB03',
  '#013BFA',
  '#8601FC',
  '#4A90E2',
  '#00FFFF',
  '#09FF98',
] as const;

export const CELIAC_DEFAULT_POINT_CLASSES = [
  { name: 'Enterocyte', color: '#FF9F00' },
  { name: 'IEL', color: '#87FF01' },
] as const;
export const CELIAC_DEFAULT_LINE_CLASSES = [
  { name: 'Unit 1', color: '#87FF01' },
  { name: 'Unit 2', color: '#FF001E' },
  { name: 'Unit 3', color: '#FF9F00' },
  { name: 'Unit 4', color: '#FDEB03' },
  { name: 'Unit 5', color: '#013BFA' },
] as const;

export const ON_HOLD_REASON_MAX = 178;
/** Upper bound of Number of Anatomical Segments (the spec gives only the minimum, 1). */
export const MAX_ANATOMICAL_SEGMENTS = 50;

/** Study configuration messages (spec doc 1 §5, §8), typed once. */
export const STUDY_MESSAGES = {
  nameRequired: 'Name is required',
  indicationRequired: 'Indication is required',
  segmentsRequired: 'Number of Anatomical Segments is required',
  segmentsRange: `Number of Anatomical Segments must be a whole number from 1 to ${MAX_ANATOMICAL_SEGMENTS}`,
  celiacDefaultsWithoutCeliac:
    'The celiac default classes (Enterocyte, IEL, Unit 1–5) belong to celiac studies: remove them or choose Celiac Disease',
  modalityRequired: 'Modality is required',
  classNameInvalid: 'name is blank or not unique',
  onHoldReasonRequired: 'On Hold Reason is required',
  onHoldReasonTooLong: `On Hold Reason must be at most ${ON_HOLD_REASON_MAX} characters`,
  visitPairNotUnique: 'The Visit ID / Lab Visit ID pair must be unique',
  visitIdRequired: 'Visit ID is required',
  oneIndicationOnly: 'Studies only support one indication.',
  reasonForChangeRequired: 'Reason for change is required',
  studyNotFound: 'Study not found',
  unableToFetchStudies: 'Unable to fetch studies',
  unableToFetchStudiesForUser: 'Unable to fetch studies for user',
  unableToCreateStudy: 'Unable to create study',
  unableToUpdateStudy: 'Unable to update study',
  classHasAnnotations: 'This class has annotations and cannot be deleted',
  nameTaken: 'A study with this name already exists',
  classNotInList: 'Annotation class does not belong to this list',
  classListedTwice: 'Annotation class is listed more than once',
  classesOutdated: 'The annotation classes were changed by someone else; reload the study and try again',
  studyCreated: 'Study created',
  studyUpdated: 'Study updated',
  noChanges: 'No changes',
} as const;

export const unableToFetchStudy = (id: number | string): string => `Unable to fetch study ${id}`;

/** 400 when a create payload's user list names a role that list cannot grant, e.g. 'Central Reader cannot be given to the uploaders of a study'. */
export const roleNotForUserList = (list: string, roleDisplayName: string): string =>
  `${roleDisplayName} cannot be given to the ${list} of a study`;

const colorSchema = z.string().regex(/^#[0-9A-Fa-f]{6}$/, 'color must be a hex colour such as #87FF01');

export const annotationClassInputSchema = z.object({
  id: z.number().int().positive().optional(),
  name: z.string().max(TEXT_LIMITS.identifier),
  color: colorSchema,
  sortOrder: z.number().int().min(0),
  enabled: z.boolean(),
  deleted: z.boolean().optional(),
});
export type AnnotationClassInput = z.infer<typeof annotationClassInputSchema>;

/** The editable study configuration (create payload; the update sends changed fields of it). */
export const studyConfigSchema = z.object({
  name: z.string().max(TEXT_LIMITS.studyName),
  sponsor: z.string().max(TEXT_LIMITS.sponsor).nullable().default(null),
  protocolIds: z.array(z.string().trim().min(1).max(TEXT_LIMITS.identifier)).default([]),
  visitIds: z.array(z.string().max(TEXT_LIMITS.identifier)).default([]),
  labVisitIds: z.array(z.string().max(TEXT_LIMITS.identifier)).default([]),
  indications: z.array(z.enum(INDICATIONS)).default([]),
  // Whole numbers from 1 to MAX_ANATOMICAL_SEGMENTS: validateStudyConfig says so in the product's words.
  segments: z.number().nullable(),
  anatomicalSegments: z.array(z.string().max(TEXT_LIMITS.identifier)).default([]),
  modality: z.array(z.enum(MODALITIES)).default([]),
  onHold: z.boolean().default(false),
  onHoldReason: z.string().nullable().default(null),
  hpfClasses: z.array(annotationClassInputSchema).default([]),
  pointClasses: z.array(annotationClassInputSchema).default([]),
  freehandClasses: z.array(annotationClassInputSchema).default([]),
  multilineClasses: z.array(annotationClassInputSchema).default([]),
  // Read outcomes (issue 30, docs/OUTCOMES.md): the rules are endpoints.ts's; validateStudyConfig
  // adds those that need the rest of the configuration (the point classes, the endpoints).
  endpoints: endpointsSchema.default([]),
  adjudication: adjudicationSchema.default(null),
  /** Part 11 electronic signatures on Mark as Scored and the QC passes (issue 30; not enforced yet). */
  signatures: z.boolean().default(false),
});
export type StudyConfig = z.infer<typeof studyConfigSchema>;

export interface StudyConfigIssue {
  /** The field (or list) the message belongs to, e.g. 'name', 'pointClasses', 'visitIds'. */
  field: keyof StudyConfig;
  /** Index within a list, when the issue is about one entry. */
  index?: number;
  message: string;
}

/** Every study configuration rule of spec doc 1 §5, as data: the form shows these, the server refuses with the first. */
export function validateStudyConfig(config: StudyConfig): StudyConfigIssue[] {
  const issues: StudyConfigIssue[] = [];
  if (config.name.trim() === '') issues.push({ field: 'name', message: STUDY_MESSAGES.nameRequired });
  if (config.indications.length === 0)
    issues.push({ field: 'indications', message: STUDY_MESSAGES.indicationRequired });
  const exclusive = config.indications.filter((i) => i === 'NASH' || i === 'CELIAC_DISEASE');
  if (exclusive.length > 0 && config.indications.length > 1) {
    issues.push({ field: 'indications', message: STUDY_MESSAGES.oneIndicationOnly });
  }
  if (config.segments === null) {
    issues.push({ field: 'segments', message: STUDY_MESSAGES.segmentsRequired });
  } else if (!Number.isInteger(config.segments) || config.segments < 1 || config.segments > MAX_ANATOMICAL_SEGMENTS) {
    issues.push({ field: 'segments', message: STUDY_MESSAGES.segmentsRange });
  } else if (
    config.anatomicalSegments.length !== config.segments ||
    config.anatomicalSegments.some((name) => name.trim() === '')
  ) {
    // Each segment needs a name: a blank one counts as missing.
    issues.push({ field: 'anatomicalSegments', message: `Enter one name per segment (${config.segments})` });
  }
  if (config.modality.length === 0) issues.push({ field: 'modality', message: STUDY_MESSAGES.modalityRequired });
  if (config.onHold && (config.onHoldReason ?? '').trim() === '') {
    issues.push({ field: 'onHoldReason', message: STUDY_MESSAGES.onHoldReasonRequired });
  }
  if ((config.onHoldReason ?? '').length > ON_HOLD_REASON_MAX) {
    issues.push({ field: 'onHoldReason', message: STUDY_MESSAGES.onHoldReasonTooLong });
  }
  if (new Set(config.protocolIds.map((p) => p.trim())).size !== config.protocolIds.length) {
    issues.push({ field: 'protocolIds', message: 'Protocol IDs must be unique' });
  }
  issues.push(...visitPairIssues(config.visitIds, config.labVisitIds));
  if (!config.indications.includes('CELIAC_DISEASE') && hasNewCeliacDefaults(config)) {
    issues.push({ field: 'indications', message: STUDY_MESSAGES.celiacDefaultsWithoutCeliac });
  }
  for (const list of ANNOTATION_CLASS_LIST_NAMES) {
    const seen = new Set<string>();
    config[list].forEach((c, index) => {
      if (c.deleted) return;
      const key = c.name.trim().toLowerCase();
      if (key === '' || seen.has(key)) issues.push({ field: list, index, message: STUDY_MESSAGES.classNameInvalid });
      seen.add(key);
    });
  }
  issues.push(...outcomeConfigIssues(config));
  return issues;
}

/**
 * The read-outcome rules that need the rest of the configuration (docs/OUTCOMES.md): each count
 * endpoint's class is one of the point classes not deleted (by name as the server stores it,
 * trimmed), on that endpoint's row; the adjudication names one of the endpoints, and one with a
 * threshold for CATEGORY_DISAGREES. The rules themselves are endpoints.ts's.
 */
function outcomeConfigIssues(config: StudyConfig): StudyConfigIssue[] {
  const issues: StudyConfigIssue[] = [];
  const pointClassNames = config.pointClasses.filter((c) => !c.deleted).map((c) => c.name.trim());
  config.endpoints.forEach((endpoint, index) => {
    const refusal = endpointRefusal([endpoint], pointClassNames);
    if (refusal) issues.push({ field: 'endpoints', index, message: refusal });
  });
  const adjudication = adjudicationRefusal(config.adjudication, config.endpoints);
  if (adjudication) issues.push({ field: 'adjudication', message: adjudication });
  return issues;
}

/**
 * Visit / lab-visit pairs: equal lengths, a visit ID in every pair, each pair unique, and a lab
 * visit ID used at most once.
 */
export function visitPairIssues(visitIds: readonly string[], labVisitIds: readonly string[]): StudyConfigIssue[] {
  const issues: StudyConfigIssue[] = [];
  if (visitIds.length !== labVisitIds.length) {
    return [{ field: 'labVisitIds', message: 'Visit IDs and Lab Visit IDs must be paired' }];
  }
  const pairs = new Set<string>();
  const labs = new Set<string>();
  visitIds.forEach((visit, index) => {
    const lab = (labVisitIds[index] ?? '').trim();
    if (visit.trim() === '') issues.push({ field: 'visitIds', index, message: STUDY_MESSAGES.visitIdRequired });
    const pair = `${visit.trim()}\u0000${lab}`;
    if (pairs.has(pair) || (lab !== '' && labs.has(lab))) {
      issues.push({ field: 'visitIds', index, message: STUDY_MESSAGES.visitPairNotUnique });
    }
    pairs.add(pair);
    if (lab !== '') labs.add(lab);
  });
  return issues;
}

/** Can this visit / lab-visit pair be added to the existing ones? Returns the message when not. */
export function canAddVisitPair(
  visitIds: readonly string[],
  labVisitIds: readonly string[],
  visit: string,
  lab: string,
): string | null {
  if (visit.trim() === '') return STUDY_MESSAGES.visitIdRequired;
  const issues = visitPairIssues([...visitIds, visit.trim()], [...labVisitIds, lab.trim()]);
  return issues.find((i) => i.index === visitIds.length)?.message ?? null;
}

/** Indication selection (spec doc 1 §5): choosing NASH leaves only NASH. */
export function selectIndications(previous: readonly Indication[], next: readonly Indication[]): Indication[] {
  const added = next.filter((i) => !previous.includes(i));
  if (added.includes('NASH')) return ['NASH'];
  if (added.includes('CELIAC_DISEASE')) return ['CELIAC_DISEASE'];
  return [...next];
}

/** Which indications are disabled in the picker (spec doc 1 §5). */
export function isIndicationDisabled(selected: readonly Indication[], indication: Indication): boolean {
  if (selected.length === 0 || selected.includes(indication)) return false;
  if (indication === 'NASH' || indication === 'CELIAC_DISEASE') return true;
  return selected.includes('NASH') || selected.includes('CELIAC_DISEASE');
}

/** Adds the celiac default point and line classes, skipping names that exist (spec doc 1 §5). */
export function withCeliacDefaults(
  config: Pick<StudyConfig, 'pointClasses' | 'multilineClasses'>,
): Pick<StudyConfig, 'pointClasses' | 'multilineClasses'> {
  const add = (list: AnnotationClassInput[], defaults: readonly { name: string; color: string }[]) => {
    const out = [...list];
    for (const d of defaults) {
      if (out.some((c) => !c.deleted && c.name.trim().toLowerCase() === d.name.toLowerCase())) continue;
      out.push({ name: d.name, color: d.color, sortOrder: out.length, enabled: true });
    }
    return out;
  };
  return {
    pointClasses: add(config.pointClasses, CELIAC_DEFAULT_POINT_CLASSES),
    multilineClasses: add(config.multilineClasses, CELIAC_DEFAULT_LINE_CLASSES),
  };
}

/**
 * A class as choosing Celiac Disease added it and nobody changed since: not saved yet (no id), not
 * deleted, enabled, and with a default's name and colour.
 */
function isUntouchedDefault(c: AnnotationClassInput, defaults: readonly { name: string; color: string }[]): boolean {
  return (
    c.id === undefined &&
    !c.deleted &&
    c.enabled &&
    defaults.some((d) => d.name === c.name && d.color.toLowerCase() === c.color.toLowerCase())
  );
}

/**
 * The rule of docs/STUDIES.md "Celiac defaults": the defaults that choosing Celiac Disease added are
 * removed when it is unchosen, unless the user changed them (renamed, recoloured, disabled) or they
 * were saved. The form applies it when the indication changes.
 */
export function withoutCeliacDefaults(
  config: Pick<StudyConfig, 'pointClasses' | 'multilineClasses'>,
): Pick<StudyConfig, 'pointClasses' | 'multilineClasses'> {
  const keep = (list: AnnotationClassInput[], defaults: readonly { name: string; color: string }[]) =>
    list.filter((c) => !isUntouchedDefault(c, defaults)).map((c, i) => ({ ...c, sortOrder: i }));
  return {
    pointClasses: keep(config.pointClasses, CELIAC_DEFAULT_POINT_CLASSES),
    multilineClasses: keep(config.multilineClasses, CELIAC_DEFAULT_LINE_CLASSES),
  };
}

/**
 * Whether a configuration holds every celiac default, new and untouched — what a form that kept them
 * after Celiac Disease was unchosen would send. The server refuses that for a study that is not
 * celiac (validateStudyConfig); a user who kept some on purpose (edited, or not all) is not refused.
 */
export function hasNewCeliacDefaults(config: Pick<StudyConfig, 'pointClasses' | 'multilineClasses'>): boolean {
  const all = (list: AnnotationClassInput[], defaults: readonly { name: string; color: string }[]) =>
    defaults.every((d) => list.some((c) => isUntouchedDefault(c, [d])));
  return (
    all(config.pointClasses, CELIAC_DEFAULT_POINT_CLASSES) && all(config.multilineClasses, CELIAC_DEFAULT_LINE_CLASSES)
  );
}

/** A changed field of an existing study: the new value and the reason (spec doc 1 §7). */
export const changeValueSchema = <T extends z.ZodType>(value: T) =>
  z.object({ value, reasonForChange: z.string().max(TEXT_LIMITS.reason).nullable().optional() });

export const studyUpdateSchema = z
  .object({
    name: changeValueSchema(studyConfigSchema.shape.name),
    sponsor: changeValueSchema(z.string().max(TEXT_LIMITS.sponsor).nullable()),
    protocolIds: changeValueSchema(z.array(z.string().trim().min(1).max(TEXT_LIMITS.identifier))),
    visitIds: changeValueSchema(z.array(z.string().max(TEXT_LIMITS.identifier))),
    labVisitIds: changeValueSchema(z.array(z.string().max(TEXT_LIMITS.identifier))),
    indications: changeValueSchema(z.array(z.enum(INDICATIONS))),
    segments: changeValueSchema(z.number().int().nullable()),
    anatomicalSegments: changeValueSchema(z.array(z.string().max(TEXT_LIMITS.identifier))),
    modality: changeValueSchema(z.array(z.enum(MODALITIES))),
    onHold: changeValueSchema(z.boolean()),
    onHoldReason: changeValueSchema(z.string().nullable()),
    hpfClasses: changeValueSchema(z.array(annotationClassInputSchema)),
    pointClasses: changeValueSchema(z.array(annotationClassInputSchema)),
    freehandClasses: changeValueSchema(z.array(annotationClassInputSchema)),
    multilineClasses: changeValueSchema(z.array(annotationClassInputSchema)),
    endpoints: changeValueSchema(endpointsSchema),
    adjudication: changeValueSchema(adjudicationSchema),
    signatures: changeValueSchema(z.boolean()),
  })
  .partial();
export type StudyUpdate = z.infer<typeof studyUpdateSchema>;

/** An annotation class as the server sends it (spec doc 1 §3). */
export interface AnnotationClassView {
  id: number;
  name: string;
  color: string;
  sortOrder: number;
  type: AnnotationClassType;
  enabled: boolean;
  deleted: boolean;
  count: number;
}

/** The study view (GET /api/studies/{id}, rows of GET /api/studies/list). */
export interface StudyView {
  id: number;
  name: string;
  sponsor: string | null;
  protocolIds: string[];
  visitIds: string[];
  labVisitIds: string[];
  indications: Indication[];
  segments: number;
  anatomicalSegments: string[];
  modality: Modality[];
  onHold: boolean;
  onHoldReason: string | null;
  createdAt: string;
  isNoto: boolean;
  mostRecentUploadAt: string | null;
  uploaders: StudyUserRef[];
  readers: StudyUserRef[];
  readonlyUsers: StudyUserRef[];
  hpfClasses: AnnotationClassView[];
  pointClasses: AnnotationClassView[];
  freehandClasses: AnnotationClassView[];
  multilineClasses: AnnotationClassView[];
  /** Read outcomes (issue 30): the study's endpoints, its adjudication rule, Part 11 signatures on or off. */
  endpoints: EndpointDefinition[];
  adjudication: Adjudication;
  signatures: boolean;
  numberOfUnassignedImages: number | null;
  numberOfCasesNeedingQC: number | null;
  numberOfQueriesOpen: number | null;
  numberOfQueriesAnswered: number | null;
  numberOfAssignedReadCases: number | null;
  numberOfAssignedUnreadCases: number | null;
}

export interface StudyUserRef {
  id: number;
  username: string;
  firstName: string | null;
  lastName: string | null;
  roleId: number;
  roleName: string;
  organizationName: string | null;
}

// ---------------------------------------------------------------------------------------------
// The studies API as built (docs/STUDIES.md): create payload, reason rule, list query, responses.

/**
 * POST /api/studies: the configuration, where a missing or non-integer segment count reads as
 * empty so that the spec's message answers ('Number of Anatomical Segments is required').
 */
/**
 * A user given study access by the create payload's `uploaders`, `readers` or `readonlyUsers`
 * (spec doc 1 §7): a user id, or `{ id, roleId }` to choose the role within the list's roles.
 */
export const studyUserAssignmentSchema = z.union([
  z.number().int().positive(),
  z.object({ id: z.number().int().positive(), roleId: z.number().int().positive().optional() }),
]);
export type StudyUserAssignment = z.infer<typeof studyUserAssignmentSchema>;

/**
 * The roles each user list of the create payload may grant (assignable roles only, spec doc 1 §6),
 * the first being the default when no roleId is given.
 */
export const STUDY_USER_LIST_ROLES: Readonly<Record<StudyUserGroup, readonly [RoleName, ...RoleName[]]>> = {
  uploaders: ['UPLOADER', 'LabTech'],
  readers: ['CR'],
  readonlyUsers: ['SPONSOR', 'ISC', 'DM', 'PM'],
};

export const studyCreateSchema = studyConfigSchema.extend({
  segments: z.number().nullable().default(null),
  uploaders: z.array(studyUserAssignmentSchema).max(500).default([]),
  readers: z.array(studyUserAssignmentSchema).max(500).default([]),
  readonlyUsers: z.array(studyUserAssignmentSchema).max(500).default([]),
});
export type StudyCreate = z.input<typeof studyCreateSchema>;

/**
 * Reason for change on an existing study (spec doc 1 §5): every changed field needs a reason, even
 * when its previous value was empty, because the form asks for a reason beside each changed field.
 * (Stricter than reasonForChangeError, which lets a first value through without one.)
 */
export function studyReasonForChangeError(
  before: unknown,
  after: unknown,
  reason: string | null | undefined,
): string | null {
  if (!valuesDiffer(before, after)) return null;
  return reason !== null && reason !== undefined && reason.trim() !== ''
    ? null
    : STUDY_MESSAGES.reasonForChangeRequired;
}

/** A field of a study's configuration. */
export type StudyField = keyof StudyConfig;

/**
 * Fields that share one 'Reason for change' (the form shows them together): lab visit IDs reuse the
 * visit IDs' reason (doc 1 §7), the segment names go with the number of segments, the hold reason
 * with the hold. The server and the form read reasons through this one table.
 */
export const STUDY_REASON_GROUPS = {
  name: ['name'],
  sponsor: ['sponsor'],
  protocolIds: ['protocolIds'],
  visitIds: ['visitIds', 'labVisitIds'],
  indications: ['indications'],
  segments: ['segments', 'anatomicalSegments'],
  modality: ['modality'],
  onHold: ['onHold', 'onHoldReason'],
  hpfClasses: ['hpfClasses'],
  pointClasses: ['pointClasses'],
  freehandClasses: ['freehandClasses'],
  multilineClasses: ['multilineClasses'],
  endpoints: ['endpoints'],
  adjudication: ['adjudication'],
  signatures: ['signatures'],
} as const satisfies Record<string, readonly StudyField[]>;
export type StudyReasonGroup = keyof typeof STUDY_REASON_GROUPS;
export const STUDY_REASON_GROUP_NAMES = Object.keys(STUDY_REASON_GROUPS) as StudyReasonGroup[];

export function studyReasonGroupOf(field: StudyField): StudyReasonGroup {
  return (
    STUDY_REASON_GROUP_NAMES.find((group) => (STUDY_REASON_GROUPS[group] as readonly StudyField[]).includes(field)) ??
    'name'
  );
}

/**
 * The reason that covers a change of `field`: its group's, else — for the point and line lists
 * filled with the celiac defaults because celiac was just chosen — the indications' reason.
 * `given` answers the reason written for a group (blank or absent: none).
 */
export function coveringStudyReason(
  field: StudyField,
  given: (group: StudyReasonGroup) => string | null | undefined,
  celiacAdded: boolean,
): string | null {
  const own = given(studyReasonGroupOf(field))?.trim() ?? '';
  if (own !== '') return own;
  if (celiacAdded && (field === 'pointClasses' || field === 'multilineClasses')) {
    const viaIndications = given('indications')?.trim() ?? '';
    if (viaIndications !== '') return viaIndications;
  }
  return null;
}

/** The kind of user of the studies list (spec doc 1 §2.4), by the role worked as. */
export type StudyListKind = 'admin' | 'reader' | 'uploader';
export function studyListKind(workAsRoleName: string | null | undefined): StudyListKind {
  if (workAsRoleName === 'CR' || workAsRoleName === 'NOTO') return 'reader';
  if (workAsRoleName === 'UPLOADER' || workAsRoleName === 'Site') return 'uploader';
  return 'admin';
}

export type StudyCountKey =
  | 'numberOfUnassignedImages'
  | 'numberOfCasesNeedingQC'
  | 'numberOfQueriesOpen'
  | 'numberOfQueriesAnswered'
  | 'numberOfAssignedReadCases'
  | 'numberOfAssignedUnreadCases';

/**
 * The counts each kind of user sees (doc 1 §2.4): admins the work counts, readers their own read and
 * unread cases, uploaders the open queries. The server sends the others as null and does not sort
 * by them, so a blinded reader learns nothing of the study's QC or query load.
 */
export const STUDY_COUNTS_BY_KIND: Readonly<Record<StudyListKind, readonly StudyCountKey[]>> = {
  admin: ['numberOfUnassignedImages', 'numberOfCasesNeedingQC', 'numberOfQueriesOpen', 'numberOfQueriesAnswered'],
  reader: ['numberOfAssignedReadCases', 'numberOfAssignedUnreadCases'],
  uploader: ['numberOfQueriesOpen'],
};

/** Which list of the study view (uploaders, readers, read-only users) a study-access role falls in. */
export type StudyUserGroup = 'uploaders' | 'readers' | 'readonlyUsers';
export function studyUserGroup(roleName: string): StudyUserGroup {
  if (roleName === 'UPLOADER' || roleName === 'LabTech' || roleName === 'Site') return 'uploaders';
  if (roleName === 'CR' || roleName === 'NOTO') return 'readers';
  return 'readonlyUsers';
}

/** Page sizes of every list (spec doc 1 §9). */
export const pageSizeSchema = z
  .number()
  .int()
  .refine((n) => (PAGE_SIZES as readonly number[]).includes(n), {
    message: `pageSize must be one of ${PAGE_SIZES.join(', ')}`,
  });
export const pageSchema = z.number().int().min(1).max(1_000_000);

/** Sort values: a key for ascending, '-' + key for descending. */
export function sortValues<const K extends string>(keys: readonly K[]): [K | `-${K}`, ...(K | `-${K}`)[]] {
  const values: (K | `-${K}`)[] = [];
  for (const key of keys) values.push(key, `-${key}`);
  return values as [K | `-${K}`, ...(K | `-${K}`)[]];
}

export const STUDY_SORT_KEYS = [
  'name',
  'sponsor',
  'createdAt',
  'mostRecentUploadAt',
  'status',
  'numberOfUnassignedImages',
  'numberOfCasesNeedingQC',
  'numberOfQueriesOpen',
  'numberOfQueriesAnswered',
  'numberOfAssignedReadCases',
  'numberOfAssignedUnreadCases',
] as const;
export type StudySortKey = (typeof STUDY_SORT_KEYS)[number];

/** GET /api/studies/list: name search (trimmed), optional paging, sort (default newest first). */
export const studyListQuerySchema = z.object({
  name: z.string().max(TEXT_LIMITS.search).optional(),
  page: pageSchema.optional(),
  pageSize: pageSizeSchema.optional(),
  sort: z.enum(sortValues(STUDY_SORT_KEYS)).default('-createdAt'),
});
export type StudyListQuery = z.input<typeof studyListQuerySchema>;

/** A row of the studies list: the study view without the class and user lists and the read-outcome configuration. */
export type StudyListRow = Omit<
  StudyView,
  'uploaders' | 'readers' | 'readonlyUsers' | AnnotationClassList | 'endpoints' | 'adjudication' | 'signatures'
>;

export const annotationClassViewSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  color: z.string(),
  sortOrder: z.number().int(),
  type: z.enum(['HPF', 'POINT', 'FREEHAND', 'MULTILINE']),
  enabled: z.boolean(),
  deleted: z.boolean(),
  count: z.number().int(),
}) satisfies z.ZodType<AnnotationClassView>;

export const studyUserRefSchema = z.object({
  id: z.number().int(),
  username: z.string(),
  firstName: z.string().nullable(),
  lastName: z.string().nullable(),
  roleId: z.number().int(),
  roleName: z.string(),
  organizationName: z.string().nullable(),
}) satisfies z.ZodType<StudyUserRef>;

export const studyListRowSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  sponsor: z.string().nullable(),
  protocolIds: z.array(z.string()),
  visitIds: z.array(z.string()),
  labVisitIds: z.array(z.string()),
  indications: z.array(z.enum(INDICATIONS)),
  segments: z.number().int(),
  anatomicalSegments: z.array(z.string()),
  modality: z.array(z.enum(MODALITIES)),
  onHold: z.boolean(),
  onHoldReason: z.string().nullable(),
  createdAt: z.string(),
  isNoto: z.boolean(),
  mostRecentUploadAt: z.string().nullable(),
  numberOfUnassignedImages: z.number().int().nullable(),
  numberOfCasesNeedingQC: z.number().int().nullable(),
  numberOfQueriesOpen: z.number().int().nullable(),
  numberOfQueriesAnswered: z.number().int().nullable(),
  numberOfAssignedReadCases: z.number().int().nullable(),
  numberOfAssignedUnreadCases: z.number().int().nullable(),
}) satisfies z.ZodType<StudyListRow>;

export const studyViewSchema = studyListRowSchema.extend({
  uploaders: z.array(studyUserRefSchema),
  readers: z.array(studyUserRefSchema),
  readonlyUsers: z.array(studyUserRefSchema),
  hpfClasses: z.array(annotationClassViewSchema),
  pointClasses: z.array(annotationClassViewSchema),
  freehandClasses: z.array(annotationClassViewSchema),
  multilineClasses: z.array(annotationClassViewSchema),
  endpoints: z.array(endpointDefinitionSchema),
  adjudication: adjudicationSchema,
  signatures: z.boolean(),
}) satisfies z.ZodType<StudyView>;

export const studyListResponseSchema = z.object({
  success: z.literal(true),
  studies: z.array(studyListRowSchema),
  total: z.number().int(),
});
export type StudyListResponse = z.infer<typeof studyListResponseSchema>;

/** POST /api/studies and PUT /api/studies/{id}. */
export const studySaveResponseSchema = z.object({
  success: z.literal(true),
  message: z.string(),
  study: studyViewSchema,
});
export type StudySaveResponse = z.infer<typeof studySaveResponseSchema>;

/** The sponsor's name goes only to users with this permission (central readers are blinded to it). */
export const VIEW_SPONSOR_PERMISSION: Permission = 'AP_StudyData_ViewSponsor';
