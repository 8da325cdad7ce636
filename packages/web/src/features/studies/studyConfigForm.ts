import {
  ANNOTATION_CLASS_LIST_NAMES,
  studyConfigSchema,
  studyReasonForChangeError,
  validateStudyConfig,
  valuesDiffer,
  type AnnotationClassInput,
  type AnnotationClassView,
  type StudyConfig,
  type StudyConfigIssue,
  type StudyUpdate,
  type StudyView,
  coveringStudyReason,
  STUDY_REASON_GROUP_NAMES,
  STUDY_REASON_GROUPS,
  studyReasonGroupOf,
  type StudyField,
  type StudyReasonGroup,
} from '@lamina/domain';
import { zodResolver } from '@hookform/resolvers/zod';
import type { FieldErrors, Resolver } from 'react-hook-form';

export type { StudyField };

/** A blank study: every list empty, no segments chosen yet. */
export function emptyStudyConfig(): StudyConfig {
  return {
    name: '',
    sponsor: null,
    protocolIds: [],
    visitIds: [],
    labVisitIds: [],
    indications: [],
    segments: null,
    anatomicalSegments: [],
    modality: [],
    onHold: false,
    onHoldReason: null,
    hpfClasses: [],
    pointClasses: [],
    freehandClasses: [],
    multilineClasses: [],
    endpoints: [],
    adjudication: null,
    signatures: false,
  };
}

function classInputs(classes: readonly AnnotationClassView[]): AnnotationClassInput[] {
  // The view lists live classes only; a deleted class must not be sent back (the server refuses it).
  return classes
    .filter((c) => !c.deleted)
    .sort((a, b) => a.sortOrder - b.sortOrder)
    .map((c) => ({
      id: c.id,
      name: c.name,
      color: c.color,
      sortOrder: c.sortOrder,
      enabled: c.enabled,
      deleted: c.deleted,
    }));
}

/** The editable configuration of an existing study. */
export function configFromStudy(study: StudyView): StudyConfig {
  return {
    name: study.name,
    sponsor: study.sponsor,
    protocolIds: [...study.protocolIds],
    visitIds: [...study.visitIds],
    labVisitIds: [...study.labVisitIds],
    indications: [...study.indications],
    segments: study.segments,
    anatomicalSegments: [...study.anatomicalSegments],
    modality: [...study.modality],
    onHold: study.onHold,
    onHoldReason: study.onHoldReason,
    hpfClasses: classInputs(study.hpfClasses),
    pointClasses: classInputs(study.pointClasses),
    freehandClasses: classInputs(study.freehandClasses),
    multilineClasses: classInputs(study.multilineClasses),
    endpoints: study.endpoints.map((endpoint) => ({ ...endpoint })),
    adjudication: study.adjudication && { ...study.adjudication },
    signatures: study.signatures,
  };
}

/** Annotation counts by class id, for the delete rule (doc 1 §4: only when count is 0 or missing). */
export function classCounts(study: StudyView | undefined): ReadonlyMap<number, number> {
  const counts = new Map<number, number>();
  if (!study) return counts;
  for (const list of ANNOTATION_CLASS_LIST_NAMES) for (const c of study[list]) counts.set(c.id, c.count);
  return counts;
}

/**
 * Every problem with the configuration as the server would see it: the domain schema's issues
 * (lengths, colours, decoding) and then the study rules of `validateStudyConfig`, each with the
 * field (and list index) it belongs to.
 */
