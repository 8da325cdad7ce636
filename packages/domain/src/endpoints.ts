import { z } from 'zod';
import type { AnnotationView, MultilineCategory } from './annotations.js';
import { TEXT_LIMITS } from './constants.js';

// ---------------------------------------------------------------------------------------------
// Read outcomes (issue 30, beyond the spec): a study's endpoints, computed from one reader's own
// annotations on a case, and the adjudication rule that decides when the readers disagree.
// Pure rules only; docs/OUTCOMES.md says what is wired and what is not yet.
// ---------------------------------------------------------------------------------------------

export const ENDPOINT_KINDS = [
  'PEAK_COUNT_PER_HPF',
  'MEAN_COUNT_PER_HPF',
  'TOTAL_COUNT',
  'VH_CD_RATIO',
  'MEAN_VILLUS_HEIGHT_UM',
  'MEAN_CRYPT_DEPTH_UM',
] as const;
export type EndpointKind = (typeof ENDPOINT_KINDS)[number];

/** The kinds that count points of one class: they need `className`, the others refuse it. */
export const COUNT_ENDPOINT_KINDS: readonly EndpointKind[] = [
  'PEAK_COUNT_PER_HPF',
  'MEAN_COUNT_PER_HPF',
  'TOTAL_COUNT',
];

/**
 * The unit of each kind's value, as the read-outcomes report prints it (docs/REPORTS.md): counts per
 * HPF for the per-HPF kinds, cells for the total, µm for the mean lengths, none for the ratio.
 */
export const ENDPOINT_UNITS: Readonly<Record<EndpointKind, string>> = {
  PEAK_COUNT_PER_HPF: 'cells/HPF',
  MEAN_COUNT_PER_HPF: 'cells/HPF',
  TOTAL_COUNT: 'cells',
  VH_CD_RATIO: '',
  MEAN_VILLUS_HEIGHT_UM: 'µm',
  MEAN_CRYPT_DEPTH_UM: 'µm',
};

/** The unit of an endpoint's value ('' for a ratio). */
export const endpointUnit = (kind: EndpointKind): string => ENDPOINT_UNITS[kind];

export const POSITIVE_WHEN = ['GTE', 'LT'] as const;
export type PositiveWhen = (typeof POSITIVE_WHEN)[number];

export const ADJUDICATION_RULES = ['CATEGORY_DISAGREES', 'ABS_DIFF_ABOVE'] as const;
export type AdjudicationRule = (typeof ADJUDICATION_RULES)[number];

export const MAX_ENDPOINTS = 20;
export const ENDPOINT_LABEL_MAX = 100;
export const ENDPOINT_KEY_PATTERN = /^[a-z0-9_]{1,32}$/;

/** Endpoint and adjudication configuration messages, and the reasons a value is null. */
export const ENDPOINT_MESSAGES = {
  keyInvalid: 'key must be 1 to 32 characters, each a lowercase letter, a digit or an underscore',
  labelRequired: 'label is required',
  labelTooLong: `label must be at most ${ENDPOINT_LABEL_MAX} characters`,
  kindInvalid: `kind must be one of ${ENDPOINT_KINDS.join(', ')}`,
  classNameRequired: `className is required for ${COUNT_ENDPOINT_KINDS.join(', ')}`,
  classNameRefused: `className is only for ${COUNT_ENDPOINT_KINDS.join(', ')}`,
  classNameTooLong: `className must be at most ${TEXT_LIMITS.identifier} characters`,
  thresholdInvalid: 'threshold must be a number of at least 0',
  positiveWhenInvalid: `positiveWhen must be one of ${POSITIVE_WHEN.join(', ')}`,
  thresholdPair: 'threshold and positiveWhen go together: give both or neither',
  keysNotUnique: 'Endpoint keys must be unique in the study',
  tooManyEndpoints: `A study has at most ${MAX_ENDPOINTS} endpoints`,
  ruleInvalid: `rule must be one of ${ADJUDICATION_RULES.join(', ')}`,
  valueRequired: 'value is required for ABS_DIFF_ABOVE and must be greater than 0',
  valueRefused: 'value is only for ABS_DIFF_ABOVE',
  // Why a value is null (stored with the frozen read, shown beside the empty value).
  noHpf: 'The reader drew no HPF',
  noVillusLine: 'The reader drew no villus height line',
  noCryptLine: 'The reader drew no crypt depth line',
  cryptDepthZero: 'The mean crypt depth is 0 µm',
} as const;

/** 'className Eos is not one of the study's point classes (Neutrophil, Lymphocyte)'. */
export const classNotInStudy = (className: string, pointClassNames: readonly string[]): string =>
  `className ${className} is not one of the study's point classes (${
    pointClassNames.length > 0 ? pointClassNames.join(', ') : 'the study has none'
  })`;

