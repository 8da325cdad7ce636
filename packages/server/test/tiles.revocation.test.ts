import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { roleByName, type ImageView } from '@lamina/domain';
import { processImage } from '../src/modules/processing/processImage.js';
import { login, type Session } from './testApp.js';
import {
  createSlideTestApp,
  createStudy,
  createUploadedImage,
  createUser,
  PASSWORD,
  putUpload,
  WSI_DIR,
  type SlideTestContext,
} from './factories.js';
import { waitFor } from './support/wait.js';

/**
 * Tile tokens stop being honoured within TILE_ACCESS_REFRESH (here 1 s) once their user logs out,
 * is deactivated, loses access to the study or switches the role they work as (issue 10; they used
 * to keep working for their 12-hour lifetime), without a database round trip per tile.
 */
let t: SlideTestContext;
let studyId: number;
let imageId: number;
let admin: Session;
let sysadmin: Session;

beforeAll(async () => {
  t = await createSlideTestApp({ TILE_ACCESS_REFRESH: '1' });
  const db = t.database.db;
  studyId = (await createStudy(db)).id;
  const key = await putUpload(t.app.slides.storage, studyId, path.join(WSI_DIR, 'small.svs'));
  imageId = (await createUploadedImage(db, { studyId, s3Key: key })).id;
  await processImage({ db, storage: t.app.slides.storage, tmpDir: path.join(t.dataDir, 'tmp') }, imageId);
  admin = await login(t.app, (await createUser(db, { globalRoles: ['StudyAdmin'] })).username, PASSWORD);
  sysadmin = await login(
    t.app,
    (await createUser(db, { systemAdmin: true, globalRoles: ['SystemAdmin'] })).username,
    PASSWORD,
  );
}, 60_000);

afterAll(async () => {
  await t.close();
});

/** A lab technician of the study, logged in, with the tile URL the viewer was given. */
async function viewer(extraRoles: { role: 'PM' }[] = []) {
  const user = await createUser(t.database.db, {
    studyRoles: [{ studyId, role: 'LabTech' }, ...extraRoles.map((r) => ({ studyId, role: r.role }))],
  });
  const session = await login(t.app, user.username, PASSWORD);
  const image = (await session.request({ method: 'GET', url: `/api/images/${imageId}` })).json<ImageView>();
  const tile = image.tileUrl!.replace('{z}', '0').replace('{x}', '0').replace('{y}', '0');
  return { user, session, tile };
}

const tileStatus = async (url: string) => (await t.app.inject({ method: 'GET', url })).statusCode;

/** Waits (at most 5 s) for the tile to be refused; returns how long it took. */
async function refusedWithin(url: string): Promise<number> {
  const started = Date.now();
  await waitFor('the tile token to be refused', async () => (await tileStatus(url)) === 403, {
    timeoutMs: 5000,
    everyMs: 100,
  });
  return Date.now() - started;
}

describe('tile tokens follow their grant', () => {
  it('a new session’s token works at once (looked up once, not per tile)', async () => {
    const { tile } = await viewer();
    expect(await tileStatus(tile)).toBe(200);
    expect(await tileStatus(tile)).toBe(200);
  });

  it('logout stops them', async () => {
    const { session, tile } = await viewer();
    expect(await tileStatus(tile)).toBe(200);
    expect((await session.request({ method: 'POST', url: '/api/auth/logout' })).statusCode).toBe(200);
    expect(await refusedWithin(tile)).toBeLessThan(5000);
  });

  it('deactivation stops them', async () => {
    const { user, tile } = await viewer();
    expect(await tileStatus(tile)).toBe(200);
    const response = await sysadmin.request({ method: 'PATCH', url: `/api/users/${user.id}/deactivate`, payload: {} });
    expect(response.statusCode).toBe(200);
    expect(await refusedWithin(tile)).toBeLessThan(5000);
  });

  it('losing access to the study stops them', async () => {
    const { user, tile } = await viewer();
    expect(await tileStatus(tile)).toBe(200);
    const response = await admin.request({
      method: 'PUT',
      url: '/api/users/studies/remove',
      payload: { studyId, userId: user.id, roleId: roleByName('LabTech').id },
    });
    expect(response.statusCode).toBe(200);
    expect(await refusedWithin(tile)).toBeLessThan(5000);
  });

  it('switching the role worked as stops them (the new role may not see the study)', async () => {
    const { session, tile } = await viewer([{ role: 'PM' }]);
    expect(await tileStatus(tile)).toBe(200);
    const response = await session.request({
      method: 'PUT',
      url: '/api/users/workAs',
      payload: { roleId: roleByName('PM').id },
    });
    expect(response.statusCode).toBe(200);
    expect(await refusedWithin(tile)).toBeLessThan(5000);
    // The image asked for again gives a token of the new grant.
    const image = (await session.request({ method: 'GET', url: `/api/images/${imageId}` })).json<ImageView>();
    expect(await tileStatus(image.tileUrl!.replace('{z}', '0').replace('{x}', '0').replace('{y}', '0'))).toBe(200);
  });
});