export function studyConfigIssues(values: StudyConfig): StudyConfigIssue[] {
  const parsed = studyConfigSchema.safeParse(values);
  const schemaIssues: StudyConfigIssue[] = parsed.success
    ? []
    : parsed.error.issues.map((issue) => {
        const [field, index] = issue.path;
        return {
          field: (typeof field === 'string' ? field : 'name') as StudyField,
          index: typeof index === 'number' ? index : undefined,
          message: issue.message,
        };
      });
  // Both kinds together: one field's problem never hides another's.
  const issues = [...schemaIssues, ...validateStudyConfig(parsed.success ? parsed.data : values)];
  const seen = new Set<string>();
  return issues.filter((issue) => {
    const key = `${issue.field}|${issue.index ?? ''}|${issue.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function toFieldErrors(issues: readonly StudyConfigIssue[]): FieldErrors<StudyConfig> {
  const errors: FieldErrors<StudyConfig> = {};
  for (const issue of issues) {
    errors[issue.field] ??= { type: 'validate', message: issue.message };
  }
  return errors;
}

const schemaResolver = zodResolver(studyConfigSchema);

/**
 * The form's resolver: the domain schema through zodResolver, then the domain's study rules, so a
 * submitted form passes exactly what the server accepts.
 */
export const studyConfigResolver: Resolver<StudyConfig> = async (values, context, options) => {
  const result = await schemaResolver(values, context, options as never);
  if (Object.keys(result.errors).length > 0) return { values: {}, errors: result.errors as FieldErrors<StudyConfig> };
  const issues = validateStudyConfig(result.values as StudyConfig);
  if (issues.length > 0) return { values: {}, errors: toFieldErrors(issues) };
  return { values: result.values as StudyConfig, errors: {} };
};

/** The reason groups of the form are the domain's (STUDY_REASON_GROUPS), shared with the server. */
export const REASON_GROUPS = STUDY_REASON_GROUPS;
export type ReasonGroup = StudyReasonGroup;
export type Reasons = Partial<Record<ReasonGroup, string>>;
const GROUPS = STUDY_REASON_GROUP_NAMES;

export function changedFields(initial: StudyConfig, current: StudyConfig): StudyField[] {
  return (Object.keys(initial) as StudyField[]).filter((field) => valuesDiffer(initial[field], current[field]));
}

/** The groups with a changed field: each shows its 'Reason for change' input. */
export function changedGroups(initial: StudyConfig, current: StudyConfig): ReasonGroup[] {
  const changed = changedFields(initial, current);
  return GROUPS.filter((group) => REASON_GROUPS[group].some((field) => changed.includes(field)));
}

/**
 * The reason a changed field is saved with, as the server reads it: the field's own (its group's),
 * else, for the point and line lists filled with the celiac defaults because celiac was just chosen,
 * the indications' reason.
 */
export function effectiveReason(
  field: StudyField,
  initial: StudyConfig,
  current: StudyConfig,
  reasons: Reasons,
): string | null {
  const celiacChosen =
    current.indications.includes('CELIAC_DISEASE') && !initial.indications.includes('CELIAC_DISEASE');
  return coveringStudyReason(field, (group) => reasons[group], celiacChosen);
}

/**
 * The groups whose change still needs a reason. The rule is the domain's study rule, shared with
 * the server: every changed field of an existing study needs a non-blank reason.
 */
export function groupsMissingReason(initial: StudyConfig, current: StudyConfig, reasons: Reasons): ReasonGroup[] {
  return GROUPS.filter((group) =>
    REASON_GROUPS[group].some(
      (field) =>
        studyReasonForChangeError(initial[field], current[field], effectiveReason(field, initial, current, reasons)) !==
        null,
    ),
  );
}

export const reasonGroupOf = studyReasonGroupOf;

/** PUT body of an existing study: only the changed fields, each with its group's reason (doc 1 §7). */
export function buildStudyUpdate(initial: StudyConfig, current: StudyConfig, reasons: Reasons): StudyUpdate {
  const update: Record<string, { value: unknown; reasonForChange: string | null }> = {};
  // Each entry pairs a field with its own value, which is what StudyUpdate describes.
  for (const field of changedFields(initial, current)) {
    update[field] = { value: current[field], reasonForChange: effectiveReason(field, initial, current, reasons) };
  }
  return update;
}
