import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RoleName } from '@lamina/domain';
import { createTestApp, login, type Session, type TestContext } from './testApp.js';
import { createCase, createStudy, createStudyImage, createUser, PASSWORD } from './factories.js';

/**
 * Issue 13: every role × every case status for the forward call (Pass Lab QC, Pass ISC QC, Mark as
 * Scored) and the back call (Revert Status), and every role × image status × case status for an
 * image's pass QC. The expectations — status codes and the exact messages — are written out here
 * from docs/WORKFLOW.md, the spec's error catalogue (doc 2 §8, doc 3 §8) and the role → permission
 * table of docs/PERMISSIONS.md, not computed from the domain rules or messages the server uses, so a
 * change of either that the other does not follow fails here. Starting states are written to the
 * database directly (the routes that reach them have their own tests in cases.test.ts and
 * qc.test.ts). Every refusal answers its message, changes nothing and writes no audit row; every
 * success writes its audit rows.
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

// The messages: the spec's (doc 2 §8, doc 3 §8), then Lamina's reason.
/** The guard's answer to a role holding none of a route's permissions (every route alike). */
const DENIED = 'You do not have permission to do this';
const CASE_NOT_FOUND = 'Case not found';
const CASE_FAILURE = 'Unable to transition case status.';
const IMAGE_FAILURE = 'Unable to transition image status.';
const NOT_LAB_QC = 'You do not have permission to pass lab QC';
const NOT_ISC_QC = 'You do not have permission to pass ISC QC';
const NOT_SCORE = 'You do not have permission to mark cases as scored';
const QC_NOT_NOW = 'The image is not waiting for this quality check in its case’s status';
const LABEL: Record<string, string> = {
  PENDING_LAB_QC: 'Pending Lab QC',
  PENDING_QC: 'Pending QC',
  PROCESSED: 'Processed',
  COMPLETED: 'Completed',
  ON_HOLD: 'On Hold',
  INVALID: 'Invalid',
  ARCHIVED: 'Archived',
};
const revertRefused = (to: string) =>
  `${CASE_FAILURE} Unable to set status of case back to ${LABEL[to]}. Must set new status and include reason for change.`;

interface Expected {
  code: number;
  /** A refusal's exact message. */
  message?: string;
  to?: string;
  audit?: string;
}

/** What the forward call answers (docs/WORKFLOW.md, "Case status"). */
function forwardExpected(actor: Actor, from: Stage): Expected {
  const holdsAny = [...LAB_QC, ...ISC_QC, ...SCORE].includes(actor);
  if (!holdsAny) return { code: 403, message: DENIED };
  // A blinded reader not assigned to the case does not see it.
  if (actor === 'CR-unassigned') return { code: 404, message: CASE_NOT_FOUND };
  const forwarded = 'CASE_STATUS_FORWARDED';
  if (from === 'PENDING_LAB_QC')
    return LAB_QC.includes(actor)
      ? { code: 200, to: 'PENDING_QC', audit: forwarded }
      : { code: 403, message: `${CASE_FAILURE} ${NOT_LAB_QC}` };
  if (from === 'PENDING_QC')
    return ISC_QC.includes(actor)
      ? { code: 200, to: 'PROCESSED', audit: forwarded }
      : { code: 403, message: `${CASE_FAILURE} ${NOT_ISC_QC}` };
  // Both CR and NOTO are assigned: one reader's mark records the read, the case waits for the other.
  if (from === 'PROCESSED')
    return SCORE.includes(actor)
      ? { code: 200, to: 'PROCESSED', audit: 'CASE_READ_MARKED' }
      : { code: 403, message: `${CASE_FAILURE} ${NOT_SCORE}` };
  return { code: 409, message: CASE_FAILURE };
}

/**
 * What the back call answers for `to` (docs/WORKFLOW.md): one of the case's earlier workflow
 * statuses; with IM_CaseListTab_ChangeStatus any stage (Image Management's revert "may choose any
 * status except Invalid", doc 2 §2.2) — never the current one, On Hold, Invalid or Archived.
 */
