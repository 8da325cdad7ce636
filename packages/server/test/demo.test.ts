import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CASE_WORKFLOW_STAGES,
  IMAGE_STATUS_AT_STAGE,
  adjudicationSchema,
  caseStage,
  computeEndpoint,
  endpointInputOf,
  endpointsSchema,
  hpfRadiusPx,
  type AnnotationType,
  type CaseStatus,
  type StudyAgreementResponse,
  type StudyOutcomeListResponse,
} from '@lamina/domain';
import {
  DEMO_OUTCOMES_STUDY,
  DEMO_READING_STUDIES,
  DEMO_STUDY_NAME,
  seedDemoData,
} from '../src/modules/demo/demoSeed.js';
import { DEMO_SLIDE_NAME, demoTissueBlobs } from '../src/modules/demo/demoSlide.js';
import { DEMO_CASES, ensureDemoCases } from '../src/modules/demo/demoCases.js';
import { DEMO_OUTCOME_CASES, hpfCounts } from '../src/modules/demo/demoReads.js';
import { verifyAuditChain } from '../src/platform/audit/verify.js';
import { createTestApp, login, type TestContext } from './testApp.js';

const PASSWORD = 'demo password 1';

/** The demo study is a living one after `npm start` (issue 11): a case in each status, with slides. */
let t: TestContext;
let studyId: number;

beforeAll(async () => {
  t = await createTestApp();
  const db = t.database.db;
  expect(await seedDemoData(db, PASSWORD)).toBe(true);
  studyId = (await db.selectFrom('studies').select('id').where('name', '=', DEMO_STUDY_NAME).executeTakeFirstOrThrow())
    .id;
  // The generated demo slide, as the worker leaves it once processed.
  await db
    .insertInto('images')
    .values({
      study_id: studyId,
      name: DEMO_SLIDE_NAME,
      s3_key: `uploads/${studyId}/demo/${DEMO_SLIDE_NAME}`,
      cog_key: 'images/1/pyramid.tif',
      status: 'PROCESSING',
      processing_status: 'PENDING',
      width: 8000,
      height: 6000,
      mpp: 0.5,
    })
    .execute();
});

afterAll(async () => {
  await t.close();
});

/** The usernames of the users with access to a study. */
async function usernamesWithAccess(studyId: number): Promise<string[]> {
  const rows = await t.database.db
    .selectFrom('study_access')
    .innerJoin('users', 'users.id', 'study_access.user_id')
    .select('users.username')
    .where('study_id', '=', studyId)
    .execute();
  return rows.map((row) => row.username);
}

