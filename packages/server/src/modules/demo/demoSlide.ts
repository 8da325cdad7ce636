import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import type { Db } from '../../platform/db/database.js';
import { recordAudit, SYSTEM_ACTOR } from '../../platform/audit/audit.js';
import { uploadKey } from '../../platform/storage/keys.js';
import type { ObjectStorage } from '../../platform/storage/storage.js';
import { QUEUES, type JobQueue } from '../../platform/jobs/jobQueue.js';
import { DEMO_STUDY_NAME } from './demoSeed.js';

export const DEMO_SLIDE_NAME = 'DEMO-synthetic-HE.tif';
const DEMO_MPP = 0.5;

/** A small deterministic pseudo-random generator, so the demo slide is the same on every machine. */
export function seededRandom(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One blob of tissue of the demo slide, in the drawing's coordinates: a rotated ellipse. */
export interface TissueBlob {
  cx: number;
  cy: number;
  rx: number;
  ry: number;
  /** Rotation, degrees clockwise (SVG's). */
  angle: number;
}

/**
 * The demo slide's drawing, shape by shape, from its seeded generator: each blob of stroma and the
 * SVG of it with its glands and nuclei (without `svg`, the blobs only: the sequence is drawn all the
 * same). The slide's pixels and `demoTissueBlobs` (where the demo reads draw) come from this one
 * sequence.
 */
function tissueShapes(width: number, height: number, svg = true): { blobs: TissueBlob[]; shapes: string[] } {
  const rnd = seededRandom(20_260_101);
  const blobs: TissueBlob[] = [];
  const shapes: string[] = [];
  for (let i = 0; i < 9; i++) {
    const cx = width * (0.15 + 0.7 * rnd());
    const cy = height * (0.15 + 0.7 * rnd());
    const rx = width * (0.08 + 0.12 * rnd());
    const ry = height * (0.08 + 0.12 * rnd());
    const angle = Math.round(rnd() * 180);
    blobs.push({ cx, cy, rx, ry, angle });
    if (svg)
      shapes.push(
        `<ellipse cx="${cx.toFixed(1)}" cy="${cy.toFixed(1)}" rx="${rx.toFixed(1)}" ry="${ry.toFixed(1)}" transform="rotate(${angle} ${cx.toFixed(1)} ${cy.toFixed(1)})" fill="#e8a6c8" fill-opacity="0.85"/>`,
      );
    // glands: rings of purple around a pale lumen
    for (let g = 0; g < 6; g++) {
      const gx = cx + (rnd() - 0.5) * rx * 1.2;
      const gy = cy + (rnd() - 0.5) * ry * 1.2;
      const gr = Math.min(rx, ry) * (0.08 + 0.1 * rnd());
      if (svg)
        shapes.push(
          `<circle cx="${gx.toFixed(1)}" cy="${gy.toFixed(1)}" r="${gr.toFixed(1)}" fill="#f6e7f0" stroke="#6a3d9a" stroke-width="${(gr * 0.35).toFixed(1)}" stroke-opacity="0.8"/>`,
        );
    }
    // nuclei
    for (let n = 0; n < 1200; n++) {
      const a = rnd() * Math.PI * 2;
      const d = Math.sqrt(rnd());
      const nx = cx + Math.cos(a) * rx * d * 0.95;
      const ny = cy + Math.sin(a) * ry * d * 0.95;
      const nr = 1.2 + rnd() * 2.2;
      const opacity = 0.55 + rnd() * 0.4;
      if (svg)
        shapes.push(
          `<circle cx="${nx.toFixed(1)}" cy="${ny.toFixed(1)}" r="${nr.toFixed(1)}" fill="#4b2a7b" fill-opacity="${opacity.toFixed(2)}"/>`,
        );
    }
  }
  return { blobs, shapes };
}

/** The drawing is made at 1/DRAWING_SCALE of the slide's size and scaled up. */
const DRAWING_SCALE = 4;

/**
 * An SVG of tissue-like shapes: pale pink stroma blobs with purple nuclei and glands on white, the
 * colours of an H&E stain. Drawn at a fraction of the final size and scaled up, then textured.
 */
function tissueSvg(width: number, height: number): string {
  const { shapes } = tissueShapes(width, height);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%" fill="#ffffff"/>${shapes.join('')}</svg>`;
}

const blobsBySize = new Map<string, readonly TissueBlob[]>();

/**
 * Where the demo slide of `width` × `height` pixels has tissue: its stroma blobs in full-resolution
 * pixels (y down, as annotations are stored), so demo annotations land on tissue, not on glass.
 */
export function demoTissueBlobs(width = 8000, height = 6000): readonly TissueBlob[] {
  const key = `${width}x${height}`;
  const known = blobsBySize.get(key);
  if (known) return known;
  const sx = width / Math.round(width / DRAWING_SCALE);
  const sy = height / Math.round(height / DRAWING_SCALE);
  const blobs = tissueShapes(Math.round(width / DRAWING_SCALE), Math.round(height / DRAWING_SCALE), false).blobs.map(
    (b) => ({ cx: b.cx * sx, cy: b.cy * sy, rx: b.rx * sx, ry: b.ry * sy, angle: b.angle }),
  );
  blobsBySize.set(key, blobs);
  return blobs;
}

/**
 * Writes the synthetic demo slide (8000×6000 RGB, tiled TIFF, 0.5 µm/px in the resolution tags)
 * to `file`, with sharp only.
 */
export async function writeDemoSlide(file: string, width = 8000, height = 6000): Promise<void> {
  const drawing = await sharp(
    Buffer.from(tissueSvg(Math.round(width / DRAWING_SCALE), Math.round(height / DRAWING_SCALE))),
  )
    .resize(width, height, { kernel: 'cubic' })
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  // Fine texture: cheap deterministic noise, so tiles look like tissue rather than flat colour.
  const rnd = seededRandom(7);
  const data = drawing.data;
  for (let i = 0; i + 2 < data.length; i += 3) {
    const r = data.readUInt8(i);
    const g = data.readUInt8(i + 1);
    const b = data.readUInt8(i + 2);
    if (r > 245 && g > 245) continue; // leave the white background clean
    const n = Math.floor((rnd() - 0.5) * 24);
    data[i] = Math.max(0, Math.min(255, r + n));
    data[i + 1] = Math.max(0, Math.min(255, g + n));
    data[i + 2] = Math.max(0, Math.min(255, b + n));
  }
  await sharp(data, { raw: { width, height, channels: 3 } })
    .tiff({
      tile: true,
      tileWidth: 512,
      tileHeight: 512,
      compression: 'jpeg',
      quality: 90,
      xres: 1000 / DEMO_MPP,
      yres: 1000 / DEMO_MPP,
      resolutionUnit: 'cm',
    })
    .toFile(file);
}

/** The demo study and the uploader the demo slides are uploaded as; null without the demo study. */
export async function demoUploadTarget(db: Db) {
  const study = await db.selectFrom('studies').select('id').where('name', '=', DEMO_STUDY_NAME).executeTakeFirst();
  if (!study) return null;
  const uploader = await db
    .selectFrom('users')
    .select(['id', 'organization_id'])
    .where('username', '=', 'uploader')
    .executeTakeFirst();
  return { studyId: study.id, uploaderId: uploader?.id ?? null, organizationId: uploader?.organization_id ?? null };
}

/** Whether the demo study already holds an image of this name (each demo slide is made once). */
export async function demoImageExists(db: Db, studyId: number, name: string): Promise<boolean> {
  const row = await db
    .selectFrom('images')
    .select('id')
    .where('study_id', '=', studyId)
    .where('name', '=', name)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Stores a generated slide as an upload of the demo study, creates its image row (audited as an
 * upload) and enqueues its processing through the same pipeline as any upload. Returns the image id.
 */
export async function uploadDemoSlide(
  deps: { db: Db; storage: ObjectStorage; jobs: JobQueue },
  target: NonNullable<Awaited<ReturnType<typeof demoUploadTarget>>>,
  slide: { file: string; name: string; accessionNumber: string },
): Promise<number> {
  const { db, storage, jobs } = deps;
  const key = uploadKey(target.studyId, slide.name);
  await storage.write(key, { filePath: slide.file }, 'image/tiff');
  const head = await storage.head(key);
  const id = await db.transaction().execute(async (tx) => {
    const image = await tx
      .insertInto('images')
      .values({
        study_id: target.studyId,
        name: slide.name,
        s3_key: key,
        uploader_id: target.uploaderId,
        organization_id: target.organizationId,
        status: 'PROCESSING',
        processing_status: 'PENDING',
        size_bytes: head?.size ?? null,
        accession_number: slide.accessionNumber,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await recordAudit(tx, SYSTEM_ACTOR, [
      {
        action: 'IMAGE_UPLOADED',
        entityType: 'image',
        entityId: image.id,
        studyId: target.studyId,
        newValue: { name: slide.name, s3Key: key, demo: true },
      },
    ]);
    return image.id;
  });
  await jobs.send(QUEUES.imageProcessing, { imageId: id });
  return id;
}

/**
 * At start with demo data: when the demo study has no image yet, generate the demo slide and upload
 * it (uploadDemoSlide). Returns the image id, or null when nothing was done.
 */
export async function ensureDemoSlide(deps: {
  db: Db;
  storage: ObjectStorage;
  jobs: JobQueue;
}): Promise<number | null> {
  const target = await demoUploadTarget(deps.db);
  if (!target) return null;
  const existing = await deps.db
    .selectFrom('images')
    .select('id')
    .where('study_id', '=', target.studyId)
    .limit(1)
    .executeTakeFirst();
  if (existing) return null;
  const dir = await mkdtemp(path.join(tmpdir(), 'lamina-demo-'));
  try {
    const file = path.join(dir, DEMO_SLIDE_NAME);
    await writeDemoSlide(file);
    return await uploadDemoSlide(deps, target, { file, name: DEMO_SLIDE_NAME, accessionNumber: 'DEMO-0001' });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