/** 'endpointKey pec is not one of the study's endpoints (vh_cd)'. */
export const endpointKeyUnknown = (endpointKey: string, keys: readonly string[]): string =>
  `endpointKey ${endpointKey} is not one of the study's endpoints (${keys.length > 0 ? keys.join(', ') : 'the study has none'})`;

/** 'CATEGORY_DISAGREES needs an endpoint with a threshold: pec has none'. */
export const categoryNeedsThreshold = (endpointKey: string): string =>
  `CATEGORY_DISAGREES needs an endpoint with a threshold: ${endpointKey} has none`;

export const endpointDefinitionSchema = z
  .object({
    key: z.string().regex(ENDPOINT_KEY_PATTERN, ENDPOINT_MESSAGES.keyInvalid),
    label: z
      .string()
      .trim()
      .min(1, ENDPOINT_MESSAGES.labelRequired)
      .max(ENDPOINT_LABEL_MAX, ENDPOINT_MESSAGES.labelTooLong),
    kind: z.enum(ENDPOINT_KINDS, { error: ENDPOINT_MESSAGES.kindInvalid }),
    className: z
      .string()
      .trim()
      .min(1, ENDPOINT_MESSAGES.classNameRequired)
      .max(TEXT_LIMITS.identifier, ENDPOINT_MESSAGES.classNameTooLong)
      .optional(),
    threshold: z
      .number({ error: ENDPOINT_MESSAGES.thresholdInvalid })
      .min(0, ENDPOINT_MESSAGES.thresholdInvalid)
      .optional(),
    positiveWhen: z.enum(POSITIVE_WHEN, { error: ENDPOINT_MESSAGES.positiveWhenInvalid }).optional(),
  })
  .superRefine((d, ctx) => {
    const counts = COUNT_ENDPOINT_KINDS.includes(d.kind);
    if (counts && d.className === undefined) {
      ctx.addIssue({ code: 'custom', path: ['className'], message: ENDPOINT_MESSAGES.classNameRequired });
    }
    if (!counts && d.className !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['className'], message: ENDPOINT_MESSAGES.classNameRefused });
    }
    if ((d.threshold === undefined) !== (d.positiveWhen === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['threshold'], message: ENDPOINT_MESSAGES.thresholdPair });
    }
  });
export type EndpointDefinition = z.infer<typeof endpointDefinitionSchema>;

export const endpointsSchema = z
  .array(endpointDefinitionSchema)
  .max(MAX_ENDPOINTS, ENDPOINT_MESSAGES.tooManyEndpoints)
  .superRefine((list, ctx) => {
    const seen = new Set<string>();
    list.forEach((d, index) => {
      if (seen.has(d.key)) {
        ctx.addIssue({ code: 'custom', path: [index, 'key'], message: ENDPOINT_MESSAGES.keysNotUnique });
      }
      seen.add(d.key);
    });
  });

/**
 * The rule the schema cannot know alone: a count endpoint's class must be one of the study's point
 * classes (exact name; the caller passes the names of the classes not deleted). The first refusal,
 * or null.
 */
export function endpointRefusal(
  endpoints: readonly EndpointDefinition[],
  pointClassNames: readonly string[],
): string | null {
  for (const d of endpoints) {
    if (d.className !== undefined && !pointClassNames.includes(d.className)) {
      return classNotInStudy(d.className, pointClassNames);
    }
  }
  return null;
}

export const adjudicationSchema = z
  .object({
    endpointKey: z.string().regex(ENDPOINT_KEY_PATTERN, ENDPOINT_MESSAGES.keyInvalid),
    rule: z.enum(ADJUDICATION_RULES, { error: ENDPOINT_MESSAGES.ruleInvalid }),
    value: z.number({ error: ENDPOINT_MESSAGES.valueRequired }).optional(),
  })
  .superRefine((a, ctx) => {
    if (a.rule === 'ABS_DIFF_ABOVE' && (a.value === undefined || !(a.value > 0))) {
      ctx.addIssue({ code: 'custom', path: ['value'], message: ENDPOINT_MESSAGES.valueRequired });
    }
    if (a.rule === 'CATEGORY_DISAGREES' && a.value !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['value'], message: ENDPOINT_MESSAGES.valueRefused });
    }
  })
  .nullable();
export type Adjudication = z.infer<typeof adjudicationSchema>;
export type AdjudicationConfig = NonNullable<Adjudication>;

/**
 * An endpoint with its keys in the schema's order and no undefined ones, whatever order it was sent
 * in or jsonb stored it in: the server stores and returns this form, and the study form builds it,
 * so a stored and a sent value compare as equal (a round trip is no change) and audit rows read alike.
 */
