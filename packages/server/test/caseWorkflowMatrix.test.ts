import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RoleName } from '@lamina/domain';
import { createTestApp, login, type Session, type TestContext } from './testApp.js';
import { createCase, createStudy, createStudyImage, createUser, PASSWORD } from './factories.js';

/**
 * Issue 13: every role × every case status for the forward call (Pass Lab QC, Pass ISC QC, Mark as
 * Scored) and the back call (Revert Status). The expectations are written out here from
 * docs/WORKFLOW.md and the role → permission table of docs/PERMISSIONS.md — not computed from the
 * domain rules the server uses — so a change of either that the other does not follow fails here.
 * Starting states are written to the database directly (the routes that reach them have their own
 * tests in cases.test.ts and qc.test.ts). Every refusal changes nothing and writes no audit row;
 * every success writes its audit row.
 */

type Actor = RoleName | 'sysadmin' | 'CR-unassigned';
const ACTORS: readonly Actor[] = [
  'sysadmin',
  'StudyAdmin',
  'ISC',
  'DM',
  'PM',
  'SPONSOR',
  'UPLOADER',
  'LabTech',
  'Site',
  'LIS',
  'CR',
  'NOTO',
  'CR-unassigned',
];

type Stage = 'PENDING_LAB_QC' | 'PENDING_QC' | 'PROCESSED' | 'COMPLETED' | 'ON_HOLD' | 'ARCHIVED';
const STAGES: readonly Stage[] = ['PENDING_LAB_QC', 'PENDING_QC', 'PROCESSED', 'COMPLETED', 'ON_HOLD', 'ARCHIVED'];

/** The status the case's images have at each case status (docs/WORKFLOW.md). */
const IMAGE_AT: Record<Stage, string> = {
  PENDING_LAB_QC: 'LAB_QC_PENDING',
  PENDING_QC: 'ISC_QC_PENDING',
  PROCESSED: 'READY_FOR_READING',
  COMPLETED: 'COMPLETE',
  ON_HOLD: 'ISC_QC_PENDING',
  ARCHIVED: 'ARCHIVED',
};
/** The history a case in each status has. */
const PREV: Record<Stage, string[]> = {
  PENDING_LAB_QC: [],
  PENDING_QC: ['PENDING_LAB_QC'],
  PROCESSED: ['PENDING_LAB_QC', 'PENDING_QC'],
  COMPLETED: ['PENDING_LAB_QC', 'PENDING_QC', 'PROCESSED'],
  ON_HOLD: ['PENDING_LAB_QC', 'PENDING_QC'],
  ARCHIVED: ['PENDING_LAB_QC'],
};

// From docs/PERMISSIONS.md.
const LAB_QC: readonly Actor[] = ['sysadmin', 'StudyAdmin', 'ISC', 'LabTech']; // AP_ImageViewer_ViewButtonPassLabQC
const ISC_QC: readonly Actor[] = ['sysadmin', 'StudyAdmin', 'ISC']; // AP_CaseViewer_ViewButtonPassISCQC
const SCORE: readonly Actor[] = ['CR', 'NOTO', 'CR-unassigned']; // AP_CaseViewer_MarkCaseasScored
const EDIT_CASE: readonly Actor[] = ['sysadmin', 'StudyAdmin', 'ISC', 'DM', 'LabTech']; // S_CaseListTab_EditCase
const CHANGE_STATUS: readonly Actor[] = ['sysadmin', 'StudyAdmin', 'ISC']; // IM_CaseListTab_ChangeStatus

/** What the forward call answers (docs/WORKFLOW.md, "Case status"). */
function forwardExpected(actor: Actor, from: Stage): { code: number; to?: string; audit?: string } {
  const holdsAny = [...LAB_QC, ...ISC_QC, ...SCORE].includes(actor);
  if (!holdsAny) return { code: 403 };
  // A blinded reader not assigned to the case does not see it.
  if (actor === 'CR-unassigned') return { code: 404 };
  const forwarded = 'CASE_STATUS_FORWARDED';
  if (from === 'PENDING_LAB_QC')
    return LAB_QC.includes(actor) ? { code: 200, to: 'PENDING_QC', audit: forwarded } : { code: 403 };
  if (from === 'PENDING_QC')
    return ISC_QC.includes(actor) ? { code: 200, to: 'PROCESSED', audit: forwarded } : { code: 403 };
  // Both CR and NOTO are assigned: one reader's mark records the read, the case waits for the other.
  if (from === 'PROCESSED')
    return SCORE.includes(actor) ? { code: 200, to: 'PROCESSED', audit: 'CASE_READ_MARKED' } : { code: 403 };
  return { code: 409 };
}

