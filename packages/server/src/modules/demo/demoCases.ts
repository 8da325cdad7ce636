import { IMAGE_STATUS_AT_STAGE, caseStage, type CaseStatus, type ImageStatus } from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import { recordAudit, SYSTEM_ACTOR, type AuditEvent } from '../../platform/audit/audit.js';
import { insertImageCopy } from '../images/imageEditService.js';
import { lockImage } from '../images/imageQueries.js';
import { DEMO_OUTCOMES_STUDY, DEMO_READING_STUDIES, DEMO_STUDY_NAME } from './demoSeed.js';
import { DEMO_OUTCOME_CASES, playDemoReads } from './demoReads.js';
import { DEMO_SLIDE_NAME } from './demoSlide.js';

interface DemoCase {
  procId: string;
  subjectId: string;
  siteId: string;
  visitId: string;
  status: CaseStatus;
  /** The statuses it went through, in order (prevWorkflowStatuses). */
  prev: CaseStatus[];
  onHoldFrom?: CaseStatus;
  readers: string[];
  /** Readers who have marked it scored. */
  readBy?: string[];
  images: number;
  /** Another demo study's name (the reading studies); default the demo study. */
  study?: string;
}

/**
 * A living demo study (issue 11): a case in every status, with slides, assigned to reader1 and
 * reader2, and slides still waiting for a case — so a newcomer can walk the whole case lifecycle
 * after `npm start`. The slides are copies of the one generated demo slide (sharing its pyramid).
 */
export const DEMO_CASES: readonly DemoCase[] = [
  {
    procId: 'ENDO-1001',
    subjectId: '1001',
    siteId: 'SITE-01',
    visitId: 'SCREENING',
    status: 'PENDING_LAB_QC',
    prev: [],
    readers: ['reader1'],
    images: 2,
  },
  {
    procId: 'ENDO-1002',
    subjectId: '1002',
    siteId: 'SITE-01',
    visitId: 'SCREENING',
    status: 'PENDING_QC',
    prev: ['PENDING_LAB_QC'],
    readers: ['reader1', 'reader2'],
    images: 2,
  },
  {
    procId: 'ENDO-1003',
    subjectId: '1001',
    siteId: 'SITE-01',
    visitId: 'WEEK 12',
    status: 'PROCESSED',
    prev: ['PENDING_LAB_QC', 'PENDING_QC'],
    readers: ['reader1'],
    images: 2,
  },
  {
    procId: 'ENDO-1004',
    subjectId: '1003',
    siteId: 'SITE-02',
    visitId: 'SCREENING',
    status: 'COMPLETED',
    prev: ['PENDING_LAB_QC', 'PENDING_QC', 'PROCESSED'],
    readers: ['reader2'],
    readBy: ['reader2'],
    images: 1,
  },
  {
    procId: 'ENDO-1005',
    subjectId: '1004',
    siteId: 'SITE-02',
    visitId: 'WEEK 12',
    status: 'ON_HOLD',
    prev: ['PENDING_LAB_QC', 'PENDING_QC'],
    onHoldFrom: 'PENDING_QC',
    readers: ['reader2'],
    images: 1,
  },
];

/** One case ready for reading in each reading study (celiac, NASH), read by both readers. */
const DEMO_READING_CASES: readonly DemoCase[] = DEMO_READING_STUDIES.map((study) => ({
  procId: study.procId,
  subjectId: study.subjectId,
  siteId: 'SITE-01',
  visitId: 'BASELINE',
  status: 'PROCESSED',
  prev: ['PENDING_LAB_QC', 'PENDING_QC'],
  readers: ['reader1', 'reader2'],
  images: 1,
  study: study.name,
}));

/**
 * The read-outcomes study's cases (issue 30), created ready for reading by both readers; their
 * reads are then done by playDemoReads.
 */
const DEMO_OUTCOMES_CASES: readonly DemoCase[] = DEMO_OUTCOME_CASES.map((c) => ({
  procId: c.procId,
  subjectId: c.subjectId,
  siteId: c.siteId,
  visitId: c.visitId,
  status: 'PROCESSED',
  prev: ['PENDING_LAB_QC', 'PENDING_QC'],
  readers: c.reads.map((r) => r.reader),
  images: 1,
  study: DEMO_OUTCOMES_STUDY.name,
}));

/** Copies of the demo slide left waiting for a case. */
const UNASSIGNED_COPIES = 2;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * At start with demo data: once the demo slide is processed, and when the demo study has no case
 * yet, creates the demo cases and their slides in one transaction, audited as the system, and then
 * has the read-outcomes study's cases read (playDemoReads, as their readers). Waits for processing
 * up to `timeoutMs`. Returns the number of cases created.
 */
export async function ensureDemoCases(db: Db, options: { timeoutMs?: number; pollMs?: number } = {}): Promise<number> {
  const study = await db.selectFrom('studies').select('id').where('name', '=', DEMO_STUDY_NAME).executeTakeFirst();
  if (!study) return 0;
  const deadline = Date.now() + (options.timeoutMs ?? 15 * 60_000);
  for (;;) {
    const hasCase = await db
      .selectFrom('cases')
      .select('id')
      .where('study_id', '=', study.id)
      .limit(1)
      .executeTakeFirst();
    if (hasCase) return 0;
    const slide = await db
      .selectFrom('images')
      .select(['id', 'processing_status'])
      .where('study_id', '=', study.id)
      .where('name', '=', DEMO_SLIDE_NAME)
      .where('copied_from_image_id', 'is', null)
      .executeTakeFirst();
    if (slide?.processing_status === 'SUCCESS') {
      const created = await createDemoCases(db, study.id, slide.id);
      if (created > 0) await playDemoReads(db);
      return created;
    }
    if (slide?.processing_status === 'FAIL' || Date.now() > deadline) return 0;
    await sleep(options.pollMs ?? 1000);
  }
}

