import type { Transaction } from 'kysely';
import {
  READ_OUTCOMES_PERMISSION,
  adjudicationFires,
  adjudicationSchema,
  computeEndpoint,
  endpointInputOf,
  endpointsSchema,
  readsAssignedCasesOnly,
  type AnnotationType,
  type CaseFinalOutcome,
  type EndpointAgreement,
  type EndpointInput,
  type ReadOutcome,
} from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import type { DB } from '../../platform/db/schema.js';
import type { Principal } from '../../platform/auth/principal.js';
import type { AuditEvent } from '../../platform/audit/audit.js';
import {
  aiEndpointAnnotations,
  caseReads,
  caseOutcomeState,
  readerEndpointAnnotations,
  readOutcomeRows,
  studyEndpointsJson,
  studyPrimaryReadings,
  type EndpointAnnotationRow,
  type ReadOutcomeRow,
} from './outcomeQueries.js';
import { presentReadOutcome } from './outcomePresenter.js';
import { caseFinalOutcomes } from './caseFinal.js';
import { endpointAgreement, primaryReadingsOf, type PrimaryReading } from './studyAgreement.js';
import { studyOutcomeCases, studyOutcomePairs } from './studyOutcomeList.js';

type Tx = Transaction<DB>;

/**
 * Who sees whose read outcomes (issue 30): a user working as a role that holds
 * READ_OUTCOMES_PERMISSION and is not blinded sees every reader's values; anyone else — a central
 * reader — only their own. The reader whose values alone the principal sees, or null for all.
 */
export function onlyOutcomesOf(principal: Pick<Principal, 'id' | 'actions' | 'workAsRole'>): number | null {
  return readsAssignedCasesOnly(principal.workAsRole) || !principal.actions.has(READ_OUTCOMES_PERMISSION)
    ? principal.id
    : null;
}

/** `endpointInputOf`'s rows from the query's, and the class names their class ids stand for. */
function endpointRows(rows: readonly EndpointAnnotationRow[], userId: number) {
  const classNames = new Map<number, string>();
  for (const r of rows) if (r.class_id !== null && r.class_name !== null) classNames.set(r.class_id, r.class_name);
  return {
    rows: rows.map((r) => ({
      id: r.id,
      annotationType: r.annotation_type as AnnotationType,
      userId,
      annotationClassId: r.class_id,
      parentId: r.parent_id,
      multilineCategory: r.multiline_category,
      length: r.length,
    })),
    classNames,
  };
}

/**
 * What one reader's read counts: their own live annotations on the case's live images, and — only
 * when their read included AI counts (their choice at Mark as Scored, `case_readers.include_ai_counts`)
 * — the imported AI HPFs and points there, as if the reader had drawn them: the AI's HPFs are HPFs of
 * the read, its points count in them, each by its AI class's name. Reader and AI class ids are kept
 * apart (two tables), so each list is turned into input with its own names.
 */
async function readInput(tx: Tx, caseId: number, readerId: number, includeAiCounts: boolean): Promise<EndpointInput> {
  const own = endpointRows(await readerEndpointAnnotations(tx, caseId, readerId), readerId);
  const input = endpointInputOf(own.rows, readerId, own.classNames);
  if (!includeAiCounts) return input;
  const ai = endpointRows(await aiEndpointAnnotations(tx, caseId), readerId);
  const aiInput = endpointInputOf(ai.rows, readerId, ai.classNames);
  return {
    hpfs: [...input.hpfs, ...aiInput.hpfs],
    points: [...input.points, ...aiInput.points],
    lines: [...input.lines, ...aiInput.lines],
  };
}

/** A reader's values as the audit trail records them: `{ endpointKey: value }`. */
const valuesByKey = (rows: readonly { endpoint_key: string; value: number | null }[]) =>
  Object.fromEntries(rows.map((r) => [r.endpoint_key, r.value]));

/**
 * Mark as Scored (issue 30): freezes the reader's value of each of the study's endpoints, in the
 * caller's transaction (the case's, after the read was recorded). A value that cannot be computed is
 * stored null with its reason. Returns the audit event (none when the study has no endpoints).
 */
export async function freezeReadOutcomes(
  tx: Tx,
  read: {
    caseId: number;
    studyId: number;
    reader: { id: number; username: string };
    scoredAt: Date;
    includeAiCounts: boolean | null;
    /** The adjudicator's read (issue 30) or a primary reader's. */
    role: 'PRIMARY' | 'ADJUDICATOR';
  },
): Promise<AuditEvent[]> {
  const endpoints = endpointsSchema.parse(await studyEndpointsJson(tx, read.studyId));
  if (endpoints.length === 0) return [];
  const input = await readInput(tx, read.caseId, read.reader.id, read.includeAiCounts === true);
  const rows = endpoints.map((definition) => {
    const result = computeEndpoint(definition, input);
    return {
      case_id: read.caseId,
      reader_id: read.reader.id,
      endpoint_key: definition.key,
      value: result.value,
      positive: result.positive,
      reason: result.reason,
      reader_role: read.role,
      scored_at: read.scoredAt,
    };
  });
  await tx.insertInto('read_outcomes').values(rows).execute();
  return [
    {
      action: 'READ_OUTCOMES_FROZEN',
      entityType: 'case',
      entityId: read.caseId,
      studyId: read.studyId,
      field: 'outcomes',
      newValue: {
        reader: read.reader.username,
        ...(read.role === 'ADJUDICATOR' && { role: read.role }),
        values: valuesByKey(rows),
      },
    },
  ];
}