describe('demo cases', () => {
  it('waits for the demo slide to be processed', async () => {
    expect(await ensureDemoCases(t.database.db, { timeoutMs: 50, pollMs: 10 })).toBe(0);
    expect(await t.database.db.selectFrom('cases').select('id').execute()).toEqual([]);
  });

  it('then creates a case in each working status, with slides at the matching status, assigned to the readers', async () => {
    const db = t.database.db;
    await db
      .updateTable('images')
      .set({ processing_status: 'SUCCESS', status: 'CASE_ASSIGNMENT_PENDING' })
      .where('name', '=', DEMO_SLIDE_NAME)
      .execute();
    expect(await ensureDemoCases(db, { pollMs: 10 })).toBe(
      DEMO_CASES.length + DEMO_READING_STUDIES.length + DEMO_OUTCOME_CASES.length,
    );
    const cases = await db
      .selectFrom('cases')
      .select(['id', 'status', 'on_hold_from', 'proc_id'])
      .where('study_id', '=', studyId)
      .execute();
    const statuses = new Set(cases.map((c) => c.status));
    for (const status of [...CASE_WORKFLOW_STAGES, 'ON_HOLD']) expect(statuses).toContain(status);
    for (const c of cases) {
      const images = await db.selectFrom('images').select(['status', 'cog_key']).where('case_id', '=', c.id).execute();
      expect(images.length, c.proc_id ?? '').toBeGreaterThan(0);
      const stage = caseStage(c.status as CaseStatus, c.on_hold_from as CaseStatus | null);
      for (const image of images) {
        expect(image.status).toBe(stage ? IMAGE_STATUS_AT_STAGE[stage] : null);
        expect(image.cog_key).toBe('images/1/pyramid.tif');
      }
    }
    const readers = await db
      .selectFrom('case_readers')
      .innerJoin('users', 'users.id', 'case_readers.user_id')
      .select(['users.username', 'case_readers.role'])
      .execute();
    expect(new Set(readers.filter((r) => r.role === 'PRIMARY').map((r) => r.username))).toEqual(
      new Set(['reader1', 'reader2']),
    );
    // The third reader only adjudicates (the read-outcomes study's case ENDO-4008).
    expect(readers.filter((r) => r.role === 'ADJUDICATOR').map((r) => r.username)).toEqual(['reader3']);
    const waiting = await db
      .selectFrom('images')
      .select('id')
      .where('study_id', '=', studyId)
      .where('case_id', 'is', null)
      .where('status', '=', 'CASE_ASSIGNMENT_PENDING')
      .execute();
    expect(waiting.length).toBeGreaterThanOrEqual(2);
    expect((await verifyAuditChain(db)).ok).toBe(true);
  });

  it('adds a celiac and a NASH study, each with a case ready for reading by both readers (issue 14)', async () => {
    const db = t.database.db;
    for (const demo of DEMO_READING_STUDIES) {
      const study = await db
        .selectFrom('studies')
        .select(['id', 'indications', 'anatomical_segments'])
        .where('name', '=', demo.name)
        .executeTakeFirstOrThrow();
      expect(study.indications).toEqual([demo.indication]);
      const c = await db
        .selectFrom('cases')
        .select(['id', 'status'])
        .where('study_id', '=', study.id)
        .executeTakeFirstOrThrow();
      expect(c.status).toBe('PROCESSED');
      const images = await db
        .selectFrom('images')
        .select(['status', 'study_id', 'biopsy_location'])
        .where('case_id', '=', c.id)
        .execute();
      expect(images.map(({ status, study_id }) => ({ status, study_id }))).toEqual([
        { status: 'READY_FOR_READING', study_id: study.id },
      ]);
      // Issue 29 item 18: the study has its organ's segments and its slide one of them.
      expect(study.anatomical_segments).toEqual([demo.indication === 'NASH' ? 'Liver' : 'Duodenum']);
      expect(images.map((i) => i.biopsy_location)).toEqual(study.anatomical_segments);
      const readers = await db
        .selectFrom('case_readers')
        .innerJoin('users', 'users.id', 'case_readers.user_id')
        .select('users.username')
        .where('case_id', '=', c.id)
        .execute();
      expect(readers.map((r) => r.username).sort()).toEqual(['reader1', 'reader2']);
      const access = await usernamesWithAccess(study.id);
      expect(access).toEqual(expect.arrayContaining(['reader1', 'reader2', 'isc', 'dm']));
    }
    const celiac = await db
      .selectFrom('annotation_classes')
      .innerJoin('studies', 'studies.id', 'annotation_classes.study_id')
      .select(['annotation_classes.name', 'annotation_classes.type'])
      .where('studies.name', '=', DEMO_READING_STUDIES[0]?.name ?? '')
      .where('annotation_classes.type', '=', 'MULTILINE')
      .execute();
    expect(celiac.map((c) => c.name)).toEqual(['Unit 1', 'Unit 2', 'Unit 3', 'Unit 4', 'Unit 5']);
    // Issue 30: the NASH study signs its reads and QC passes; the others do not.
    const signing = await db.selectFrom('studies').select(['name', 'signatures']).orderBy('id').execute();
    expect(signing.filter((s) => s.signatures).map((s) => s.name)).toEqual(['DEMO-NASH-003 NASH Liver Biopsy']);
  });

  describe('the read-outcomes study (issue 30)', () => {
    const expectedStatus = (c: (typeof DEMO_OUTCOME_CASES)[number]): CaseStatus =>
      c.reads.some((r) => !r.scored)
        ? 'PROCESSED'
        : c.adjudicator
          ? 'COMPLETED'
          : c.reads.every((r) => r.pec >= 15) || c.reads.every((r) => r.pec < 15)
            ? 'COMPLETED'
            : 'PENDING_ADJUDICATION';

    it('has its EoE endpoint, adjudication rule and classes, and the readers and the ISC in it', async () => {
      const db = t.database.db;
      const study = await db
        .selectFrom('studies')
        .select(['id', 'indications', 'endpoints', 'adjudication', 'signatures', 'anatomical_segments'])
        .where('name', '=', 'DEMO-EOE-004 Eosinophilic Esophagitis')
        .executeTakeFirstOrThrow();
      expect(study.indications).toEqual(['EOSINOPHILIC_ESOPHAGITIS']);
      expect(endpointsSchema.parse(study.endpoints)).toEqual([
        {
          key: 'pec',
          label: 'Peak eosinophil count (eos/HPF)',
          kind: 'PEAK_COUNT_PER_HPF',
          className: 'Eosinophil',
          threshold: 15,
          positiveWhen: 'GTE',
        },
      ]);
      expect(adjudicationSchema.parse(study.adjudication)).toEqual({ endpointKey: 'pec', rule: 'CATEGORY_DISAGREES' });
      expect(study.signatures).toBe(false);
      const classes = await db
        .selectFrom('annotation_classes')
        .select(['type', 'name'])
        .where('study_id', '=', study.id)
        .orderBy('type')
        .execute();
      expect(classes).toEqual([
        { type: 'HPF', name: 'Eosinophils' },
        { type: 'POINT', name: 'Eosinophil' },
      ]);
      const access = await usernamesWithAccess(study.id);
      expect(access).toEqual(expect.arrayContaining(['reader1', 'reader2', 'reader3', 'isc']));
      // The adjudicator logs in with the demo password like every demo account.
      await login(t.app, 'reader3', PASSWORD);
    });

    it('reads its cases as the readers did: agreeing reads completed, one adjudicated, one pending, one half read', async () => {
      const db = t.database.db;
      const study = await db
        .selectFrom('studies')
        .select('id')
        .where('name', '=', DEMO_OUTCOMES_STUDY.name)
        .executeTakeFirstOrThrow();
      const users = new Map(
        (await db.selectFrom('users').select(['id', 'username']).execute()).map((u) => [u.username, u.id]),
      );
      const blobs = demoTissueBlobs(8000, 6000);
      const onTissue = ([x, y]: number[]) =>
        blobs.some((b) => {
          const a = (b.angle * Math.PI) / 180;
          const u = ((x ?? 0) - b.cx) * Math.cos(a) + ((y ?? 0) - b.cy) * Math.sin(a);
          const v = -((x ?? 0) - b.cx) * Math.sin(a) + ((y ?? 0) - b.cy) * Math.cos(a);
          return (u / b.rx) ** 2 + (v / b.ry) ** 2 <= 1;
        });
      const eosinophil = await db
        .selectFrom('annotation_classes')
        .select(['id', 'name'])
        .where('study_id', '=', study.id)
        .where('type', '=', 'POINT')
        .executeTakeFirstOrThrow();
      const statuses = new Map<string, string>();
      for (const plan of DEMO_OUTCOME_CASES) {
        const c = await db
          .selectFrom('cases')
          .select(['id', 'status'])
          .where('study_id', '=', study.id)
          .where('proc_id', '=', plan.procId)
          .executeTakeFirstOrThrow();
        statuses.set(plan.procId, c.status);
        expect(c.status, plan.procId).toBe(expectedStatus(plan));
        const assigned = await db
          .selectFrom('case_readers')
          .select(['user_id', 'role', 'read_at'])
          .where('case_id', '=', c.id)
          .orderBy('user_id')
          .execute();
        const work = [
          ...plan.reads.map((r) => ({ ...r, role: 'PRIMARY' })),
          ...(plan.adjudicator ? [{ ...plan.adjudicator, scored: true, role: 'ADJUDICATOR' }] : []),
        ];
        expect(
          assigned.map((r) => ({ userId: r.user_id, role: r.role, read: r.read_at !== null })),
          plan.procId,
        ).toEqual(work.map((w) => ({ userId: users.get(w.reader), role: w.role, read: w.scored })));
        // Each frozen value is what that reader's annotations on the slide give, and what the plan says.
        const frozen = await db
          .selectFrom('read_outcomes')
          .select(['reader_id', 'endpoint_key', 'value', 'positive', 'reader_role'])
          .where('case_id', '=', c.id)
          .orderBy('reader_id')
          .execute();
        const scored = work.filter((w) => w.scored);
        expect(frozen, plan.procId).toEqual(
          scored.map((w) => ({
            reader_id: users.get(w.reader),
            endpoint_key: 'pec',
            value: w.pec,
            positive: w.pec >= 15,
            reader_role: w.role,
          })),
        );
        const rows = await db
          .selectFrom('annotations')
          .innerJoin('images', 'images.id', 'annotations.image_id')
          .select([
            'annotations.id',
            'annotations.annotation_type',
            'annotations.user_id',
            'annotations.annotation_class_id',
            'annotations.parent_id',
            'annotations.x',
            'annotations.y',
            'annotations.radius',
          ])
          .where('images.case_id', '=', c.id)
          .where('annotations.deleted_at', 'is', null)
          .execute();
        for (const w of work) {
          const readerId = users.get(w.reader) ?? 0;
          const mine = rows.filter((r) => r.user_id === readerId);
          const input = endpointInputOf(
            mine.map((r) => ({
              id: r.id,
              annotationType: r.annotation_type as AnnotationType,
              userId: r.user_id,
              annotationClassId: r.annotation_class_id,
              parentId: r.parent_id,
              multilineCategory: null,
              length: null,
            })),
            readerId,
            new Map([[eosinophil.id, eosinophil.name]]),
          );
          const [definition] = endpointsSchema.parse(DEMO_OUTCOMES_STUDY.outcomes.endpoints);
          expect(computeEndpoint(definition!, input).value, `${plan.procId} ${w.reader}`).toBe(w.pec);
          const hpfs = mine.filter((r) => r.annotation_type === 'HPF');
          expect(hpfs).toHaveLength(hpfCounts(w.pec, w.scored).length);
          for (const h of hpfs) {
            // The server's HPF of a 0.5 µm/px slide, centred on tissue.
            expect(h.radius).toBeCloseTo(hpfRadiusPx(0.5, false), 6);
            expect(onTissue([h.x ?? 0, h.y ?? 0]), `${plan.procId} ${w.reader} HPF ${h.id}`).toBe(true);
          }
          // Every eosinophil sits in one of the reader's own HPFs, within its radius.
          for (const p of mine.filter((r) => r.annotation_type === 'POINT')) {
            const hpf = hpfs.find((h) => h.id === p.parent_id);
            expect(hpf, `${plan.procId} point ${p.id}`).toBeDefined();
            expect(Math.hypot((p.x ?? 0) - (hpf?.x ?? 0), (p.y ?? 0) - (hpf?.y ?? 0))).toBeLessThan(hpf?.radius ?? 0);
          }
        }
      }
      const counted = [...statuses.values()];
      expect(counted.filter((s) => s === 'COMPLETED')).toHaveLength(8);
      expect(counted.filter((s) => s === 'PENDING_ADJUDICATION')).toHaveLength(1);
      expect(counted.filter((s) => s === 'PROCESSED')).toHaveLength(1);
      // The reads went through Mark as Scored as their readers: one audited read per read marked.
      const marks = await db
        .selectFrom('audit_events')
        .select(['username', 'action'])
        .where('study_id', '=', study.id)
        .where('action', 'in', ['CASE_READ_MARKED', 'READ_OUTCOMES_FROZEN', 'CASE_ADJUDICATOR_CHANGED'])
        .execute();
      const count = (action: string, username: string) =>
        marks.filter((m) => m.action === action && m.username === username).length;
      expect(count('CASE_READ_MARKED', 'reader1')).toBe(10);
      expect(count('READ_OUTCOMES_FROZEN', 'reader2')).toBe(9);
      expect(count('READ_OUTCOMES_FROZEN', 'reader3')).toBe(1);
      expect(count('CASE_ADJUDICATOR_CHANGED', 'isc')).toBe(1);
      expect((await verifyAuditChain(db)).ok).toBe(true);
    });

    it('gives the ISC the agreement and the Reads tab’s list in numbers', async () => {
      const db = t.database.db;
      const study = await db
        .selectFrom('studies')
        .select('id')
        .where('name', '=', DEMO_OUTCOMES_STUDY.name)
        .executeTakeFirstOrThrow();
      const isc = await login(t.app, 'isc', PASSWORD);
      const agreement = await isc.request({ url: `/api/studies/${study.id}/agreement` });
      expect(agreement.statusCode).toBe(200);
      const [pec] = agreement.json<StudyAgreementResponse>().endpoints;
      // Nine cases read by both readers (seven agreeing, the adjudicated one, the pending one).
      expect(pec).toMatchObject({ endpointKey: 'pec', cases: 9, readers: 2, valuedCases: 9, categorisedCases: 9 });
      expect(pec?.percentAgreement).toBeCloseTo(7 / 9, 10);
      expect(pec?.meanDifference).toBeCloseTo(-15 / 9, 10);
      for (const figure of ['icc', 'iccLower95', 'iccUpper95', 'kappa', 'loaLower', 'loaUpper'] as const)
        expect(pec?.[figure], figure).toEqual(expect.any(Number));
      expect(pec?.icc).toBeGreaterThan(0.9);

      const list = await isc.request({ url: `/api/studies/${study.id}/outcomes?pageSize=50` });
      expect(list.statusCode).toBe(200);
      const body = list.json<StudyOutcomeListResponse>();
      expect(body.total).toBe(DEMO_OUTCOME_CASES.length);
      const byProc = new Map(body.cases.map((c) => [c.procId, c]));
      expect(byProc.get('ENDO-4008')?.final).toEqual([
        { endpointKey: 'pec', value: 17, positive: true, adjudicated: true },
      ]);
      expect(byProc.get('ENDO-4009')?.adjudicationPending).toBe(true);
      expect(byProc.get('ENDO-4001')?.final).toEqual([
        { endpointKey: 'pec', value: 38, positive: true, adjudicated: false },
      ]);
    });
  });

  it('does nothing a second time', async () => {
    expect(await ensureDemoCases(t.database.db, { pollMs: 10 })).toBe(0);
  });
});