/**
 * What the back call answers for `to` (docs/WORKFLOW.md): one of the case's earlier workflow
 * statuses; with IM_CaseListTab_ChangeStatus any stage (Image Management's revert "may choose any
 * status except Invalid", doc 2 §2.2) — never the current one, On Hold, Invalid or Archived.
 */
function backExpected(actor: Actor, from: Stage, prev: readonly string[], to: string): { code: number } {
  if (![...EDIT_CASE, ...CHANGE_STATUS].includes(actor)) return { code: 403 };
  const stages = ['PENDING_LAB_QC', 'PENDING_QC', 'PROCESSED', 'COMPLETED'];
  if (!stages.includes(to) || to === from) return { code: 409 };
  return { code: CHANGE_STATUS.includes(actor) || prev.includes(to) ? 200 : 409 };
}

let t: TestContext;
let studyId: number;
const sessions = new Map<Actor, { session: Session; id: number }>();
const db = () => t.database.db;

async function fresh(from: Stage, prev = PREV[from]): Promise<{ caseId: number; images: number[] }> {
  const { id } = await createCase(db(), { studyId, status: from });
  await db()
    .updateTable('cases')
    .set({
      prev_workflow_statuses: prev,
      on_hold_from: from === 'ON_HOLD' ? 'PENDING_QC' : null,
      archived_at: from === 'ARCHIVED' ? new Date() : null,
    })
    .where('id', '=', id)
    .execute();
  const images = [(await createStudyImage(db(), { studyId, caseId: id, status: IMAGE_AT[from] })).id];
  for (const reader of ['CR', 'NOTO'] as const) {
    const user = sessions.get(reader);
    if (user) await db().insertInto('case_readers').values({ case_id: id, user_id: user.id }).execute();
  }
  return { caseId: id, images };
}

async function snapshot(caseId: number) {
  const row = await db()
    .selectFrom('cases')
    .select(['status', 'prev_workflow_statuses', 'on_hold_from'])
    .where('id', '=', caseId)
    .executeTakeFirstOrThrow();
  const images = await db().selectFrom('images').select(['id', 'status']).where('case_id', '=', caseId).execute();
  const audit = await db()
    .selectFrom('audit_events')
    .select(['action', 'old_value', 'new_value'])
    .where('entity_type', '=', 'case')
    .where('entity_id', '=', String(caseId))
    .orderBy('id')
    .execute();
  return { row, images, audit };
}

beforeAll(async () => {
  t = await createTestApp();
  studyId = (await createStudy(db(), 'Workflow matrix study')).id;
  for (const actor of ACTORS) {
    const user =
      actor === 'sysadmin'
        ? await createUser(db(), { systemAdmin: true, globalRoles: ['SystemAdmin'] })
        : actor === 'StudyAdmin'
          ? await createUser(db(), { globalRoles: ['StudyAdmin'] })
          : await createUser(db(), { studyRoles: [{ studyId, role: actor === 'CR-unassigned' ? 'CR' : actor }] });
    sessions.set(actor, { session: await login(t.app, user.username, PASSWORD), id: user.id });
  }
});

afterAll(async () => {
  await t.close();
});

describe('forward (Pass Lab QC, Pass ISC QC, Mark as Scored): every role × every status', () => {
  it.each(STAGES)('from %s', async (from) => {
    const problems: string[] = [];
    for (const actor of ACTORS) {
      const expected = forwardExpected(actor, from);
      const { caseId } = await fresh(from);
      const before = await snapshot(caseId);
      const { session } = sessions.get(actor) ?? { session: undefined };
      const response = await session!.request({ method: 'PATCH', url: `/api/cases/${caseId}/status/forward` });
      const after = await snapshot(caseId);
      if (response.statusCode !== expected.code) {
        problems.push(`${actor}: ${response.statusCode} (expected ${expected.code}) ${response.body}`);
        continue;
      }
      if (expected.to) {
        if (after.row.status !== expected.to) problems.push(`${actor}: status ${after.row.status}, not ${expected.to}`);
        if (!after.audit.some((e) => e.action === expected.audit))
          problems.push(`${actor}: no ${expected.audit} audit row`);
        if (expected.to !== from && !after.row.prev_workflow_statuses.includes(from))
          problems.push(`${actor}: ${from} not in the history`);
      } else {
        if (JSON.stringify(after) !== JSON.stringify(before)) problems.push(`${actor}: a refusal changed something`);
        if (!response.json<{ message?: string }>().message) problems.push(`${actor}: a refusal without a message`);
      }
    }
    expect(problems).toEqual([]);
  });
});

