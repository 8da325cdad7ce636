// engine: postgres — the sort columns' triggers against a concurrent transaction on another connection, in either order
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import type { Db } from '../src/platform/db/database.js';
import {
  IM_IMAGE_COLUMNS,
  IM_IMAGE_SORT_KEYS,
  ROLE_PERMISSIONS,
  viewableColumns,
  type ImImageSortKey,
} from '@lamina/domain';
import { createTestApp, login, type Session, type TestContext } from './testApp.js';
import { createCase, createOrganization, createStudy, createStudyImage, createUser, PASSWORD } from './factories.js';
import { waitFor } from './support/wait.js';

/**
 * The images' sort columns (migration 0015): the values of another table the Image Management list
 * sorts by, copied onto the image row by triggers. Each must equal the value the list shows — the
 * joined one, with the list's coalesce rules (imQueries.ts) — after every kind of change.
 */

let t: TestContext;
const db = () => t.database.db;

/** Every image's sort columns as stored, and as the joins compute them, where they differ. */
async function mismatches() {
  const { rows } = await sql<Record<string, unknown>>`
    select i.id,
           i.sort_sponsor, s.sponsor,
           i.sort_study_name, s.name as study_name,
           i.sort_organization, o.name as organization,
           i.sort_site_id, coalesce(c.site_id, i.site_id) as site_id,
           i.sort_subject_id, coalesce(c.subject_id, i.subject_id) as subject_id,
           i.sort_visit_id, coalesce(c.visit_id, i.visit_id) as visit_id,
           i.sort_histo_procedure_id, c.histo_procedure_id,
           i.sort_proc_id, c.proc_id,
           i.sort_collection_date, coalesce(i.specimen_collection_date, c.specimen_collection_date) as collection_date
    from images i
    left join studies s on s.id = i.study_id
    left join cases c on c.id = i.case_id
    left join organizations o on o.id = i.organization_id
    where (i.sort_sponsor, i.sort_study_name, i.sort_organization, i.sort_site_id, i.sort_subject_id,
           i.sort_visit_id, i.sort_histo_procedure_id, i.sort_proc_id, i.sort_collection_date)
          is distinct from
          (s.sponsor, s.name, o.name, coalesce(c.site_id, i.site_id), coalesce(c.subject_id, i.subject_id),
           coalesce(c.visit_id, i.visit_id), c.histo_procedure_id, c.proc_id,
           coalesce(i.specimen_collection_date, c.specimen_collection_date))`.execute(db());
  return rows;
}