async function createDemoCases(db: Db, studyId: number, slideId: number): Promise<number> {
  return db.transaction().execute(async (tx) => {
    // Another process may have done it meanwhile: the study's case list decides, under the slide's lock.
    const source = await lockImage(tx, slideId);
    const already = await tx
      .selectFrom('cases')
      .select('id')
      .where('study_id', '=', studyId)
      .limit(1)
      .executeTakeFirst();
    if (already) return 0;
    // Each slide's segment is one of its own study's segments (issue 29 item 18): a NASH slide is liver.
    const segmentsOf = new Map(
      (await tx.selectFrom('studies').select(['id', 'anatomical_segments']).execute()).map((s) => [
        s.id,
        s.anatomical_segments,
      ]),
    );
    const users = new Map(
      (await tx.selectFrom('users').select(['id', 'username']).execute()).map((u) => [u.username, u.id]),
    );
    const events: AuditEvent[] = [];
    let accession = 1;
    const copy = async (name: string, caseId: number | null, status: ImageStatus, inStudy = studyId) => {
      accession += 1;
      const segments = segmentsOf.get(inStudy) ?? [];
      const id = await insertImageCopy(tx, source, {
        name,
        caseId,
        status,
        studyId: inStudy,
        accessionNumber: `DEMO-${String(accession).padStart(4, '0')}`,
        biopsyLocation: segments.length > 0 ? (segments[accession % segments.length] ?? null) : null,
      });
      events.push({
        action: 'IMAGE_COPIED',
        entityType: 'image',
        entityId: id,
        studyId: inStudy,
        field: 'copied_from_image_id',
        newValue: { copiedFrom: source.id, name, demo: true },
      });
      if (caseId !== null)
        events.push({
          action: 'IMAGE_CASE_ASSIGNED',
          entityType: 'image',
          entityId: id,
          studyId: inStudy,
          field: 'case_id',
          newValue: caseId,
          reason: 'Demo data',
        });
      return id;
    };

    let created = 0;
    for (const demo of [...DEMO_CASES, ...DEMO_READING_CASES, ...DEMO_OUTCOMES_CASES]) {
      const caseStudy = demo.study
        ? (await tx.selectFrom('studies').select('id').where('name', '=', demo.study).executeTakeFirst())?.id
        : studyId;
      if (caseStudy === undefined) continue;
      created += 1;
      const stage = caseStage(demo.status, demo.onHoldFrom ?? null);
      const passedLabQc = demo.prev.includes('PENDING_LAB_QC');
      const passedIscQc = demo.prev.includes('PENDING_QC') && demo.status !== 'ON_HOLD';
      const row = await tx
        .insertInto('cases')
        .values({
          study_id: caseStudy,
          proc_id: demo.procId,
          subject_id: demo.subjectId,
          site_id: demo.siteId,
          visit_id: demo.visitId,
          status: demo.status,
          prev_workflow_statuses: demo.prev,
          on_hold_from: demo.onHoldFrom ?? null,
          qc1_by: passedLabQc ? (users.get('labtech') ?? null) : null,
          qc2_by: passedIscQc ? (users.get('isc') ?? null) : null,
          qc_completed_at: passedIscQc ? new Date() : null,
          read_by: demo.readBy?.[0] ? (users.get(demo.readBy[0]) ?? null) : null,
          read_completed_at: demo.readBy ? new Date() : null,
          created_by: users.get('labtech') ?? null,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      events.push({
        action: 'CASE_CREATED',
        entityType: 'case',
        entityId: row.id,
        studyId: caseStudy,
        newValue: { procId: demo.procId, subjectId: demo.subjectId, status: demo.status, demo: true },
      });
      for (const username of demo.readers) {
        const userId = users.get(username);
        if (userId === undefined) continue;
        await tx
          .insertInto('case_readers')
          .values({
            case_id: row.id,
            user_id: userId,
            read_at: demo.readBy?.includes(username) ? new Date() : null,
          })
          .execute();
      }
      events.push({
        action: 'CASE_READERS_CHANGED',
        entityType: 'case',
        entityId: row.id,
        studyId: caseStudy,
        field: 'readers',
        newValue: demo.readers,
        reason: 'Demo data',
      });
      const status = stage ? IMAGE_STATUS_AT_STAGE[stage] : 'CASE_ASSIGNMENT_PENDING';
      for (let i = 0; i < demo.images; i++) {
        await copy(
          `S${demo.subjectId}_${demo.visitId.replace(/\s+/g, '')}_${String.fromCharCode(65 + i)}.tif`,
          row.id,
          status,
          caseStudy,
        );
      }
    }
    for (let i = 0; i < UNASSIGNED_COPIES; i++)
      await copy(`S1005_SCREENING_${String.fromCharCode(65 + i)}.tif`, null, 'CASE_ASSIGNMENT_PENDING');

    await recordAudit(tx, SYSTEM_ACTOR, events);
    return created;
  });
}
