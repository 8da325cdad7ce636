/**
 * npm run seed:scale — a trial-sized database for the Image Management scale benchmark (issue 12):
 * 50 studies, 100 000 cases, 1 000 000 images, queries and reader assignments, in the PostgreSQL
 * database DATABASE_URL names.
 *
 * Runs the server's own migrations and reference data first, then set-based SQL
 * (`insert … select … from generate_series`) with a fixed random seed, so the data is the same
 * from run to run and takes minutes. Refuses a database named `test` (the test suites' own) and a
 * database that already holds images: drop and create the database to seed it again.
 *
 * Accounts (password SCALE_PASSWORD, default 'scale-bench-password'):
 * - `scale-studyadmin`: the StudyAdmin role (a global role: every study, as the product models it);
 * - `scale-labtech`: LabTech study access in 3 studies (about 6 % of the data);
 * - lab technicians, ISC users and central readers who passed QC or read the cases.
 *
 * Environment: DATABASE_URL (required), SCALE_CASES (100000), SCALE_IMAGES (1000000), SCALE_PASSWORD.
 */
import { roleByName } from '@lamina/domain';
import { sql } from 'kysely';
import { openDatabase, type Database } from '../packages/server/src/platform/db/database.js';
import { migrate } from '../packages/server/src/platform/db/migrate.js';
import { syncReferenceData } from '../packages/server/src/platform/rbac/referenceData.js';
import { hashPassword } from '../packages/server/src/platform/auth/passwords.js';

export const SCALE_PASSWORD = process.env.SCALE_PASSWORD || 'scale-bench-password';
export const SCALE_STUDY_ADMIN = 'scale-studyadmin';
export const SCALE_LAB_TECH = 'scale-labtech';

const STUDIES = 50;
const CASES = Number(process.env.SCALE_CASES ?? 100_000);
const IMAGES = Number(process.env.SCALE_IMAGES ?? 1_000_000);
/** Share of the images in a case; the rest wait for one (or for a study, or failed, …). */
const IN_CASE = 0.9;
/** The lab technician's studies, by position in the list (a large, a middle and a small one). */
const LAB_TECH_STUDIES = [4, 19, 39];

const ORGANIZATIONS = [
  'Lamina Central Lab',
  'Northside Hospital',
  'Lakeview Medical Center',
  'Riverside Pathology',
  'St. Anne University Hospital',
  'Harbor Gastroenterology Clinic',
  'Westfield Regional Hospital',
  'Kingsbridge Histology Services',
  'Maple Grove Medical Group',
  'Eastgate Digestive Health',
  'Summit Endoscopy Center',
  'Clearwater Research Site',
  'Hillcrest Clinical Trials Unit',
  'Oakmont Pathology Partners',
  'Bayside Medical Institute',
  'Cedar Valley Hospital',
  'Pinecrest Gastro Associates',
  'Unity Health Research',
  'Meridian Trial Site',
  'Granite State Pathology',
];
const SPONSORS = [
  'Acme Therapeutics',
  'Borealis Pharma',
  'Cygnus Biologics',
  'Delta Immunology',
  'Evergreen Bio',
  'Fulcrum Medicines',
  'Helix Gastro Sciences',
  'Ionis Clinical',
];
const INDICATIONS = [
  { code: 'UC', name: 'Ulcerative Colitis Histology', segments: ['Rectum', 'Sigmoid colon', 'Descending colon'] },
  { code: 'CD', name: "Crohn's Disease Endoscopic Biopsy", segments: ['Terminal ileum', 'Ascending colon', 'Rectum'] },
  {
    code: 'EOE',
    name: 'Eosinophilic Esophagitis',
    segments: ['Proximal esophagus', 'Mid esophagus', 'Distal esophagus'],
  },
  { code: 'CEL', name: 'Celiac Disease Duodenal Biopsy', segments: ['Duodenal bulb', 'Second part of duodenum'] },
  { code: 'EG', name: 'Eosinophilic Gastritis', segments: ['Gastric antrum', 'Gastric body', 'Fundus'] },
];

function log(message: string): void {
  console.log(`[seed:scale] ${message}`);
}

/** Runs one step and prints how long it took. */
async function step<T>(label: string, run: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await run();
  log(`${label} (${((performance.now() - started) / 1000).toFixed(1)} s)`);
  return result;
}

