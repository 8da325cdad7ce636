import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AI_SOURCE,
  regionMeasures,
  type AnnotationGeometry,
  type AnnotationType,
  MLD_IMPORT_MESSAGES,
  aiLayersResponseSchema,
  mldListResponseSchema,
  type MldRecord,
} from '@lamina/domain';
import { MLD_SAMPLE_PATH, writePixelMld } from '@lamina/test-support/mldWriter';
import { processMldImport } from '../src/commands/mldImport.js';
import { login, type Session } from './testApp.js';
import {
  assignReader,
  createCase,
  createSlideTestApp,
  createStudy,
  createStudyImage,
  createUser,
  PASSWORD,
  type SlideTestContext,
} from './factories.js';
import { parseCsv } from './support/csv.js';

/**
 * Imported AI annotations (issue 17, server): upload and registration, the import job's whole status
 * chain and every ERROR message, the link rules (given image, by name, none, several), bulk insert
 * counts as annotations of source VisioPharm, what readers see of them, replacement and the image's
 * archive, the Annotations tab and its CSV.
 */

let t: SlideTestContext;
let studyId: number;
let caseId: number;
let imageId: number;
const SIZE = { width: 2000, height: 1500 };
const s: Record<string, Session> = {};

async function user(key: string, spec: Parameters<typeof createUser>[1]) {
  const made = await createUser(t.database.db, spec);
  s[key] = await login(t.app, made.username, PASSWORD);
  return made;
}

/** Uploads bytes as an .mld through the signed URL and registers them. */
async function upload(session: Session, name: string, bytes: Uint8Array, imageId?: number) {
  const signed = await session.request({
    method: 'POST',
    url: '/api/mld/get-signed-urls',
    payload: { fileNames: [name] },
  });
  expect(signed.statusCode, signed.body).toBe(200);
  const { s3Key, signedUrl } = signed.json<{ urls: { s3Key: string; signedUrl: string }[] }>().urls[0]!;
  const put = await t.app.inject({
    method: 'PUT',
    url: signedUrl,
    payload: Buffer.from(bytes),
    headers: { 'content-type': 'application/octet-stream' },
  });
  expect(put.statusCode).toBeLessThan(300);
  return session.request({
    method: 'POST',
    url: '/api/mld',
    payload: { name, s3Key, ...(imageId ? { imageId } : {}) },
  });
}

/** Uploads, registers and runs the import job; the file's record afterwards. */
async function importFile(name: string, bytes: Uint8Array, image?: number): Promise<MldRecord> {
  const registered = await upload(s.isc!, name, bytes, image);
  expect(registered.statusCode, registered.body).toBe(201);
  const mld = registered.json<{ mld: MldRecord }>().mld;
  expect(mld.status).toBe('QUEUED');
  await processMldImport({ db: t.database.db, storage: t.app.slides.storage }, mld.mldId);
  return record(mld.mldId);
}

async function record(id: number): Promise<MldRecord> {
  const list = await s.isc!.request({
    method: 'POST',
    url: '/api/imageManagement/annotations',
    payload: { pageSize: 100 },
  });
  const found = mldListResponseSchema.parse(list.json()).results.find((r) => r.mldId === id);
  if (!found) throw new Error(`import ${id} not listed`);
  return found;
}

const slideFile = (over: Partial<Parameters<typeof writePixelMld>[0]> = {}) =>
  writePixelMld({
    size: SIZE,
    imagePath: 'D:\\Scans\\QSlide-Alpha.svs',
    classes: [
      { layer: 'ROI', names: [{ name: 'AI HPF', color: 0x00ff00 }] },
      { layer: 'Label', names: [{ name: 'Eosinophil', color: 0x0000ff }, { name: 'Tissue' }] },
      { layer: 'Annotation', names: [{ name: 'Scale' }] },
    ],
    circles: [
      { x: 500, y: 500, radius: 120 },
      { x: 1500, y: 1000, radius: 120 },
    ],
    polygons: [
      {
        points: [
          [490, 490],
          [510, 490],
          [510, 510],
          [490, 510],
        ],
      },
      {
        points: [
          [100, 100],
          [300, 100],
          [300, 300],
        ],
        classIndex: 2,
      },
      {
        points: [
          [1495, 995],
          [1505, 995],
          [1505, 1005],
        ],
      },
    ],
    polylines: [
      {
        points: [
          [0, 0],
          [0, 200],
        ],
      },
    ],
    ...over,
  });

