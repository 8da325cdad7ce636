import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { roleByName, type RoleName } from '@lamina/domain';
import type { Db } from '../src/platform/db/database.js';
import { hashPassword } from '../src/platform/auth/passwords.js';
import { insertSession, SessionKeys } from '../src/platform/auth/session.js';
import type { TileGrant } from '../src/platform/tiles/tileToken.js';
import type { ObjectStorage } from '../src/platform/storage/storage.js';
import { uploadKey } from '../src/platform/storage/keys.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.js';
import { loadConfig, type Config } from '../src/platform/config.js';
import type { Database } from '../src/platform/db/database.js';
import { JobQueue, type JobQueueOptions } from '../src/platform/jobs/jobQueue.js';
import type { SlidePipelineOverrides } from '../src/platform/slidePipeline.js';
import { openTestDatabase } from './testApp.js';

export const PASSWORD = 'correct horse battery staple';
let passwordHash: Promise<string> | undefined;

const unique = () => randomBytes(4).toString('hex');

export interface UserSpec {
  username?: string;
  registered?: boolean;
  systemAdmin?: boolean;
  active?: boolean;
  globalRoles?: RoleName[];
  /** Study access: study id → roles. */
  studyRoles?: { studyId: number; role: RoleName }[];
}

export async function createUser(db: Db, spec: UserSpec = {}): Promise<{ id: number; username: string }> {
  passwordHash ??= hashPassword(PASSWORD);
  const username = spec.username ?? `user-${unique()}@example.org`;
  const user = await db
    .insertInto('users')
    .values({
      username,
      first_name: 'Test',
      last_name: username,
      registered: spec.registered ?? true,
      is_system_admin: spec.systemAdmin ?? false,
      active: spec.active ?? true,
      password_hash: await passwordHash,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  for (const role of spec.globalRoles ?? []) {
    await db
      .insertInto('user_roles')
      .values({ user_id: user.id, role_id: roleByName(role).id })
      .execute();
  }
  for (const { studyId, role } of spec.studyRoles ?? []) {
    await db
      .insertInto('study_access')
      .values({ user_id: user.id, study_id: studyId, role_id: roleByName(role).id })
      .execute();
  }
  return { id: user.id, username };
}

export async function createStudy(db: Db, name = `Study ${unique()}`): Promise<{ id: number; name: string }> {
  const study = await db
    .insertInto('studies')
    .values({ name, sponsor: 'Test Sponsor' })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { id: study.id, name };
}

export interface ImageSpec {
  studyId?: number | null;
  name?: string;
  s3Key?: string;
  /** Storage key of the processed pyramid; null while processing. */
  cogKey?: string | null;
  width?: number | null;
  height?: number | null;
  levels?: number | null;
  mpp?: number | null;
  objectivePower?: number | null;
  status?: string;
  processingStatus?: string;
  zStackSize?: number;
}

/** An image row, inserted directly (as the processing worker leaves it when `cogKey` is given). */
export async function createImage(db: Db, spec: ImageSpec = {}): Promise<{ id: number }> {
  const processed = spec.cogKey !== undefined && spec.cogKey !== null;
  return db
    .insertInto('images')
    .values({
      study_id: spec.studyId ?? null,
      name: spec.name ?? `slide-${unique()}.svs`,
      s3_key: spec.s3Key ?? `uploads/test/${unique()}/slide.svs`,
      cog_key: spec.cogKey ?? null,
      width: spec.width ?? null,
      height: spec.height ?? null,
      levels: spec.levels ?? null,
      mpp: spec.mpp ?? null,
      objective_power: spec.objectivePower ?? null,
      status: spec.status ?? (processed ? 'CASE_ASSIGNMENT_PENDING' : 'PROCESSING'),
      processing_status: spec.processingStatus ?? (processed ? 'SUCCESS' : 'PENDING'),
      z_stack_size: spec.zStackSize ?? 1,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
}

// --- trial data (issue 4: study counts, annotation classes) -----------------------------------

export async function createOrganization(db: Db, name = `Org ${unique()}`): Promise<{ id: number; name: string }> {
  const org = await db
    .insertInto('organizations')
    .values({ name, group_email: null })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { id: org.id, name };
}

/** An image in a study, optionally in a case, for the studies-list counts. */
export interface StudyImageSpec {
  studyId: number | null;
  caseId?: number | null;
  status?: string;
  uploadedAt?: Date;
  uploaderId?: number | null;
  /** A processed slide's size and pixel size (µm), for annotations. */
  width?: number;
  height?: number;
  mpp?: number | null;
}

export async function createStudyImage(db: Db, spec: StudyImageSpec): Promise<{ id: number }> {
  const id = unique();
  return db
    .insertInto('images')
    .values({
      study_id: spec.studyId,
      case_id: spec.caseId ?? null,
      name: `slide-${id}.svs`,
      s3_key: `uploads/${id}.svs`,
      status: spec.status ?? 'CASE_ASSIGNMENT_PENDING',
      uploader_id: spec.uploaderId ?? null,
      ...(spec.uploadedAt && { uploaded_at: spec.uploadedAt }),
      ...(spec.width !== undefined && { width: spec.width, height: spec.height ?? spec.width, mpp: spec.mpp ?? null }),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
}

export async function createCase(db: Db, spec: { studyId: number; status?: string }): Promise<{ id: number }> {
  return db
    .insertInto('cases')
    .values({ study_id: spec.studyId, status: spec.status ?? 'PENDING_LAB_QC', subject_id: `S-${unique()}` })
    .returning('id')
    .executeTakeFirstOrThrow();
}

/** Assigns a reader to a case; `read` marks it scored. */
export async function assignReader(db: Db, spec: { caseId: number; userId: number; read?: boolean }): Promise<void> {
  await db
    .insertInto('case_readers')
    .values({ case_id: spec.caseId, user_id: spec.userId, read_at: spec.read ? new Date() : null })
    .execute();
}

export async function createQuery(
  db: Db,
  spec: {
    studyId: number;
    status?: 'OPEN' | 'CLOSED';
    resolution?: 'RESOLVED' | 'UNRESOLVABLE' | null;
    objectId?: number;
  },
): Promise<{ id: number }> {
  return db
    .insertInto('queries')
    .values({
      object_type: 'IMAGE',
      object_id: spec.objectId ?? 1,
      study_id: spec.studyId,
      query_status: spec.status ?? 'OPEN',
      resolution: spec.resolution ?? null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
}

export async function createAnnotationClass(
  db: Db,
  spec: {
    studyId: number;
    type?: 'HPF' | 'POINT' | 'FREEHAND' | 'MULTILINE';
    name?: string;
    color?: string;
    sortOrder?: number;
  },
): Promise<{ id: number }> {
  return db
    .insertInto('annotation_classes')
    .values({
      study_id: spec.studyId,
      type: spec.type ?? 'POINT',
      name: spec.name ?? `Class ${unique()}`,
      color: spec.color ?? '#87FF01',
      sort_order: spec.sortOrder ?? 0,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
}

export async function createAnnotation(
  db: Db,
  spec: { imageId: number; classId: number; type?: string; deleted?: boolean; userId?: number | null },
): Promise<{ id: number }> {
  return db
    .insertInto('annotations')
    .values({
      image_id: spec.imageId,
      annotation_class_id: spec.classId,
      annotation_type: spec.type ?? 'POINT',
      geometry: JSON.stringify({ type: 'Point', coordinates: [10, 20] }),
      user_id: spec.userId ?? null,
      deleted_at: spec.deleted ? new Date() : null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
}

// --- slide pipeline (issue 3) ---------------------------------------------------------------

/** The shared test slides (../shared/testdata/wsi beside the repository). */
export const WSI_DIR = fileURLToPath(new URL('../../../../shared/testdata/wsi/', import.meta.url));

/** Stores a local file as an upload of the study (as the browser's PUT would); returns its key. */
export async function putUpload(
  storage: ObjectStorage,
  studyId: number,
  file: string,
  fileName = path.basename(file),
): Promise<string> {
  const key = uploadKey(studyId, fileName);
  await storage.write(key, { filePath: file });
  return key;
}

/** An image row for an upload, as POST /api/images creates it (status PROCESSING, processing PENDING). */
export async function createUploadedImage(
  db: Db,
  spec: { studyId: number | null; s3Key: string; name?: string; caseId?: number | null },
): Promise<{ id: number }> {
  return db
    .insertInto('images')
    .values({
      study_id: spec.studyId,
      case_id: spec.caseId ?? null,
      name: spec.name ?? path.basename(spec.s3Key),
      s3_key: spec.s3Key,
      status: 'PROCESSING',
      processing_status: 'PENDING',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
}

export interface SlideTestContext {
  app: FastifyInstance;
  database: Database;
  config: Config;
  /** DATA_DIR of this app (local storage under storage/), removed on close. */
  dataDir: string;
  close(): Promise<void>;
}

/**
 * An app with the slide pipeline on a temporary DATA_DIR (its own local storage), a real database
 * (PGlite or TEST_DATABASE_URL) and optional job-queue timings or service overrides.
 */
export async function createSlideTestApp(
  env: Record<string, string> = {},
  options: { jobs?: JobQueueOptions; slides?: (database: Database, config: Config) => SlidePipelineOverrides } = {},
): Promise<SlideTestContext> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'lamina-slides-'));
  const { database, drop } = await openTestDatabase();
  const config = loadConfig({
    DEMO: 'false',
    SESSION_SECRET: 'test-secret',
    WEB_DIST: '/nonexistent',
    DATA_DIR: dataDir,
    QUERY_REMINDER_CRON: 'off',
    ...env,
  });
  const jobs = new JobQueue(database, await databaseUrlOf(database), {
    pollingIntervalSeconds: 0.5,
    retryDelaySeconds: 1,
    ...options.jobs,
  });
  const app = await buildApp({ config, database, slides: { jobs, ...options.slides?.(database, config) } });
  await app.ready();
  return {
    app,
    database,
    config,
    dataDir,
    async close() {
      await app.close();
      await database.close();
      await drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** The connection URL of a PostgreSQL test database (pg-boss opens its own pool on it, as with DATABASE_URL). */
async function databaseUrlOf(database: Database): Promise<string | undefined> {
  const base = process.env.TEST_DATABASE_URL;
  if (!base || database.kind !== 'postgres') return undefined;
  const [row] = await database.raw.query<{ name: string }>('select current_database() as name');
  const url = new URL(base);
  url.pathname = `/${row?.name ?? ''}`;
  return url.toString();
}

interface S3rverInstance {
  run(): Promise<{ address: string; port: number }>;
  close(): Promise<void>;
}
type S3rverConstructor = new (options: Record<string, unknown>) => S3rverInstance;

/**
 * A real S3-protocol server (s3rver) on a random loopback port over a temporary folder, with one
 * bucket; the env of an app that stores there, and the options of an S3Storage.
 */
export async function startS3Server(bucket = 'lamina-test'): Promise<{
  endpoint: string;
  bucket: string;
  env: Record<string, string>;
  options: {
    bucket: string;
    region: string;
    endpoint: string;
    forcePathStyle: boolean;
    accessKeyId: string;
    secretAccessKey: string;
  };
  close(): Promise<void>;
}> {
  const directory = await mkdtemp(path.join(tmpdir(), 'lamina-s3-'));
  const S3rver = createRequire(import.meta.url)('s3rver') as S3rverConstructor;
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: bucket }],
  });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    bucket,
    env: {
      STORAGE: 's3',
      S3_ENDPOINT: endpoint,
      S3_BUCKET: bucket,
      S3_REGION: 'us-east-1',
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
      S3_FORCE_PATH_STYLE: 'true',
    },
    options: {
      bucket,
      region: 'us-east-1',
      endpoint,
      forcePathStyle: true,
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
    },
    async close() {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/** SHA-256 of a local file, streamed. */
export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * A user with a live session, as a tile token is granted to (TileGrant): tile servers honour a
 * token while its session lives and the user's access generation is unchanged.
 */
export async function createTileGrant(db: Db, secret: string): Promise<TileGrant> {
  const user = await createUser(db);
  const tokens = new SessionKeys(secret).issue();
  await insertSession(db, user.id, tokens);
  return { userId: user.id, generation: 0, sessionId: tokens.sessionId };
}

/** A complete, valid POST /api/studies body (a Crohn's study with one point class); `over` replaces fields. */
export function studyCreateBody(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: `Study ${unique()}`,
    sponsor: null,
    protocolIds: [],
    visitIds: ['V1'],
    labVisitIds: ['L1'],
    indications: ['CROHNS_DISEASE'],
    segments: 1,
    anatomicalSegments: ['Ileum'],
    modality: ['ENDOSCOPY'],
    onHold: false,
    onHoldReason: null,
    hpfClasses: [],
    pointClasses: [{ name: 'Neutrophil', color: '#87FF01', sortOrder: 0, enabled: true }],
    freehandClasses: [],
    multilineClasses: [],
    ...over,
  };
}