function backExpected(actor: Actor, from: Stage, prev: readonly string[], to: string): Expected {
  if (![...EDIT_CASE, ...CHANGE_STATUS].includes(actor)) return { code: 403, message: DENIED };
  const stages = ['PENDING_LAB_QC', 'PENDING_QC', 'PROCESSED', 'COMPLETED'];
  const refused = { code: 409, message: revertRefused(to) };
  if (!stages.includes(to) || to === from) return refused;
  return CHANGE_STATUS.includes(actor) || prev.includes(to) ? { code: 200 } : refused;
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
        const message = response.json<{ message?: string }>().message;
        if (message !== expected.message) problems.push(`${actor}: '${message}', not '${expected.message}'`);
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
        } else {
          if (JSON.stringify(after) !== JSON.stringify(before))
            problems.push(`${actor} → ${to}: a refusal changed something`);
          const message = response.json<{ message?: string }>().message;
          if (message !== expected.message) problems.push(`${actor} → ${to}: '${message}', not '${expected.message}'`);
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
        const [expected, message] = [...EDIT_CASE, ...CHANGE_STATUS].includes(actor)
          ? [409, revertRefused('PENDING_LAB_QC')]
          : [403, DENIED];
        if (response.statusCode !== expected)
          problems.push(`${from} ${actor}: ${response.statusCode} (expected ${expected})`);
        if (response.json<{ message?: string }>().message !== message)
          problems.push(`${from} ${actor}: '${response.json<{ message?: string }>().message}', not '${message}'`);
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

describe('pass QC of an image: every role × image status × case status the image can be in', () => {
  /**
   * Where a Lab QC Pending or ISC QC Pending image can be (docs/WORKFLOW.md): its case's stage, a
   * held case (which remembers the stage it left), or — an image that passed lab QC on its own —
   * a case still in Pending Lab QC. The second image of the case is either still behind or has
   * passed already (then this pass is the last, and the case follows).
   */
  interface QcCase {
    image: 'LAB_QC_PENDING' | 'ISC_QC_PENDING';
    caseStatus: 'PENDING_LAB_QC' | 'PENDING_QC' | 'ON_HOLD';
    onHoldFrom?: 'PENDING_LAB_QC' | 'PENDING_QC';
    sibling: string;
  }
  const QC_CASES: readonly QcCase[] = [
    { image: 'LAB_QC_PENDING', caseStatus: 'PENDING_LAB_QC', sibling: 'LAB_QC_PENDING' },
    { image: 'LAB_QC_PENDING', caseStatus: 'PENDING_LAB_QC', sibling: 'ISC_QC_PENDING' },
    { image: 'LAB_QC_PENDING', caseStatus: 'ON_HOLD', onHoldFrom: 'PENDING_LAB_QC', sibling: 'LAB_QC_PENDING' },
    { image: 'ISC_QC_PENDING', caseStatus: 'PENDING_LAB_QC', sibling: 'LAB_QC_PENDING' },
    { image: 'ISC_QC_PENDING', caseStatus: 'PENDING_QC', sibling: 'ISC_QC_PENDING' },
    { image: 'ISC_QC_PENDING', caseStatus: 'PENDING_QC', sibling: 'READY_FOR_READING' },
    { image: 'ISC_QC_PENDING', caseStatus: 'ON_HOLD', onHoldFrom: 'PENDING_QC', sibling: 'ISC_QC_PENDING' },
    { image: 'ISC_QC_PENDING', caseStatus: 'ON_HOLD', onHoldFrom: 'PENDING_LAB_QC', sibling: 'LAB_QC_PENDING' },
  ];

  interface QcExpected {
    code: number;
    message: string;
    image?: string;
    caseStatus?: string;
    /** The case column that records the user when the case follows. */
    records?: 'qc1_by' | 'qc2_by';
    /** The audit rows an allowed pass writes: action, entity type, which entity. */
    audit?: string[];
  }

  /**
   * docs/WORKFLOW.md, PATCH /api/images/{id}/pass-qc: the route admits either QC permission (403
   * from the guard otherwise); Lab QC only while the case is Pending Lab QC, ISC QC only while it is
   * Pending QC (409 otherwise, whoever asks); then the step's own permission (403); when every live
   * image of the case has passed, the case takes its forward step as that user's QC.
   */
  function passQcExpected(actor: Actor, c: QcCase): QcExpected {
    if (![...LAB_QC, ...ISC_QC].includes(actor)) return { code: 403, message: DENIED };
    const lab = c.image === 'LAB_QC_PENDING';
    if (c.caseStatus !== (lab ? 'PENDING_LAB_QC' : 'PENDING_QC'))
      return { code: 409, message: `${IMAGE_FAILURE} ${QC_NOT_NOW}` };
    if (!(lab ? LAB_QC : ISC_QC).includes(actor))
      return { code: 403, message: `${IMAGE_FAILURE} ${lab ? NOT_LAB_QC : NOT_ISC_QC}` };
    const passed = lab ? 'ISC_QC_PENDING' : 'READY_FOR_READING';
    const message = 'The image passed quality check';
    if (c.sibling !== passed)
      return { code: 200, message, image: passed, caseStatus: c.caseStatus, audit: ['IMAGE_QC_PASSED image target'] };
    return {
      code: 200,
      message,
      image: passed,
      caseStatus: lab ? 'PENDING_QC' : 'PROCESSED',
      records: lab ? 'qc1_by' : 'qc2_by',
      audit: ['IMAGE_QC_PASSED image target', 'CASE_STATUS_FORWARDED case case'],
    };
  }

  async function freshQc(c: QcCase): Promise<{ caseId: number; target: number; sibling: number }> {
    const { id } = await createCase(db(), { studyId, status: c.caseStatus });
    const prev: Record<string, string[]> = { PENDING_LAB_QC: [], PENDING_QC: ['PENDING_LAB_QC'] };
    await db()
      .updateTable('cases')
      .set({
        prev_workflow_statuses: c.onHoldFrom ? [...prev[c.onHoldFrom]!, c.onHoldFrom] : prev[c.caseStatus]!,
        on_hold_from: c.onHoldFrom ?? null,
      })
      .where('id', '=', id)
      .execute();
    const target = (await createStudyImage(db(), { studyId, caseId: id, status: c.image })).id;
    const sibling = (await createStudyImage(db(), { studyId, caseId: id, status: c.sibling })).id;
    return { caseId: id, target, sibling };
  }

  /** The case row, its images' rows, and the whole audit table (this file's own database). */
  async function rows(caseId: number) {
    const row = await db().selectFrom('cases').selectAll().where('id', '=', caseId).executeTakeFirstOrThrow();
    const images = await db().selectFrom('images').selectAll().where('case_id', '=', caseId).orderBy('id').execute();
    const audit = await db()
      .selectFrom('audit_events')
      .select(['id', 'action', 'entity_type', 'entity_id', 'user_id'])
      .orderBy('id')
      .execute();
    return { row, images, audit };
  }

  it.each(QC_CASES)('$image in a $caseStatus case (held from $onHoldFrom), other image $sibling', async (c) => {
    const problems: string[] = [];
    for (const actor of ACTORS) {
      const expected = passQcExpected(actor, c);
      const { caseId, target, sibling } = await freshQc(c);
      const before = await rows(caseId);
      const { session, id: userId } = sessions.get(actor)!;
      const response = await session.request({ method: 'PATCH', url: `/api/images/${target}/pass-qc` });
      const after = await rows(caseId);
      const message = response.json<{ message?: string }>().message;
      if (response.statusCode !== expected.code) {
        problems.push(`${actor}: ${response.statusCode} (expected ${expected.code}) ${response.body}`);
        continue;
      }
      if (message !== expected.message) problems.push(`${actor}: '${message}', not '${expected.message}'`);
      if (expected.code !== 200) {
        if (JSON.stringify(after) !== JSON.stringify(before)) problems.push(`${actor}: a refusal changed something`);
        continue;
      }
      const status = (id: number) => after.images.find((i) => i.id === id)?.status;
      if (status(target) !== expected.image) problems.push(`${actor}: image ${status(target)}, not ${expected.image}`);
      if (status(sibling) !== c.sibling) problems.push(`${actor}: the other image became ${status(sibling)}`);
      if (after.row.status !== expected.caseStatus)
        problems.push(`${actor}: case ${after.row.status}, not ${expected.caseStatus}`);
      if (expected.records) {
        if (after.row[expected.records] !== userId) problems.push(`${actor}: ${expected.records} not recorded`);
        if (!after.row.prev_workflow_statuses.includes(c.caseStatus))
          problems.push(`${actor}: ${c.caseStatus} not in the history`);
      } else if (JSON.stringify(after.row) !== JSON.stringify(before.row)) {
        problems.push(`${actor}: the case changed though another image is behind`);
      }
      const known: Record<string, string> = { [`image ${target}`]: 'image target', [`case ${caseId}`]: 'case case' };
      const written = after.audit.slice(before.audit.length).map((e) => {
        const entity = `${e.entity_type} ${e.entity_id}`;
        return `${e.action} ${known[entity] ?? entity}`;
      });
      if (JSON.stringify(written) !== JSON.stringify(expected.audit))
        problems.push(`${actor}: audit ${JSON.stringify(written)}, not ${JSON.stringify(expected.audit)}`);
      if (after.audit.slice(before.audit.length).some((e) => e.user_id !== userId))
        problems.push(`${actor}: an audit row not by the user`);
    }
    expect(problems).toEqual([]);
  });
});