beforeAll(async () => {
  t = await createSlideTestApp();
  const db = t.database.db;
  studyId = (await createStudy(db, `MLD study ${Date.now()}`)).id;
  const other = (await createStudy(db)).id;
  caseId = (await createCase(db, { studyId, status: 'PROCESSED' })).id;
  imageId = (
    await createStudyImage(db, {
      studyId,
      caseId,
      status: 'READY_FOR_READING',
      width: SIZE.width,
      height: SIZE.height,
      mpp: 0.5,
    })
  ).id;
  await db.updateTable('images').set({ name: 'QSlide-Alpha.svs' }).where('id', '=', imageId).execute();
  await user('isc', { studyRoles: [{ studyId, role: 'ISC' }] });
  await user('labtech', { studyRoles: [{ studyId, role: 'LabTech' }] });
  await user('dm', { studyRoles: [{ studyId, role: 'DM' }] });
  await user('outsider', { studyRoles: [{ studyId: other, role: 'ISC' }] });
  const reader = await user('reader', { studyRoles: [{ studyId, role: 'CR' }] });
  await assignReader(db, { caseId, userId: reader.id });
}, 60_000);

afterAll(async () => {
  await t.close();
});

describe('upload and registration', () => {
  it('takes .mld files only, from who may import, bound to the uploader', async () => {
    const other = await s.isc!.request({
      method: 'POST',
      url: '/api/mld/get-signed-urls',
      payload: { fileNames: ['a.mld', 'results.csv'] },
    });
    expect(other.statusCode).toBe(400);
    expect(other.json().message).toBe(MLD_IMPORT_MESSAGES.notMld('results.csv'));
    const labtech = await s.labtech!.request({
      method: 'POST',
      url: '/api/mld/get-signed-urls',
      payload: { fileNames: ['a.mld'] },
    });
    expect(labtech.statusCode).toBe(403);
    // Another user's key is not theirs to register.
    const signed = await s.isc!.request({
      method: 'POST',
      url: '/api/mld/get-signed-urls',
      payload: { fileNames: ['x.mld'] },
    });
    const { s3Key } = signed.json<{ urls: { s3Key: string }[] }>().urls[0]!;
    const stolen = await s.outsider!.request({ method: 'POST', url: '/api/mld', payload: { name: 'x.mld', s3Key } });
    expect(stolen.statusCode).toBe(404);
    const notUploaded = await s.isc!.request({ method: 'POST', url: '/api/mld', payload: { name: 'x.mld', s3Key } });
    expect(notUploaded.statusCode).toBe(404);
    expect(notUploaded.json().message).toBe(MLD_IMPORT_MESSAGES.uploadNotFound);
    // An image the uploader cannot see is not found.
    const outsiderImage = await upload(s.outsider!, 'y.mld', slideFile(), imageId);
    expect(outsiderImage.statusCode).toBe(404);
  });
});