export function canonicalEndpoint(d: EndpointDefinition): EndpointDefinition {
  return {
    key: d.key,
    label: d.label,
    kind: d.kind,
    ...(d.className !== undefined && { className: d.className }),
    ...(d.threshold !== undefined && { threshold: d.threshold }),
    ...(d.positiveWhen !== undefined && { positiveWhen: d.positiveWhen }),
  };
}

/** The adjudication rule in the same one form (see canonicalEndpoint). */
export function canonicalAdjudication(a: Adjudication): Adjudication {
  if (a === null) return null;
  return { endpointKey: a.endpointKey, rule: a.rule, ...(a.value !== undefined && { value: a.value }) };
}

/**
 * The adjudication rule against the study's endpoints: its endpointKey names one of them, and
 * CATEGORY_DISAGREES needs that endpoint to have a threshold. The refusal, or null.
 */
export function adjudicationRefusal(
  adjudication: Adjudication,
  endpoints: readonly EndpointDefinition[],
): string | null {
  if (adjudication === null) return null;
  const endpoint = endpoints.find((d) => d.key === adjudication.endpointKey);
  if (!endpoint) {
    return endpointKeyUnknown(
      adjudication.endpointKey,
      endpoints.map((d) => d.key),
    );
  }
  if (adjudication.rule === 'CATEGORY_DISAGREES' && endpoint.threshold === undefined) {
    return categoryNeedsThreshold(endpoint.key);
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Computation
// ---------------------------------------------------------------------------------------------

/**
 * One reader's own live annotations on a case (all its live images), as the endpoints need them.
 * The server builds it from its rows (`endpointInputOf`): the reader's HPFs by id; their points
 * with the class's name (null: no class, 'Other') and the HPF holding them (`parentId`, null:
 * 'Orphan'); their celiac multilines with category and length in µm.
 */
export interface EndpointInput {
  hpfs: readonly { id: number }[];
  points: readonly { className: string | null; parentId: number | null }[];
  lines: readonly { category: MultilineCategory; lengthUm: number }[];
}

/** One reader's value of one endpoint: null with the reason when it cannot be computed. */
export interface EndpointResult {
  value: number | null;
  /** The binary reading from threshold + positiveWhen; null without a threshold or a value. */
  positive: boolean | null;
  reason: string | null;
}

/**
 * The input of `computeEndpoint` from annotation rows (the shape the server lists): the rows of
 * `readerId` only, HPFs, points and multilines with a category and a length. `classNames` maps a
 * class id to its name. AI objects (source VisioPharm, no reader) are not among these rows: the
 * server adds a read's AI HPFs and points itself where the read included AI counts (docs/OUTCOMES.md).
 */
export function endpointInputOf(
  rows: readonly Pick<
    AnnotationView,
    'id' | 'annotationType' | 'userId' | 'annotationClassId' | 'parentId' | 'multilineCategory' | 'length'
  >[],
  readerId: number,
  classNames: ReadonlyMap<number, string>,
): EndpointInput {
  const hpfs: { id: number }[] = [];
  const points: { className: string | null; parentId: number | null }[] = [];
  const lines: { category: MultilineCategory; lengthUm: number }[] = [];
  for (const row of rows) {
    if (row.userId !== readerId) continue;
    if (row.annotationType === 'HPF') hpfs.push({ id: row.id });
    else if (row.annotationType === 'POINT') {
      const className = row.annotationClassId === null ? null : (classNames.get(row.annotationClassId) ?? null);
      points.push({ className, parentId: row.parentId });
    } else if (row.annotationType === 'MULTILINE' && row.multilineCategory !== null && row.length !== null) {
      lines.push({ category: row.multilineCategory, lengthUm: row.length });
    }
  }
  return { hpfs, points, lines };
}

/** The number of points of `className` in each of the reader's HPFs (0 for an empty one), in HPF order. */
export function countsPerHpf(input: EndpointInput, className: string): number[] {
  const counts = new Map<number, number>(input.hpfs.map((h) => [h.id, 0]));
  for (const p of input.points) {
    if (p.className !== className || p.parentId === null) continue;
    const count = counts.get(p.parentId);
    if (count !== undefined) counts.set(p.parentId, count + 1);
  }
  return input.hpfs.map((h) => counts.get(h.id) ?? 0);
}

function mean(values: readonly number[]): number {
  let sum = 0;
  for (const v of values) sum += v;
  return sum / values.length;
}

function lengths(input: EndpointInput, category: MultilineCategory): number[] {
  return input.lines.filter((l) => l.category === category).map((l) => l.lengthUm);
}

function valueOf(
  definition: EndpointDefinition,
  input: EndpointInput,
): { value: number | null; reason: string | null } {
  const nothing = (reason: string) => ({ value: null, reason });
  const className = definition.className ?? '';
  switch (definition.kind) {
    case 'PEAK_COUNT_PER_HPF': {
      if (input.hpfs.length === 0) return nothing(ENDPOINT_MESSAGES.noHpf);
      return { value: Math.max(...countsPerHpf(input, className)), reason: null };
    }
    case 'MEAN_COUNT_PER_HPF': {
      if (input.hpfs.length === 0) return nothing(ENDPOINT_MESSAGES.noHpf);
      return { value: mean(countsPerHpf(input, className)), reason: null };
    }
    case 'TOTAL_COUNT':
      return { value: input.points.filter((p) => p.className === className).length, reason: null };
    case 'MEAN_VILLUS_HEIGHT_UM': {
      const vh = lengths(input, 'VILLUS_HEIGHT');
      return vh.length === 0 ? nothing(ENDPOINT_MESSAGES.noVillusLine) : { value: mean(vh), reason: null };
    }
    case 'MEAN_CRYPT_DEPTH_UM': {
      const cd = lengths(input, 'CRYPT_DEPTH');
      return cd.length === 0 ? nothing(ENDPOINT_MESSAGES.noCryptLine) : { value: mean(cd), reason: null };
    }
    case 'VH_CD_RATIO': {
      const vh = lengths(input, 'VILLUS_HEIGHT');
      const cd = lengths(input, 'CRYPT_DEPTH');
      if (vh.length === 0) return nothing(ENDPOINT_MESSAGES.noVillusLine);
      if (cd.length === 0) return nothing(ENDPOINT_MESSAGES.noCryptLine);
      const depth = mean(cd);
      if (depth === 0) return nothing(ENDPOINT_MESSAGES.cryptDepthZero);
      return { value: mean(vh) / depth, reason: null };
    }
  }
}

/** The binary reading of a value: GTE → value ≥ threshold, LT → value < threshold; null without either. */
export function endpointPositive(definition: EndpointDefinition, value: number | null): boolean | null {
  if (value === null || definition.threshold === undefined || definition.positiveWhen === undefined) return null;
  return definition.positiveWhen === 'GTE' ? value >= definition.threshold : value < definition.threshold;
}

/**
 * One reader's value of one endpoint from their own annotations. Nothing is rounded here (a mean
 * of 7/3 stays 2.333…): display rounds, the frozen value does not.
 */
export function computeEndpoint(definition: EndpointDefinition, input: EndpointInput): EndpointResult {
  const { value, reason } = valueOf(definition, input);
  return { value, positive: endpointPositive(definition, value), reason };
}

// ---------------------------------------------------------------------------------------------
// Adjudication and final values
// ---------------------------------------------------------------------------------------------

/**
 * Whether the adjudication rule fires on the primary readers' results for its endpoint.
 * CATEGORY_DISAGREES: their positive readings differ; ABS_DIFF_ABOVE: max − min of their values is
 * above the rule's value. A null among them (a value that could not be computed) fires either
 * rule: the readers did not agree on a value, and without adjudication the case would have no
 * final one. Fewer than two readings never fire: there is no one to disagree with.
 */
export function adjudicationFires(
  rule: AdjudicationConfig,
  primaryResults: readonly Pick<EndpointResult, 'value' | 'positive'>[],
): boolean {
  if (primaryResults.length < 2) return false;
  if (rule.rule === 'CATEGORY_DISAGREES') {
    const readings = primaryResults.map((r) => r.positive);
    if (readings.some((p) => p === null)) return true;
    return new Set(readings).size > 1;
  }
  const values = primaryResults.map((r) => r.value);
  if (!values.every((v) => v !== null)) return true;
  return Math.max(...values) - Math.min(...values) > (rule.value ?? 0);
}

export interface FinalOutcome {
  value: number | null;
  positive: boolean | null;
  adjudicated: boolean;
}

/**
 * The final value of one endpoint on a case: the adjudicator's where there is one; else the
 * primary readers' mean (null if any value is null) and their common reading (null where they
 * differ, where any is null, or without a threshold).
 */
export function finalOutcome(
  definition: EndpointDefinition,
  primaryResults: readonly Pick<EndpointResult, 'value' | 'positive'>[],
  adjudicatorResult: Pick<EndpointResult, 'value' | 'positive'> | null,
): FinalOutcome {
  if (adjudicatorResult !== null) {
    return { value: adjudicatorResult.value, positive: adjudicatorResult.positive, adjudicated: true };
  }
  const values = primaryResults.map((r) => r.value);
  const value = values.length > 0 && values.every((v) => v !== null) ? mean(values) : null;
  const readings = new Set(primaryResults.map((r) => r.positive));
  const [only] = [...readings];
  const positive =
    definition.threshold !== undefined && readings.size === 1 && only !== undefined && only !== null ? only : null;
  return { value, positive, adjudicated: false };
}