async function listImages(session: Session, body: object) {
  const response = await session.request({
    method: 'POST',
    url: '/api/imageManagement/images',
    payload: { pageSize: 10, ...body },
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ results: (Record<string, unknown> & { id: number })[]; total: number }>();
}

async function listIds(session: Session, body: object): Promise<number[]> {
  return (await listImages(session, body)).results.map((r) => r.id);
}

/** The columns a search looks in (those the user may view of them). */
const SEARCHED = [
  'imageFilename',
  'accessionNumber',
  'studyName',
  'protocolId',
  'siteId',
  'subjectId',
  'visitId',
  'labVisitId',
  'histoProcedureId',
  'endoProcedureId',
  'anatomicalSegment',
  'organizationName',
];

async function sortColumns(id: number) {
  return db()
    .selectFrom('images')
    .select(
      sql<Record<string, unknown>>`to_jsonb(images) - array[
      'id', 'study_id', 'case_id', 'name', 's3_key', 'uploaded_at', 'created_at', 'updated_at']`.as('row'),
    )
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
}

beforeAll(async () => {
  t = await createTestApp();
});

afterAll(async () => {
  await t.close();
});

describe('images sort columns', () => {
  it('equal the joined values after inserts, image edits, case edits, moves, renames', async () => {
    const a = await createStudy(db());
    const b = await createStudy(db());
    const orgA = await createOrganization(db());
    const orgB = await createOrganization(db());
    const caseA = await createCase(db(), { studyId: a.id });
    const caseB = await createCase(db(), { studyId: a.id });
    const caseC = await createCase(db(), { studyId: b.id });
    await db()
      .updateTable('cases')
      .set({ site_id: '1001', visit_id: 'WEEK 12', histo_procedure_id: 'H-1', proc_id: 'EP-1' })
      .where('id', '=', caseA.id)
      .execute();
    await db()
      .updateTable('cases')
      .set({ site_id: null, specimen_collection_date: '2026-01-05', proc_id: 'EP-2' })
      .where('id', '=', caseB.id)
      .execute();

    // Inserted in a case, without one, without a study; with and without their own values.
    const inA = (await createStudyImage(db(), { studyId: a.id, caseId: caseA.id })).id;
    const inB = (await createStudyImage(db(), { studyId: a.id, caseId: caseB.id })).id;
    const loose = (await createStudyImage(db(), { studyId: b.id })).id;
    const noStudy = (
      await db()
        .insertInto('images')
        .values({
          name: 'no-study.svs',
          s3_key: 'uploads/no-study.svs',
          site_id: '2002',
          subject_id: '2002-0001',
          organization_id: orgA.id,
          specimen_collection_date: '2026-02-01',
        })
        .returning('id')
        .executeTakeFirstOrThrow()
    ).id;
    await db()
      .updateTable('images')
      .set({ site_id: '3003', subject_id: '3003-0007', visit_id: 'SCREENING', organization_id: orgA.id })
      .where('id', 'in', [inA, inB, loose])
      .execute();
    expect(await mismatches()).toEqual([]);
    // The case's values win over the image's own; the image's collection date over the case's.
    expect(await sortColumns(inB)).toMatchObject({
      row: expect.objectContaining({
        sort_site_id: '3003',
        sort_subject_id: expect.stringMatching(/^S-/),
        sort_proc_id: 'EP-2',
        sort_collection_date: '2026-01-05',
      }) as unknown,
    });

    // Image edits: its own values, its organization, its collection date.
    await db()
      .updateTable('images')
      .set({ specimen_collection_date: '2025-12-31', site_id: null, organization_id: orgB.id })
      .where('id', 'in', [inB, loose])
      .execute();
    await db().updateTable('images').set({ qa_comments: 'nothing sorted' }).where('id', '=', inA).execute();
    expect(await mismatches()).toEqual([]);

    // Case edits: every value, to and from empty; one that changes none of them.
    await db()
      .updateTable('cases')
      .set({
        site_id: '4004',
        subject_id: null,
        visit_id: 'WEEK 52',
        histo_procedure_id: null,
        proc_id: 'EP-9',
        specimen_collection_date: '2026-03-03',
      })
      .where('id', '=', caseA.id)
      .execute();
    await db()
      .updateTable('cases')
      .set({ images_expected: 4, status: 'PENDING_QC' })
      .where('id', '=', caseB.id)
      .execute();
    expect(await mismatches()).toEqual([]);

    // Moves: between cases, out of a case, into a case, to another study, out of every study.
    await db().updateTable('images').set({ case_id: caseB.id }).where('id', '=', inA).execute();
    await db().updateTable('images').set({ case_id: null }).where('id', '=', inB).execute();
    await db().updateTable('images').set({ case_id: caseC.id }).where('id', '=', loose).execute();
    await db().updateTable('images').set({ study_id: b.id, case_id: null }).where('id', '=', inA).execute();
    await db().updateTable('images').set({ study_id: null }).where('id', '=', inB).execute();
    await db().updateTable('images').set({ study_id: a.id }).where('id', '=', noStudy).execute();
    expect(await mismatches()).toEqual([]);

    // Renames: a study's name and sponsor, an organization's name; a sponsor emptied.
    await db()
      .updateTable('studies')
      .set({ name: `${a.name} renamed`, sponsor: 'Other Sponsor' })
      .where('id', '=', a.id)
      .execute();
    await db().updateTable('studies').set({ sponsor: null }).where('id', '=', b.id).execute();
    await db()
      .updateTable('organizations')
      .set({ name: `${orgA.name} renamed` })
      .where('id', '=', orgA.id)
      .execute();
    expect(await mismatches()).toEqual([]);

    // A case's images (several) follow one case edit; copies inserted into a case follow it too.
    const more = [];
    for (let i = 0; i < 3; i++) more.push((await createStudyImage(db(), { studyId: b.id, caseId: caseC.id })).id);
    await db()
      .updateTable('cases')
      .set({ site_id: '5005', subject_id: '5005-0001' })
      .where('id', '=', caseC.id)
      .execute();
    expect(await mismatches()).toEqual([]);
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from images where case_id = ${caseC.id} and sort_site_id = '5005'`.execute(db());
    expect(rows[0]?.n).toBe(4);

    // The check itself sees a wrong value.
    await db().updateTable('images').set({ sort_site_id: 'wrong' }).where('id', '=', loose).execute();
    expect((await mismatches()).map((r) => r.id)).toEqual([loose]);
    await db().updateTable('images').set({ sort_site_id: '5005' }).where('id', '=', loose).execute();
  });

  it('order the list as the shown values do, by every key both ways, nulls last, then by id, page by page', async () => {
    // Each sort key's value as the list shows it (the joins the sort columns replace).
    const shown: Record<ImImageSortKey, string> = {
      imageFilename: 'i.name',
      accessionNumber: 'i.accession_number',
      sponsor: 's.sponsor',
      studyName: 's.name',
      protocolId: 'i.protocol_id',
      siteId: 'coalesce(c.site_id, i.site_id)',
      subjectId: 'coalesce(c.subject_id, i.subject_id)',
      visitId: 'coalesce(c.visit_id, i.visit_id)',
      labVisitId: 'i.lab_visit_id',
      histoProcedureId: 'c.histo_procedure_id',
      endoProcedureId: 'c.proc_id',
      anatomicalSegment: 'i.biopsy_location',
      specimenCollectionDate: 'coalesce(i.specimen_collection_date, c.specimen_collection_date)',
      uploadedAt: 'i.uploaded_at',
      status: 'i.status',
      organizationName: 'o.name',
    };
    // Three studies (one without a sponsor; the lab technician sees two), ties and empty values
    // in every column, some upload times shared.
    const studies = [
      await createStudy(db(), 'ORDER B'),
      await createStudy(db(), 'ORDER A'),
      await createStudy(db(), 'ORDER C'),
    ];
    const ids = studies.map((study) => study.id);
    await db()
      .updateTable('studies')
      .set({ sponsor: null })
      .where('id', '=', ids[1] ?? 0)
      .execute();
    const orgs = [await createOrganization(db(), 'ORDER ORG 2'), await createOrganization(db(), 'ORDER ORG 1')];
    const cases: number[] = [];
    for (let i = 0; i < 6; i++) {
      const { id } = await createCase(db(), { studyId: ids[i % 3] ?? 0 });
      await db()
        .updateTable('cases')
        .set({
          site_id: i === 0 ? null : `S${i % 2}`,
          subject_id: i === 1 ? null : `SUBJ${i % 3}`,
          visit_id: i === 2 ? null : `V${i % 2}`,
          histo_procedure_id: i === 3 ? null : `H${i % 2}`,
          proc_id: i === 4 ? null : `EP${i % 4}`,
          specimen_collection_date: i === 1 ? null : `2026-01-0${1 + (i % 2)}`,
        })
        .where('id', '=', id)
        .execute();
      cases.push(id);
    }
    const shared = new Date(Date.now() - 3_600_000);
    for (let i = 0; i < 36; i++) {
      const studyIndex = i % 3;
      const { id } = await createStudyImage(db(), {
        studyId: ids[studyIndex] ?? 0,
        // Cases of the image's own study (case k is in study k % 3); every fourth image in none.
        caseId: i % 4 === 3 ? null : (cases[studyIndex + 3 * (i % 2)] ?? null),
        status: i % 7 === 6 ? 'LAB_QC_PENDING' : 'CASE_ASSIGNMENT_PENDING',
        ...(i % 5 === 0 && { uploadedAt: shared }),
      });
      await db()
        .updateTable('images')
        .set({
          accession_number: i % 6 === 0 ? null : `ACC${i % 4}`,
          protocol_id: i % 5 === 1 ? null : `P-${studyIndex}${i % 2}`,
          biopsy_location: i % 4 === 2 ? null : `SEG${(i + studyIndex) % 3}`,
          lab_visit_id: i % 3 === 1 ? null : `LV${i % 2}`,
          organization_id: i % 5 === 4 ? null : (orgs[i % 2]?.id ?? null),
          site_id: i % 3 === 0 ? null : `S${i % 3}`,
          subject_id: i % 4 === 0 ? null : `SUBJ${i % 4}`,
          visit_id: i % 5 === 0 ? null : `V${i % 3}`,
          specimen_collection_date: i % 2 === 0 ? null : `2026-01-0${1 + (i % 3)}`,
        })
        .where('id', '=', id)
        .execute();
    }

    const lists = [
      // A study admin sees every study (and the images without one, left by the tests above):
      // the list walks an index over the whole table.
      { role: 'StudyAdmin' as const, user: { globalRoles: ['StudyAdmin' as const] }, body: {}, where: sql`true` },
      // With a study filter, and a lab technician who sees two studies: the per-study merge.
      {
        role: 'StudyAdmin' as const,
        user: { globalRoles: ['StudyAdmin' as const] },
        body: { studyFilter: { selectedIds: ids.slice(1) } },
        where: sql`i.study_id in (${sql.join(ids.slice(1))})`,
      },
      {
        role: 'LabTech' as const,
        user: { studyRoles: ids.slice(0, 2).map((studyId) => ({ studyId, role: 'LabTech' as const })) },
        body: {},
        where: sql`i.study_id in (${sql.join(ids.slice(0, 2))})`,
      },
    ];
    for (const list of lists) {
      const session = await login(t.app, (await createUser(db(), list.user)).username, PASSWORD);
      const viewable = new Set(viewableColumns(IM_IMAGE_COLUMNS, ROLE_PERMISSIONS[list.role]).map((c) => c.key));
      for (const key of IM_IMAGE_SORT_KEYS.filter((k) => viewable.has(k)))
        for (const direction of ['asc', 'desc'] as const) {
          const { rows } = await sql<{ id: number }>`
            select i.id from images i
            left join studies s on s.id = i.study_id
            left join cases c on c.id = i.case_id
            left join organizations o on o.id = i.organization_id
            where i.status <> 'ARCHIVED' and ${list.where}
            order by ${sql.raw(shown[key])} ${sql.raw(direction)} nulls last, i.id ${sql.raw(direction)}`.execute(db());
          // Page by page (pages of 10: the merge's offsets), and in one page.
          const listed: number[] = [];
          for (let page = 1; page <= Math.ceil(rows.length / 10) + 1; page++)
            listed.push(
              ...(await listIds(session, { ...list.body, sort: `${direction === 'asc' ? '' : '-'}${key}`, page })),
            );
          const what = `${list.role} ${JSON.stringify(list.body)} ${direction} ${key}`;
          expect(listed, what).toEqual(rows.map((r) => r.id));
          const whole = await listIds(session, {
            ...list.body,
            sort: `${direction === 'asc' ? '' : '-'}${key}`,
            pageSize: 100,
          });
          expect(whole, what).toEqual(rows.map((r) => r.id).slice(0, 100));
        }
      // A search (the values the sort columns hold too: a case's, a study's, an organization's)
      // lists what the whole list shows containing it, in the same order, with its total.
      // 'a order org' is the end of a study name and the start of an organization's, which the
      // row's searched text (one index over every column) holds side by side: no column has it.
      for (const text of ['subj1', 'ORDER a', 'order org 1', 'P-1', 'v1', 'a order org'])
        for (const sort of ['-uploadedAt', 'siteId']) {
          const all = await listImages(session, { ...list.body, sort, pageSize: 100 });
          const expected = all.results
            .filter((record) =>
              SEARCHED.some((key) => {
                const value = record[key];
                return typeof value === 'string' && value.toLowerCase().includes(text.toLowerCase());
              }),
            )
            .map((record) => record.id);
          const pages: number[] = [];
          let total = -1;
          for (let page = 1; page <= Math.ceil(expected.length / 10) + 1; page++) {
            const found = await listImages(session, { ...list.body, sort, page, searchText: text });
            pages.push(...found.results.map((r) => r.id));
            total = found.total;
          }
          const what = `${list.role} ${JSON.stringify(list.body)} search ${text} ${sort}`;
          expect(expected.length, what)[text === 'a order org' ? 'toBe' : 'toBeGreaterThan'](0);
          expect(pages, what).toEqual(expected);
          expect(total, what).toBe(expected.length);
        }
    }
  });

  it.runIf(process.env.TEST_DATABASE_URL)(
    'an image moved into a case while the case is edited gets the committed values, in either order',
    async () => {
      const study = await createStudy(db());
      for (const caseFirst of [false, true]) {
        const target = await createCase(db(), { studyId: study.id });
        const image = (await createStudyImage(db(), { studyId: study.id })).id;
        let release = () => {};
        const held = new Promise<void>((resolve) => (release = resolve));
        let started = () => {};
        const begun = new Promise<void>((resolve) => (started = resolve));
        const move = (tx: Db) => tx.updateTable('images').set({ case_id: target.id }).where('id', '=', image).execute();
        const edit = (tx: Db) =>
          tx
            .updateTable('cases')
            .set({ site_id: `9${target.id}` })
            .where('id', '=', target.id)
            .execute();
        // The first writer holds its transaction open until the second has started (and waits).
        const first = db()
          .transaction()
          .execute(async (tx) => {
            await (caseFirst ? edit(tx) : move(tx));
            started();
            await held;
          });
        await begun;
        let secondDone = false;
        const second = (caseFirst ? move(db()) : edit(db())).then(() => {
          secondDone = true;
        });
        // Released once the second waits for a lock the first holds (or, needing none, is done).
        await waitFor(
          'the second writer to wait for the first',
          async () => {
            if (secondDone) return true;
            const { rows } = await sql<{ n: number }>`
              select count(*)::int as n from pg_stat_activity
              where datname = current_database() and wait_event_type = 'Lock'`.execute(db());
            return (rows[0]?.n ?? 0) > 0;
          },
          { timeoutMs: 10_000, everyMs: 10 },
        );
        release();
        await Promise.all([first, second]);
        expect(await mismatches()).toEqual([]);
      }
    },
    30_000,
  );
});