describe('the import job', () => {
  let first: MldRecord;

  it('QUEUED → COMPLETE: objects become VisioPharm annotations in bulk, counted and audited', async () => {
    first = await importFile('APP7_eosinophils.mld', slideFile(), imageId);
    expect(first).toMatchObject({
      status: 'COMPLETE',
      errorMessage: null,
      appSequenceId: '7',
      numLayers: 3,
      imageId,
      caseId,
      counts: { hpfs: 2, points: 0, regions: 3, lines: 1 },
    });
    const rows = await t.database.db
      .selectFrom('annotations')
      .select(['annotation_type', 'source', 'ai_class_id', 'radius', 'length', 'user_id'])
      .where('mld_file_id', '=', first.mldId)
      .execute();
    expect(rows).toHaveLength(6);
    expect(rows.every((r) => r.source === AI_SOURCE && r.user_id === null && r.ai_class_id !== null)).toBe(true);
    const hpf = rows.find((r) => r.annotation_type === 'HPF');
    expect(hpf?.radius).toBeCloseTo(120, 1);
    expect(rows.find((r) => r.annotation_type === 'LINE')?.length).toBeCloseTo(100, 1); // 200 px at 0.5 µm
    // Regions and HPFs carry their area and perimeter at the slide's 0.5 µm/px (issue 29 item 4).
    const measured = await t.database.db
      .selectFrom('annotations')
      .select(['annotation_type', 'geometry', 'radius', 'radius_x', 'radius_y', 'area', 'perimeter'])
      .where('mld_file_id', '=', first.mldId)
      .execute();
    for (const r of measured) {
      const expected = regionMeasures(
        {
          annotationType: r.annotation_type as AnnotationType,
          geometry: (typeof r.geometry === 'string' ? JSON.parse(r.geometry) : r.geometry) as AnnotationGeometry,
          radius: r.radius,
          radiusX: r.radius_x,
          radiusY: r.radius_y,
        },
        0.5,
      );
      expect(r.area === null, r.annotation_type).toBe(expected.area === null);
      if (expected.area !== null) expect(r.area).toBeCloseTo(expected.area, 6);
      if (expected.perimeter !== null) expect(r.perimeter).toBeCloseTo(expected.perimeter, 6);
    }
    expect(measured.filter((r) => r.area !== null && r.area > 0)).toHaveLength(5); // 2 HPFs, 3 regions
    expect(measured.find((r) => r.annotation_type === 'HPF')?.area).toBeCloseTo(Math.PI * 60 * 60, 0);
    const audit = await t.database.db
      .selectFrom('audit_events')
      .select(['action', 'new_value'])
      .where('entity_type', '=', 'mld_file')
      .where('entity_id', '=', String(first.mldId))
      .orderBy('id')
      .execute();
    expect(audit.map((a) => a.action)).toEqual(['MLD_UPLOADED', 'MLD_IMPORTED']);
    expect(JSON.parse(audit[1]?.new_value ?? '{}')).toMatchObject({ hpfs: 2, regions: 3, lines: 1 });
  });

  it('readers see the AI objects read-only, apart from their own; the viewer knows the import', async () => {
    const ai = await s.reader!.request({ method: 'GET', url: `/api/images/${imageId}/ai-annotations` });
    expect(ai.statusCode).toBe(200);
    const list = ai.json<{ annotations: { id: number; source: string; annotationClassId: number; color: string }[] }>();
    expect(list.annotations).toHaveLength(6);
    expect(list.annotations.every((a) => a.source === AI_SOURCE)).toBe(true);
    const own = await s.reader!.request({ method: 'GET', url: `/api/images/${imageId}/annotations` });
    expect(own.json<{ annotations: unknown[] }>().annotations).toHaveLength(0);
    const iscList = await s.isc!.request({ method: 'GET', url: `/api/images/${imageId}/annotations` });
    expect(iscList.json<{ annotations: unknown[] }>().annotations).toHaveLength(0);
    const layers = aiLayersResponseSchema.parse(
      (await s.reader!.request({ method: 'GET', url: `/api/images/${imageId}/ai-layers` })).json(),
    );
    expect(layers.imports.map((m) => m.mldId)).toEqual([first.mldId]);
    expect(layers.classes.map((c) => [c.name, c.count])).toEqual([
      ['AI HPF', 2],
      ['Eosinophil', 2],
      ['Scale', 1],
      ['Tissue', 1],
    ]);
    expect(layers.classes.find((c) => c.name === 'Eosinophil')?.color).toBe('#FF0000');
    const image = await s.reader!.request({ method: 'GET', url: `/api/images/${imageId}` });
    expect(image.json<{ mldFile: unknown }>().mldFile).toEqual({
      id: first.mldId,
      name: 'APP7_eosinophils.mld',
      appSequenceId: '7',
    });
    // Not editable: deleting one answers 403, for everyone.
    const del = await s.isc!.request({
      method: 'DELETE',
      url: `/api/annotations/${list.annotations[0]!.id}?deleteNested=false`,
    });
    expect(del.statusCode).toBe(403);
    const outsider = await s.outsider!.request({ method: 'GET', url: `/api/images/${imageId}/ai-annotations` });
    expect(outsider.statusCode).toBe(404);
  });

  it('the HPF report lists the AI HPFs, marked AI, only while the image accepts AI annotations', async () => {
    const hpfRows = async () => {
      const csv = await s.isc!.request({ method: 'GET', url: `/api/report/${studyId}/hpf-annotations` });
      expect(csv.statusCode).toBe(200);
      const [header, ...rows] = parseCsv(csv.body.slice(1));
      const source = header?.indexOf('Source') ?? -1;
      const cls = header?.indexOf('HPF Class') ?? -1;
      return rows.filter((r) => r[source] === 'AI').map((r) => r[cls]);
    };
    expect(await hpfRows()).toEqual([]);
    const accept = await s.isc!.request({
      method: 'PATCH',
      url: `/api/images/${imageId}/accept-ai-annotations`,
      payload: { acceptAiAnnotations: true },
    });
    expect(accept.statusCode, accept.body).toBe(200);
    expect(await hpfRows()).toEqual(['AI HPF', 'AI HPF']);
    await s.isc!.request({
      method: 'PATCH',
      url: `/api/images/${imageId}/accept-ai-annotations`,
      payload: { acceptAiAnnotations: false },
    });
  });

  it('links by the [ImageInfo] file name; none or several → ERROR with the name', async () => {
    const byName = await importFile('linked.mld', slideFile({ imagePath: '\\\\scanner\\share\\QSlide-Alpha.svs' }));
    expect(byName).toMatchObject({ status: 'COMPLETE', imageId });
    const none = await importFile('nomatch.mld', slideFile({ imagePath: 'C:\\x\\Nowhere-42.ndpi' }));
    expect(none).toMatchObject({ status: 'ERROR', errorMessage: MLD_IMPORT_MESSAGES.noImageMatches('Nowhere-42') });
    const db = t.database.db;
    for (let i = 0; i < 2; i++) {
      const twin = (await createStudyImage(db, { studyId, status: 'CASE_ASSIGNMENT_PENDING', width: 10, height: 10 }))
        .id;
      await db
        .updateTable('images')
        .set({ name: `Twin-Slide.${i === 0 ? 'svs' : 'tif'}` })
        .where('id', '=', twin)
        .execute();
    }
    const several = await importFile('twins.mld', slideFile({ imagePath: 'Twin-Slide.svs' }));
    expect(several).toMatchObject({
      status: 'ERROR',
      errorMessage: MLD_IMPORT_MESSAGES.severalImagesMatch('Twin-Slide'),
    });
  });

  it('the file’s image size, its field of view and its bytes are checked', async () => {
    const sample = await importFile('ses1_4_Result.mld', readFileSync(MLD_SAMPLE_PATH), imageId);
    expect(sample).toMatchObject({
      status: 'ERROR',
      errorMessage: `Image size 126976×73728 in the file does not match the image (${SIZE.width}×${SIZE.height})`,
    });
    const noFov = await importFile('nofov.mld', slideFile({ withoutImageInfo: true }), imageId);
    expect(noFov.status).toBe('ERROR');
    expect(noFov.errorMessage).toContain('[ImageInfo]');
    const corrupt = slideFile();
    corrupt[8] = 0xff;
    corrupt[9] = 0xff;
    const broken = await importFile('broken.mld', corrupt, imageId);
    expect(broken.status).toBe('ERROR');
    expect(broken.errorMessage).toMatch(/^Invalid \.mld file: .*at byte \d+\)$/);
    const failed = await t.database.db
      .selectFrom('audit_events')
      .select('action')
      .where('entity_id', '=', String(broken.mldId))
      .where('entity_type', '=', 'mld_file')
      .orderBy('id')
      .execute();
    expect(failed.map((a) => a.action)).toEqual(['MLD_UPLOADED', 'MLD_IMPORT_FAILED']);
  });

  it('a newer import of the same image and APP sequence archives the older one; so does archiving the image', async () => {
    const newer = await importFile(
      'APP7 rerun.mld',
      slideFile({ circles: [{ x: 900, y: 900, radius: 100 }] }),
      imageId,
    );
    expect(newer.status).toBe('COMPLETE');
    const older = await record(first.mldId);
    expect(older).toMatchObject({ status: 'ARCHIVED', errorMessage: MLD_IMPORT_MESSAGES.replaced(newer.mldId) });
    const live = await t.database.db
      .selectFrom('annotations')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('mld_file_id', '=', first.mldId)
      .where('deleted_at', 'is', null)
      .executeTakeFirstOrThrow();
    expect(live.n).toBe(0);
    // A different APP sequence stays (the name-linked import has none).
    expect((await record(newer.mldId)).status).toBe('COMPLETE');
    await t.database.db.updateTable('images').set({ status: 'ARCHIVED' }).where('id', '=', imageId).execute();
    expect((await record(newer.mldId)).status).toBe('ARCHIVED');
    await t.database.db.updateTable('images').set({ status: 'READY_FOR_READING' }).where('id', '=', imageId).execute();
  });
});

