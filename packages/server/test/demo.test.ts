import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CASE_WORKFLOW_STAGES, IMAGE_STATUS_AT_STAGE, caseStage, type CaseStatus } from '@lamina/domain';
import { DEMO_READING_STUDIES, DEMO_STUDY_NAME, seedDemoData } from '../src/modules/demo/demoSeed.js';
import { DEMO_SLIDE_NAME } from '../src/modules/demo/demoSlide.js';
import { DEMO_CASES, ensureDemoCases } from '../src/modules/demo/demoCases.js';
import { verifyAuditChain } from '../src/platform/audit/verify.js';
import { createTestApp, type TestContext } from './testApp.js';

/** The demo study is a living one after `npm start` (issue 11): a case in each status, with slides. */
let t: TestContext;
let studyId: number;

beforeAll(async () => {
  t = await createTestApp();
  const db = t.database.db;
  expect(await seedDemoData(db, 'demo password 1')).toBe(true);
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
    })
    .execute();
});

afterAll(async () => {
  await t.close();
});

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
    expect(await ensureDemoCases(db, { pollMs: 10 })).toBe(DEMO_CASES.length + DEMO_READING_STUDIES.length);
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
      .select('users.username')
      .execute();
    expect(new Set(readers.map((r) => r.username))).toEqual(new Set(['reader1', 'reader2']));
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
      const access = await db
        .selectFrom('study_access')
        .innerJoin('users', 'users.id', 'study_access.user_id')
        .select('users.username')
        .where('study_id', '=', study.id)
        .execute();
      expect(access.map((a) => a.username)).toEqual(expect.arrayContaining(['reader1', 'reader2', 'isc', 'dm']));
    }
    const celiac = await db
      .selectFrom('annotation_classes')
      .innerJoin('studies', 'studies.id', 'annotation_classes.study_id')
      .select(['annotation_classes.name', 'annotation_classes.type'])
      .where('studies.name', '=', DEMO_READING_STUDIES[0]?.name ?? '')
      .where('annotation_classes.type', '=', 'MULTILINE')
      .execute();
    expect(celiac.map((c) => c.name)).toEqual(['Unit 1', 'Unit 2', 'Unit 3', 'Unit 4', 'Unit 5']);
  });

  it('does nothing a second time', async () => {
    expect(await ensureDemoCases(t.database.db, { pollMs: 10 })).toBe(0);
  });
});