/** One reader's frozen values of a case, `{ endpointKey: value }` (what their signature signs, issue 30). */
export async function frozenValues(
  tx: Tx,
  caseId: number,
  readerId: number,
  role: 'PRIMARY' | 'ADJUDICATOR',
): Promise<Record<string, number | null>> {
  const rows = await tx
    .selectFrom('read_outcomes')
    .select(['endpoint_key', 'value'])
    .where('case_id', '=', caseId)
    .where('reader_id', '=', readerId)
    .where('reader_role', '=', role)
    .execute();
  return valuesByKey(rows);
}

/**
 * Whether a case whose primary readers have all marked it goes to adjudication (issue 30): the
 * study has an adjudication rule and it fires on the primary readers' frozen values of its endpoint
 * (domain adjudicationFires; a reader without a value for it counts as a null value, which fires).
 * Read in the caller's transaction, after the last reader's values were frozen.
 */
export async function adjudicationRequired(tx: Tx, caseId: number, studyId: number): Promise<boolean> {
  const study = await tx
    .selectFrom('studies')
    .select('adjudication')
    .where('id', '=', studyId)
    .executeTakeFirstOrThrow();
  const rule = adjudicationSchema.parse(study.adjudication ?? null);
  if (rule === null) return false;
  const readers = await tx
    .selectFrom('case_readers')
    .select('user_id')
    .where('case_id', '=', caseId)
    .where('role', '=', 'PRIMARY')
    .execute();
  const values = await tx
    .selectFrom('read_outcomes')
    .select(['reader_id', 'value', 'positive'])
    .where('case_id', '=', caseId)
    .where('reader_role', '=', 'PRIMARY')
    .where('endpoint_key', '=', rule.endpointKey)
    .execute();
  return adjudicationFires(
    rule,
    readers.map((r) => values.find((v) => v.reader_id === r.user_id) ?? { value: null, positive: null }),
  );
}

/**
 * A read undone (reopened, the case reverted, the reader removed from the case): the readers' frozen
 * values are deleted in the caller's transaction, one audit event per reader that had any, with the
 * values as they were and the reason. Marking again freezes them anew.
 */
export async function clearReadOutcomes(
  tx: Tx,
  clear: { caseId: number; studyId: number; readerIds: readonly number[]; reason: string | null },
): Promise<AuditEvent[]> {
  const rows = await readOutcomeRows(tx, clear.caseId, clear.readerIds);
  if (rows.length === 0) return [];
  await tx
    .deleteFrom('read_outcomes')
    .where(
      'id',
      'in',
      rows.map((r) => r.id),
    )
    .execute();
  const byReader = new Map<number, ReadOutcomeRow[]>();
  for (const r of rows) byReader.set(r.reader_id, [...(byReader.get(r.reader_id) ?? []), r]);
  return [...byReader.values()].map((own) => ({
    action: 'READ_OUTCOMES_CLEARED',
    entityType: 'case',
    entityId: clear.caseId,
    studyId: clear.studyId,
    field: 'outcomes',
    oldValue: { reader: own[0]?.username ?? null, values: valuesByKey(own) },
    newValue: null,
    reason: clear.reason,
  }));
}

/** GET /api/cases/{id}/outcomes (issue 30). */
export class OutcomeService {
  constructor(private readonly db: Db) {}

  /**
   * The case's frozen values as `principal` may see them (onlyOutcomesOf): a reader their own and
   * no final values; the others every reader's, and the final value of each of the study's
   * endpoints once every assigned reader has marked the case — the readers' mean and common
   * reading (finalOutcome), null where a reader has no value for it.
   */
  async caseOutcomes(
    principal: Principal,
    caseId: number,
  ): Promise<{ outcomes: ReadOutcome[]; final: CaseFinalOutcome[] | null }> {
    const only = onlyOutcomesOf(principal);
    const rows = await readOutcomeRows(this.db, caseId, only === null ? null : [only]);
    const outcomes = rows.map(presentReadOutcome);
    if (only !== null) return { outcomes, final: null };
    const [reads, state] = await Promise.all([caseReads(this.db, caseId), caseOutcomeState(this.db, caseId)]);
    const endpoints = endpointsSchema.parse(state.endpoints);
    const final = caseFinalOutcomes(endpoints, state.status, reads, rows);
    return { outcomes, final };
  }

  /**
   * GET /api/studies/{id}/agreement (issue 30): each of the study's endpoints' agreement between
   * its primary readers over the study's cases (studyAgreement.ts). Only for the roles that see
   * every reader's values (the route's permission); never for a reader.
   */
  async studyAgreement(studyId: number): Promise<EndpointAgreement[]> {
    const endpoints = endpointsSchema.parse(await studyEndpointsJson(this.db, studyId));
    if (endpoints.length === 0) return [];
    const byEndpoint = new Map<string, PrimaryReading[]>();
    for (const r of await studyPrimaryReadings(this.db, studyId)) byEndpoint.set(r.endpoint_key, primaryReadingsOf(r));
    return endpoints.map((definition) => endpointAgreement(definition, byEndpoint.get(definition.key) ?? []));
  }

  /** GET /api/studies/{id}/outcomes (issue 30, the Reads tab): one page of the study's read cases. */
  async studyOutcomeCases(principal: Principal, studyId: number, query: Parameters<typeof studyOutcomeCases>[3]) {
    return studyOutcomeCases(this.db, principal, studyId, query);
  }

  /** GET /api/studies/{id}/outcomes/pairs: the primary readers' value pairs of one endpoint, for the charts. */
  async studyOutcomePairs(studyId: number, endpointKey: string) {
    return studyOutcomePairs(this.db, studyId, endpointKey);
  }
}