function databaseName(url: string): string {
  return decodeURIComponent(new URL(url).pathname.replace(/^\//, ''));
}

async function refuseUnlessEmpty(database: Database): Promise<void> {
  const { rows } = await sql<{ images: number; scale: number }>`
    select (select count(*) from (select 1 from images limit 1) x)::int as images,
           (select count(*) from users where lower(username) = ${SCALE_STUDY_ADMIN})::int as scale`.execute(
    database.db,
  );
  const row = rows[0];
  if (row && (row.images > 0 || row.scale > 0)) {
    throw new Error(
      'this database already holds images or scale accounts: seed:scale runs once, on an empty database ' +
        '(dropdb and createdb it to seed again)',
    );
  }
}

async function seed(database: Database): Promise<void> {
  const { raw } = database;
  const db = database.db;
  const passwordHash = await hashPassword(SCALE_PASSWORD);
  // One seed for every random() below: the same data each run.
  // (A random() in an uncorrelated subquery runs once: arrays are joined in, and indexed per row.)
  const random = (text: string) => raw.exec(`set work_mem = '256MB'; select setseed(0.42); ${text}`);

  await step(`${ORGANIZATIONS.length} organizations`, () =>
    raw.query('insert into organizations (name) select unnest($1::text[])', [ORGANIZATIONS]),
  );

  await step(`${STUDIES} studies`, () =>
    raw.query(
      `insert into studies (name, sponsor, protocol_ids, visit_ids, lab_visit_ids, indications, segments,
                            anatomical_segments, modality, created_at)
       select format('%s-%s-%s %s', upper(left(replace(sp, ' ', ''), 4)), ind->>'code', 300 + i, ind->>'name'),
              sp,
              array[format('%s-%s-%s', upper(left(replace(sp, ' ', ''), 4)), ind->>'code', 300 + i)],
              array['SCREENING', 'WEEK 12', 'WEEK 52'],
              array['V1', 'V4', 'V9'],
              array[upper(ind->>'code')],
              jsonb_array_length(ind->'segments'),
              array(select jsonb_array_elements_text(ind->'segments')),
              array['HISTOPATHOLOGY'],
              now() - interval '800 days' + i * interval '1 day'
       from generate_series(1, $1::int) i,
            lateral (select ($2::text[])[1 + (i - 1) % array_length($2::text[], 1)] as sp,
                            ($3::jsonb)->((i - 1) % jsonb_array_length($3::jsonb)) as ind) x`,
      [STUDIES, SPONSORS, JSON.stringify(INDICATIONS)],
    ),
  );
  const studyIds = (await db.selectFrom('studies').select('id').orderBy('id').execute()).map((s) => s.id);
  const labTechStudies = LAB_TECH_STUDIES.map((i) => studyIds[i]).filter((id): id is number => id !== undefined);

  await step('users and study access', async () => {
    const users = [
      { username: SCALE_STUDY_ADMIN, first: 'Stella', last: 'Scale', global: 'StudyAdmin' as const },
      { username: SCALE_LAB_TECH, first: 'Leo', last: 'Scale' },
      ...Array.from({ length: 5 }, (_, i) => ({
        username: `scale-labtech${i + 2}`,
        first: 'Lab',
        last: `Tech ${i + 2}`,
      })),
      ...Array.from({ length: 3 }, (_, i) => ({
        username: `scale-isc${i + 1}`,
        first: 'Isc',
        last: `Coordinator ${i + 1}`,
      })),
      ...Array.from({ length: 6 }, (_, i) => ({
        username: `scale-reader${i + 1}`,
        first: 'Central',
        last: `Reader ${i + 1}`,
      })),
    ];
    for (const u of users) {
      const user = await db
        .insertInto('users')
        .values({
          username: u.username,
          first_name: u.first,
          last_name: u.last,
          organization_id: sql<number>`(select id from organizations order by id limit 1)`,
          registered: true,
          password_hash: passwordHash,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      if ('global' in u && u.global) {
        await db
          .insertInto('user_roles')
          .values({ user_id: user.id, role_id: roleByName(u.global).id })
          .execute();
      }
    }
    const grant = (pattern: string, role: 'LabTech' | 'ISC' | 'CR', studies: readonly number[]) =>
      raw.query(
        `insert into study_access (user_id, study_id, role_id)
         select u.id, s, $2 from users u, unnest($3::int[]) s where u.username like $1`,
        [pattern, roleByName(role).id, studies],
      );
    await grant(SCALE_LAB_TECH, 'LabTech', labTechStudies);
    await grant('scale-labtech_%', 'LabTech', studyIds);
    await grant('scale-isc%', 'ISC', studyIds);
    await grant('scale-reader%', 'CR', studyIds);
  });

  // Studies are of very different sizes: the first hold many cases, the last few (x^1.6 skew).
  const pickStudy = `studies_arr.ids[1 + floor(${STUDIES} * power(random(), 1.6))::int]`;

  await step(`${CASES.toLocaleString('en')} cases`, () =>
    random(`
      with labtech as (select array_agg(id order by id) ids from users where username like 'scale-labtech%'),
           isc as (select array_agg(id order by id) ids from users where username like 'scale-isc%'),
           studies_arr as (select array_agg(id order by id) ids from studies),
           g as materialized (
             select g,
                    ${pickStudy} as study_id,
                    random() as r_status,
                    now() - random() * interval '730 days' as created_at,
                    1000 + floor(random() * 40)::int as site,
                    floor(random() * 400)::int as subject,
                    floor(random() * 3)::int as visit
             from generate_series(1, ${CASES}) g, studies_arr
           ),
           s as materialized (
             select g.*, case
               when r_status < 0.15 then 'PENDING_LAB_QC'
               when r_status < 0.30 then 'PENDING_QC'
               when r_status < 0.55 then 'PROCESSED'
               when r_status < 0.90 then 'COMPLETED'
               when r_status < 0.94 then 'ON_HOLD'
               when r_status < 0.97 then 'INVALID'
               else 'ARCHIVED' end as status
             from g
           )
      insert into cases (study_id, proc_id, histo_procedure_id, subject_id, site_id, visit_id, status, on_hold_from,
                         images_expected, specimen_collection_date, qc1_by, qc2_by, qc_completed_at,
                         created_at, updated_at, archived_at)
      select study_id,
             format('EP%s-%s', to_char(created_at, 'YY'), lpad(g::text, 6, '0')),
             case when random() < 0.85 then format('H%s-%s', to_char(created_at, 'YYMM'), lpad((g * 7 % 99991)::text, 5, '0')) end,
             format('%s-%s', site, lpad(subject::text, 4, '0')),
             site::text,
             (array['SCREENING', 'WEEK 12', 'WEEK 52'])[1 + visit],
             status,
             case when status = 'ON_HOLD' then 'PENDING_QC' end,
             case when random() < 0.9 then 1 + floor(random() * 12)::int end,
             (created_at - floor(random() * 10) * interval '1 day')::date,
             case when status in ('PENDING_QC', 'PROCESSED', 'COMPLETED', 'ON_HOLD')
                  then labtech.ids[1 + floor(random() * array_length(labtech.ids, 1))::int] end,
             case when status in ('PROCESSED', 'COMPLETED')
                  then isc.ids[1 + floor(random() * array_length(isc.ids, 1))::int] end,
             case when status in ('PROCESSED', 'COMPLETED') then created_at + interval '3 days' end,
             created_at, created_at,
             case when status = 'ARCHIVED' then created_at + interval '20 days' end
      from s, labtech, isc order by created_at`),
  );

  // The images go in with the per-row trigger of image_status_counts (0011) off, and are counted
  // once after, in the same transaction: that trigger upserts one of ~500 count rows per image, and
  // in one transaction each upsert walks the row's versions left by the ones before (38 min).
  await step(`${IMAGES.toLocaleString('en')} images`, () =>
    random(`
      alter table images disable trigger images_status_counts;
      with cm as materialized (
             select c.id, c.study_id, c.status, c.site_id, c.subject_id, c.visit_id, c.created_at,
                    row_number() over (order by c.id) as rn
             from cases c
           ),
           n as (select count(*)::int as n from cm),
           studies_arr as (select array_agg(id order by id) ids from studies),
           g as materialized (
             select g, g <= ${Math.round(IMAGES * IN_CASE)} as in_case,
                    1 + floor(random() * (select n from n))::int as rn,
                    random() as r1, random() as r2, random() as r3,
                    ${pickStudy} as loose_study,
                    now() - random() * interval '730 days' as loose_at
             from generate_series(1, ${IMAGES}) g, studies_arr
           ),
           i as materialized (
             select g.g, g.r1, g.r2, g.r3,
                    case when g.in_case then cm.id end as case_id,
                    case when g.in_case then cm.study_id
                         when g.r1 >= 0.78 and g.r1 < 0.86 then null else g.loose_study end as study_id,
                    case
                      when g.in_case and (cm.status = 'ARCHIVED' or g.r1 < 0.02) then 'ARCHIVED'
                      when g.in_case then case cm.status
                        when 'PENDING_LAB_QC' then 'LAB_QC_PENDING'
                        when 'PENDING_QC' then 'ISC_QC_PENDING'
                        when 'PROCESSED' then 'READY_FOR_READING'
                        when 'COMPLETED' then 'COMPLETE'
                        when 'ON_HOLD' then 'ISC_QC_PENDING'
                        else 'LAB_QC_PENDING' end
                      when g.r1 < 0.04 then 'PROCESSING'
                      when g.r1 < 0.09 then 'FAIL_PROCESSING'
                      when g.r1 < 0.28 then 'DATA_INCOMPLETE'
                      when g.r1 < 0.78 then 'CASE_ASSIGNMENT_PENDING'
                      when g.r1 < 0.86 then 'STUDY_ASSIGNMENT_PENDING'
                      when g.r1 < 0.92 then 'DUPLICATE_IMAGE'
                      else 'ARCHIVED' end as status,
                    case when g.in_case then least(now(), cm.created_at + g.r2 * interval '3 days') else g.loose_at end as uploaded_at,
                    case when g.in_case then cm.site_id else (1000 + floor(g.r2 * 40)::int)::text end as site_id,
                    case when g.in_case then cm.subject_id
                         when g.r1 >= 0.09 and g.r1 < 0.28 and g.r3 < 0.5 then null
                         else format('%s-%s', 1000 + floor(g.r2 * 40)::int, lpad(floor(g.r3 * 400)::text, 4, '0')) end as subject_id,
                    case when g.in_case then cm.visit_id
                         when g.r1 >= 0.09 and g.r1 < 0.28 and g.r3 >= 0.5 then null
                         else (array['SCREENING', 'WEEK 12', 'WEEK 52'])[1 + floor(g.r3 * 3)::int] end as visit_id
             from g left join cm on g.in_case and cm.rn = g.rn
           )
      insert into images (study_id, case_id, name, s3_key, cog_key, organization_id, uploaded_at, status,
                          processing_status, accession_number, biopsy_location, protocol_id, site_id, subject_id,
                          visit_id, lab_visit_id, specimen_collection_date, stain_type, qa_comments, size_bytes,
                          width, height, levels, mpp, objective_power, created_at, updated_at)
      select i.study_id, i.case_id,
             format('%s_%s_%s.%s', coalesce(replace(i.subject_id, '-', ''), 'UNK'),
                    upper(left(replace(coalesce(seg, 'X'), ' ', ''), 6)), i.g, case when i.r3 < 0.8 then 'svs' else 'ndpi' end),
             format('scale/originals/%s/slide.svs', i.g),
             case when i.status not in ('PROCESSING', 'FAIL_PROCESSING') then format('scale/pyramids/%s.tif', i.g) end,
             1 + floor(i.r2 * ${ORGANIZATIONS.length})::int + (select min(id) - 1 from organizations),
             i.uploaded_at,
             i.status,
             case i.status when 'PROCESSING' then 'HOLDING' when 'FAIL_PROCESSING' then 'FAIL' else 'SUCCESS' end,
             case when i.r3 < 0.95 then format('S%s-%s', to_char(i.uploaded_at, 'YY'), lpad((i.g * 37 % 999983)::text, 6, '0')) end,
             seg,
             s.protocol_ids[1],
             i.site_id, i.subject_id, i.visit_id,
             case i.visit_id when 'SCREENING' then 'V1' when 'WEEK 12' then 'V4' when 'WEEK 52' then 'V9' end,
             case when i.case_id is null and i.r2 < 0.7 then (i.uploaded_at - interval '5 days')::date end,
             'H&E',
             case when i.r2 < 0.05 then (array['Tissue fold at the edge', 'Out of focus area, rescanned',
                   'Pen marks on the slide', 'Label partly covered', 'Air bubble under coverslip'])[1 + floor(i.r3 * 5)::int] end,
             (200 + floor(i.r2 * 1800)::bigint) * 1048576,
             40000 + floor(i.r3 * 60000)::int, 30000 + floor(i.r2 * 40000)::int, 9, 0.2527, 40,
             i.uploaded_at, i.uploaded_at
      from i
      left join studies s on s.id = i.study_id
      left join lateral (select s.anatomical_segments[1 + floor(i.r3 * array_length(s.anatomical_segments, 1))::int] as seg) x on true
      order by i.uploaded_at;
      alter table images enable trigger images_status_counts;
      delete from image_status_counts;
      insert into image_status_counts (study_key, status, n)
        select coalesce(study_id, 0), status, count(*) from images group by 1, 2;`),
  );

  await step('queries on images and cases', () =>
    random(`
      insert into queries (object_type, object_id, study_id, case_id, organization_id, query_status, category,
                           reason_text, opened_at, closed_at, resolution)
      select 'IMAGE', i.id, i.study_id, i.case_id, i.organization_id,
             case when random() < 0.4 then 'OPEN' else 'CLOSED' end as st, 'OTHER',
             (array['Label does not match the requisition', 'Subject ID missing on the label', 'Image is blurred'])[1 + floor(random() * 3)::int],
             i.uploaded_at + interval '1 day', null, null
      from images i where i.study_id is not null and random() < 0.02;
      insert into queries (object_type, object_id, study_id, case_id, query_status, category, reason_text, opened_at)
      select 'CASE', c.id, c.study_id, c.id, case when random() < 0.3 then 'OPEN' else 'CLOSED' end, 'OTHER',
             'Visit ID does not match the requisition', c.created_at + interval '2 days'
      from cases c where random() < 0.05;
      update queries set closed_at = opened_at + interval '4 days', resolution = 'RESOLVED' where query_status = 'CLOSED';`),
  );

  await step('central readers of read and processed cases', () =>
    random(`
      insert into case_readers (case_id, user_id, assigned_at, read_at)
      select c.id, r.id, c.created_at + interval '5 days',
             case when c.status = 'COMPLETED' then c.created_at + interval '9 days' end
      from cases c
      join lateral (select id from users where username like 'scale-reader%'
                    order by random() + c.id * 0 limit 1 + (c.id % 2)) r on true
      where c.status in ('PROCESSED', 'COMPLETED')`),
  );

  await step('vacuum analyze', async () => {
    for (const table of [
      'studies',
      'cases',
      'images',
      'image_status_counts',
      'queries',
      'case_readers',
      'study_access',
      'users',
    ]) {
      await raw.exec(`vacuum (analyze) ${table}`);
    }
  });
}

async function main(): Promise<void> {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is required (a PostgreSQL database of its own, e.g. lamina_scale)');
  const name = databaseName(url);
  if (name === 'test') throw new Error("refusing the database named 'test': the test suites use it");
  const started = performance.now();
  log(
    `seeding ${name}: ${STUDIES} studies, ${CASES.toLocaleString('en')} cases, ${IMAGES.toLocaleString('en')} images`,
  );
  const database = await openDatabase({ databaseUrl: url, maxConnections: 2 });
  try {
    const applied = await step('migrations', () => migrate(database));
    if (applied.length > 0) log(`applied ${applied.join(', ')}`);
    await step('roles and permissions', () => syncReferenceData(database.db));
    await refuseUnlessEmpty(database);
    await seed(database);
    const counts = await sql<{ images: number; cases: number; queries: number }>`
      select (select count(*) from images)::int as images, (select count(*) from cases)::int as cases,
             (select count(*) from queries)::int as queries`.execute(database.db);
    log(`done in ${((performance.now() - started) / 60_000).toFixed(1)} min: ${JSON.stringify(counts.rows[0])}`);
    log(
      `accounts ${SCALE_STUDY_ADMIN} (StudyAdmin) and ${SCALE_LAB_TECH} (LabTech, 3 studies), password '${SCALE_PASSWORD}'`,
    );
  } finally {
    await database.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