describe('the Annotations tab', () => {
  it('lists what the caller sees, with search, status filter, paging and CSV', async () => {
    const all = mldListResponseSchema.parse(
      (await s.isc!.request({ method: 'POST', url: '/api/imageManagement/annotations', payload: {} })).json(),
    );
    expect(all.total).toBeGreaterThanOrEqual(8);
    const errors = mldListResponseSchema.parse(
      (
        await s.isc!.request({
          method: 'POST',
          url: '/api/imageManagement/annotations',
          payload: { annotationStatusFilter: ['ERROR'] },
        })
      ).json(),
    );
    expect(errors.results.every((r) => r.status === 'ERROR')).toBe(true);
    expect(errors.results.length).toBeGreaterThanOrEqual(5);
    const search = mldListResponseSchema.parse(
      (
        await s.isc!.request({
          method: 'POST',
          url: '/api/imageManagement/annotations',
          payload: { searchText: 'twins' },
        })
      ).json(),
    );
    expect(search.results.map((r) => r.mldName)).toEqual(['twins.mld']);
    const page = mldListResponseSchema.parse(
      (
        await s.isc!.request({
          method: 'POST',
          url: '/api/imageManagement/annotations',
          payload: { pageSize: 10, page: 1, sort: 'mldName' },
        })
      ).json(),
    );
    expect(page.results.map((r) => r.mldName)).toEqual(
      [...page.results.map((r) => r.mldName)].sort((a, b) => a.localeCompare(b, 'en', { sensitivity: 'base' })),
    );
    const outsider = mldListResponseSchema.parse(
      (await s.outsider!.request({ method: 'POST', url: '/api/imageManagement/annotations', payload: {} })).json(),
    );
    expect(outsider.results.every((r) => r.studyId !== studyId)).toBe(true);
    const csv = await s.isc!.request({
      method: 'POST',
      url: '/api/imageManagement/annotations?reportFormat=csv',
      payload: { annotationStatusFilter: ['COMPLETE', 'ARCHIVED'] },
    });
    expect(csv.statusCode).toBe(200);
    const [header, ...rows] = parseCsv(csv.body.slice(1));
    expect(header?.[0]).toBe('Imported Annotations File');
    expect(rows.some((r) => r[0] === 'APP7_eosinophils.mld' && r[2] === 'Archived')).toBe(true);
  });
});