describe('back (Revert Status): every role × status × target', () => {
  const TARGETS = ['PENDING_LAB_QC', 'PENDING_QC', 'PROCESSED', 'COMPLETED', 'ON_HOLD', 'ARCHIVED', 'INVALID'];
  const CASES: { from: Stage; prev?: string[] }[] = [
    { from: 'PENDING_LAB_QC' },
    { from: 'PENDING_QC' },
    { from: 'PROCESSED' },
    // Never was in Pending Lab QC (e.g. reverted there and forwarded again): only ChangeStatus may go there.
    { from: 'PROCESSED', prev: ['PENDING_QC'] },
    { from: 'COMPLETED' },
  ];

  it.each(CASES)('from $from (history $prev)', async ({ from, prev }) => {
    const history = prev ?? PREV[from];
    const problems: string[] = [];
    for (const actor of ACTORS) {
      for (const to of TARGETS) {
        const expected = backExpected(actor, from, history, to);
        const { caseId, images } = await fresh(from, history);
        const before = await snapshot(caseId);
        const { session } = sessions.get(actor) ?? { session: undefined };
        const response = await session!.request({
          method: 'PATCH',
          url: `/api/cases/${caseId}/status/back`,
          payload: { value: to, reason: 'Matrix test' },
        });
        const after = await snapshot(caseId);
        if (response.statusCode !== expected.code) {
          problems.push(`${actor} → ${to}: ${response.statusCode} (expected ${expected.code}) ${response.body}`);
          continue;
        }
        if (expected.code === 200) {
          if (after.row.status !== to) problems.push(`${actor} → ${to}: status ${after.row.status}`);
          const event = after.audit.find((e) => e.action === 'CASE_STATUS_REVERTED');
          if (!event) problems.push(`${actor} → ${to}: no CASE_STATUS_REVERTED audit row`);
          const image = await db()
            .selectFrom('images')
            .select('status')
            .where('id', '=', images[0]!)
            .executeTakeFirstOrThrow();
          const atStage: Record<string, string> = {
            PENDING_LAB_QC: 'LAB_QC_PENDING',
            PENDING_QC: 'ISC_QC_PENDING',
            PROCESSED: 'READY_FOR_READING',
            COMPLETED: 'COMPLETE',
          };
          if (image.status !== atStage[to]) problems.push(`${actor} → ${to}: image ${image.status}`);
        } else if (JSON.stringify(after) !== JSON.stringify(before)) {
          problems.push(`${actor} → ${to}: a refusal changed something`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('a held or archived case is not reverted, by anyone', async () => {
    const problems: string[] = [];
    for (const from of ['ON_HOLD', 'ARCHIVED'] as const) {
      for (const actor of ACTORS) {
        const { caseId } = await fresh(from);
        const before = await snapshot(caseId);
        const response = await sessions.get(actor)!.session.request({
          method: 'PATCH',
          url: `/api/cases/${caseId}/status/back`,
          payload: { value: 'PENDING_LAB_QC', reason: 'Matrix test' },
        });
        const expected = [...EDIT_CASE, ...CHANGE_STATUS].includes(actor) ? 409 : 403;
        if (response.statusCode !== expected)
          problems.push(`${from} ${actor}: ${response.statusCode} (expected ${expected})`);
        if (JSON.stringify(await snapshot(caseId)) !== JSON.stringify(before))
          problems.push(`${from} ${actor}: changed`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('a revert without a reason or a status is refused with 400 and changes nothing', async () => {
    const isc = sessions.get('ISC')!.session;
    for (const payload of [
      { value: 'PENDING_LAB_QC' },
      { reason: 'No status' },
      { value: 'PENDING_LAB_QC', reason: '  ' },
    ]) {
      const { caseId } = await fresh('PENDING_QC');
      const before = await snapshot(caseId);
      const response = await isc.request({ method: 'PATCH', url: `/api/cases/${caseId}/status/back`, payload });
      expect(response.statusCode, JSON.stringify(payload)).toBe(400);
      expect(response.json().message).toMatch(
        /^Unable to set status of case back to .*\. Must set new status and include reason for change\.$/,
      );
      expect(await snapshot(caseId)).toEqual(before);
    }
  });
});
