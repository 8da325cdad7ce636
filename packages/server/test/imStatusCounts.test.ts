// engine: postgres — the status counts' trigger under two concurrent writers moving images in opposite directions
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createTestApp, type TestContext } from './testApp.js';
import { createCase, createQuery, createStudy, createStudyImage } from './factories.js';

/**
 * image_status_counts (migration 0011): the images per study and status that the Image Management
 * total sums instead of counting 10^6 rows. It must equal a real count after every kind of change,
 * and two writers moving images in opposite directions must not deadlock on its rows.
 */

let t: TestContext;
const db = () => t.database.db;

async function counted() {
  const { rows } = await sql<{ key: number; status: string; n: number }>`
    select study_key as key, status, n::int as n from image_status_counts where n <> 0 order by 1, 2`.execute(db());
  return rows;
}

async function actual() {
  const { rows } = await sql<{ key: number; status: string; n: number }>`
    select coalesce(study_id, 0) as key, status, count(*)::int as n from images group by 1, 2 order by 1, 2`.execute(
    db(),
  );
  return rows;
}

beforeAll(async () => {
  t = await createTestApp();
});

afterAll(async () => {
  await t.close();
});

describe('image_status_counts', () => {
  it('equals a real count after inserts, status changes, moves between studies and deletes', async () => {
    const a = await createStudy(db());
    const b = await createStudy(db());
    const ids: number[] = [];
    for (let i = 0; i < 6; i++) ids.push((await createStudyImage(db(), { studyId: i % 2 ? a.id : b.id })).id);
    expect(await counted()).toEqual(await actual());
    await db().updateTable('images').set({ status: 'LAB_QC_PENDING' }).where('id', 'in', ids.slice(0, 3)).execute();
    await db()
      .updateTable('images')
      .set({ study_id: b.id })
      .where('id', '=', ids[1] ?? 0)
      .execute();
    await db()
      .updateTable('images')
      .set({ study_id: null })
      .where('id', '=', ids[3] ?? 0)
      .execute();
    // An update that changes neither study nor status.
    await db()
      .updateTable('images')
      .set({ qa_comments: 'x', status: 'LAB_QC_PENDING' })
      .where('id', '=', ids[0] ?? 0)
      .execute();
    await db()
      .deleteFrom('images')
      .where('id', '=', ids[5] ?? 0)
      .execute();
    expect(await counted()).toEqual(await actual());
  });

  it.runIf(process.env.TEST_DATABASE_URL)(
    'two writers moving images between two studies in opposite directions do not deadlock',
    async () => {
      const a = await createStudy(db());
      const b = await createStudy(db());
      // Four writers each way, each moving its own image back and forth: every move writes the two
      // count rows of (a, status) and (b, status), one writer in each direction at any moment.
      const writers = 8;
      const images: number[] = [];
      for (let w = 0; w < writers; w++)
        images.push((await createStudyImage(db(), { studyId: w % 2 ? a.id : b.id })).id);
      const run = async (w: number) => {
        const id = images[w] ?? 0;
        for (let round = 0; round < 60; round++) {
          const to = (w + round) % 2 ? b.id : a.id;
          await db().updateTable('images').set({ study_id: to }).where('id', '=', id).execute();
        }
      };
      await Promise.all(Array.from({ length: writers }, (_, w) => run(w)));
      expect(await counted()).toEqual(await actual());
    },
    60_000,
  );
});

describe('cases.open_queries', () => {
  it('equals the open queries naming the case after inserts, closes, moves between cases and deletes', async () => {
    const study = await createStudy(db());
    const [a, b] = [await createCase(db(), { studyId: study.id }), await createCase(db(), { studyId: study.id })];
    const real = async (id: number) =>
      (
        await db()
          .selectFrom('queries')
          .select(sql<number>`count(*)::int`.as('n'))
          .where('case_id', '=', id)
          .where('query_status', '=', 'OPEN')
          .executeTakeFirstOrThrow()
      ).n;
    const stored = async (id: number) =>
      (await db().selectFrom('cases').select('open_queries').where('id', '=', id).executeTakeFirstOrThrow())
        .open_queries;
    const check = async () => {
      for (const c of [a, b]) expect(await stored(c.id), `case ${c.id}`).toBe(await real(c.id));
    };
    const q1 = await createQuery(db(), { studyId: study.id });
    const q2 = await createQuery(db(), { studyId: study.id });
    const q3 = await createQuery(db(), { studyId: study.id, status: 'CLOSED' });
    await db().updateTable('queries').set({ case_id: a.id }).where('id', 'in', [q1.id, q2.id, q3.id]).execute();
    await check();
    expect(await stored(a.id)).toBe(2);
    await db().updateTable('queries').set({ query_status: 'CLOSED' }).where('id', '=', q1.id).execute();
    await db().updateTable('queries').set({ case_id: b.id }).where('id', '=', q2.id).execute();
    await db().updateTable('queries').set({ query_status: 'OPEN' }).where('id', '=', q3.id).execute();
    await check();
    await db().deleteFrom('queries').where('id', '=', q3.id).execute();
    await check();
    expect([await stored(a.id), await stored(b.id)]).toEqual([0, 1]);
  });
});