describe('the Annotations tab without the file-name permission', () => {
  it('does not sort by the hidden image names: the order would tell what the neutral labels hide', async () => {
    const list = async (sort?: string) =>
      mldListResponseSchema
        .parse(
          (
            await s.dm!.request({
              method: 'POST',
              url: '/api/imageManagement/annotations',
              payload: { pageSize: 100, ...(sort ? { sort } : {}) },
            })
          ).json(),
        )
        .results.map((r) => r.mldId);
    // Two imports whose images' names sort against their upload order.
    const db = t.database.db;
    const named = async (name: string, uploadedAt: string) => {
      const image = (await createStudyImage(db, { studyId, status: 'CASE_ASSIGNMENT_PENDING', width: 10, height: 10 }))
        .id;
      await db.updateTable('images').set({ name }).where('id', '=', image).execute();
      await db
        .insertInto('mld_files')
        .values({
          name: `${name}.mld`,
          s3_key: `mld/u0-x-${name}/${name}.mld`,
          size_bytes: 4,
          image_id: image,
          study_id: studyId,
          uploaded_at: new Date(uploadedAt),
          status: 'COMPLETE',
        })
        .execute();
    };
    await named('AAA-SUBJ-0001.svs', '2000-01-01T00:00:00Z');
    await named('ZZZ-SUBJ-0002.svs', '2000-01-02T00:00:00Z');
    const byDefault = await list();
    expect(byDefault.length).toBeGreaterThanOrEqual(2);
    expect(await list('imageName')).toEqual(byDefault);
    expect(await list('-imageName')).toEqual(byDefault);
  });
});

describe('heatmaps', () => {
  it('one without transparency takes its brightness as opacity; one with it keeps it', async () => {
    const sharp = (await import('sharp')).default;
    const { heatmapPng } = await import('../src/commands/mldImport.js');
    // A black image with a white square: the background must become transparent.
    const rgb = Buffer.alloc(64 * 64 * 3);
    for (let y = 16; y < 48; y++) for (let x = 16; x < 48; x++) rgb.fill(255, (y * 64 + x) * 3, (y * 64 + x) * 3 + 3);
    const tiff = await sharp(rgb, { raw: { width: 64, height: 64, channels: 3 } })
      .tiff()
      .toBuffer();
    const png = await heatmapPng(tiff);
    const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
    expect(info.channels).toBe(4);
    expect(data[3]).toBe(0); // corner: transparent
    expect(data[(32 * 64 + 32) * 4 + 3]).toBe(255); // centre: opaque
    const rgba = await sharp(Buffer.alloc(8 * 8 * 4, 128), { raw: { width: 8, height: 8, channels: 4 } })
      .tiff({ compression: 'deflate' })
      .toBuffer();
    const kept = await sharp(await heatmapPng(rgba))
      .raw()
      .toBuffer();
    expect(kept[3]).toBe(128);
  });
});
