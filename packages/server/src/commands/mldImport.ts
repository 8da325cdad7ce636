import sharp from 'sharp';
import { sql, type Transaction } from 'kysely';
import {
  AI_SOURCE,
  ANNOTATION_LIMITS,
  MLD_IMPORT_MESSAGES,
  VIEW_ALL_STUDIES,
  imageBaseName,
  regionMeasures,
  type AnnotationType,
} from '@lamina/domain';
import type { Db } from '../platform/db/database.js';
import type { DB } from '../platform/db/schema.js';
import type { ObjectStorage } from '../platform/storage/storage.js';
import { STORAGE_KEY_IN_MESSAGE, withoutStorageKeys } from '../platform/storage/keysInText.js';
import { recordAudit, SYSTEM_ACTOR, type Actor, type AuditEvent } from '../platform/audit/audit.js';
import { loadPrincipal } from '../platform/auth/principal.js';
import { visibleStudies } from '../platform/rbac/studyScope.js';
import { parseMld } from '../modules/mld/mldParser.js';
import { checkImageSize, placeMld, type MldPlacedObject } from '../modules/mld/mldCoordinates.js';
import { MldParseError } from '../modules/mld/mldTypes.js';
import { QUEUES, type JobQueue } from '../platform/jobs/jobQueue.js';

type Tx = Transaction<DB>;

export const IMPORT_ACTOR: Actor = { ...SYSTEM_ACTOR, username: 'worker' };

/** An import that cannot be done: the file's ERROR status and message. */
export class MldImportError extends Error {
  override readonly name = 'MldImportError';
}

export interface MldImportDeps {
  db: Db;
  storage: ObjectStorage;
  log?: { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void } | undefined;
}

export interface ImportCounts {
  hpfs: number;
  points: number;
  regions: number;
  lines: number;
}

/** The annotation an object becomes (docs/MLD.md "Import and linking"), or null when it is left out. */
function annotationTypeOf(o: MldPlacedObject): AnnotationType | null {
  switch (o.kind) {
    case 'circle':
      return 'HPF';
    case 'ellipse':
      return 'ELLIPSE';
    case 'polygon':
    case 'rectangle':
    case 'square':
      return 'FREEHAND';
    case 'polyline':
    case 'line':
      return 'LINE';
    case 'text':
      return o.text.trim() === '' ? 'POINT' : 'TEXT';
  }
}

const countKey: Record<AnnotationType, keyof ImportCounts | null> = {
  HPF: 'hpfs',
  POINT: 'points',
  TEXT: 'points',
  FREEHAND: 'regions',
  ELLIPSE: 'regions',
  LINE: 'lines',
  MULTILINE: 'lines',
};

function lengthPx(points: readonly [number, number][]): number {
  let total = 0;
  for (let i = 1; i < points.length; i++) {
    const a = points[i - 1];
    const b = points[i];
    if (a && b) total += Math.hypot(b[0] - a[0], b[1] - a[1]);
  }
  return total;
}

/** The image the file is for: the one given, or the one its [ImageInfo] names among those the uploader sees. */
async function linkedImage(
  db: Db,
  mld: { image_id: number | null; uploader_id: number | null },
  namedInFile: string | null,
): Promise<{ id: number; study_id: number | null; width: number | null; height: number | null; mpp: number | null }> {
  const columns = ['images.id', 'images.study_id', 'images.width', 'images.height', 'images.mpp'] as const;
  if (mld.image_id !== null) {
    const row = await db
      .selectFrom('images')
      .select(columns)
      .where('id', '=', mld.image_id)
      .where('status', '!=', 'ARCHIVED')
      .executeTakeFirst();
    if (!row) throw new MldImportError(MLD_IMPORT_MESSAGES.imageArchived);
    return row;
  }
  const name = namedInFile?.trim() ?? '';
  if (name === '') throw new MldImportError(MLD_IMPORT_MESSAGES.noImageMatches('(no image name in the file)'));
  const uploader = mld.uploader_id === null ? null : await loadPrincipal(db, mld.uploader_id);
  if (!uploader) throw new MldImportError(MLD_IMPORT_MESSAGES.noImageMatches(name));
  let query = db
    .selectFrom('images')
    .select(columns)
    .where('images.status', '!=', 'ARCHIVED')
    // The image's file name without its extension (docs/MLD.md: the [ImageInfo] path's file name).
    .where(sql<string>`lower(regexp_replace(images.name, '\\.[^.]*$', ''))`, '=', name.toLowerCase())
    .limit(2);
  if (!uploader.actions.has(VIEW_ALL_STUDIES))
    query = query.where(
      'images.study_id',
      'in',
      db.selectFrom('studies').select('studies.id').where(visibleStudies(uploader)),
    );
  const rows = await query.execute();
  if (rows.length === 0) throw new MldImportError(MLD_IMPORT_MESSAGES.noImageMatches(name));
  if (rows.length > 1) throw new MldImportError(MLD_IMPORT_MESSAGES.severalImagesMatch(name));
  return rows[0] as (typeof rows)[number];
}

/** The AI classes of the study for these names, made when new (one per name and study). */
async function aiClasses(tx: Tx, studyId: number, classes: Map<string, string | null>): Promise<Map<string, number>> {
  const ids = new Map<string, number>();
  for (const [name, color] of classes) {
    await tx
      .insertInto('ai_classes')
      .values({ study_id: studyId, name, color })
      .onConflict((oc) => oc.expression(sql`study_id, lower(name)`).doNothing())
      .execute();
    const row = await tx
      .selectFrom('ai_classes')
      .select('id')
      .where('study_id', '=', studyId)
      .where(sql<string>`lower(name)`, '=', name.toLowerCase())
      .executeTakeFirstOrThrow();
    ids.set(name, row.id);
  }
  return ids;
}

/**
 * A heatmap as the viewer's overlay: a PNG of at most 4 096 px a side. One without transparency
 * (plain RGB or grey, as a probability map often is) takes its brightness as its opacity, so its
 * dark background does not cover the slide (docs/MLD.md: best effort).
 */
export async function heatmapPng(tiff: Buffer): Promise<Buffer> {
  const resized = sharp(tiff, { limitInputPixels: 100_000_000 }).resize({
    width: 4096,
    height: 4096,
    fit: 'inside',
    withoutEnlargement: true,
  });
  const { hasAlpha } = await sharp(tiff, { limitInputPixels: 100_000_000 }).metadata();
  if (hasAlpha) return resized.png().toBuffer();
  const rgb = await resized.clone().toColourspace('srgb').removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const alpha = await sharp(rgb.data, { raw: rgb.info }).greyscale().raw().toBuffer();
  return sharp(rgb.data, { raw: rgb.info })
    .joinChannel(alpha, { raw: { width: rgb.info.width, height: rgb.info.height, channels: 1 } })
    .png()
    .toBuffer();
}

/** The class name of an object: its [LayerConfigs] name, else the layer's name and the index. */
const classNameOf = (o: MldPlacedObject) => o.className?.trim() || `${o.layerName} ${o.classIndex}`;

/**
 * One import (the pg-boss job of an .mld file): PROCESSING, then parse, link to its image, check
 * the sizes, place the objects and insert them as annotations of source VisioPharm in bulk, store
 * the heatmap, archive the import it replaces — COMPLETE, with one audit row and the counts. Anything
 * the file is to blame for ends in ERROR with the message (audited); nothing half-imported remains.
 * Other errors (storage, database) are thrown for pg-boss to retry.
 */
export async function processMldImport(deps: MldImportDeps, mldId: number): Promise<void> {
  const { db, storage } = deps;
  const mld = await db.selectFrom('mld_files').selectAll().where('id', '=', mldId).executeTakeFirst();
  if (!mld || mld.status === 'COMPLETE' || mld.status === 'ARCHIVED' || mld.status === 'ERROR') return;
  await db
    .updateTable('mld_files')
    .set({ status: 'PROCESSING', updated_at: new Date() })
    .where('id', '=', mldId)
    .execute();
  const bytes = await storage.readRange(mld.s3_key, 0, mld.size_bytes);
  try {
    const file = parseMld(bytes);
    const image = await linkedImage(
      db,
      mld,
      file.imageInfo?.imageName ?? imageBaseName(file.imageInfo?.imagePath ?? ''),
    );
    if (image.study_id === null) throw new MldImportError(MLD_IMPORT_MESSAGES.noImageMatches(mld.name));
    if (image.width !== null && image.height !== null)
      checkImageSize(file.imageInfo, { width: image.width, height: image.height });
    const placement = placeMld(file);
    const mpp = image.mpp;
    const objects = placement.layers.flatMap((l) => l.objects);
    const kept = objects.filter((o) => {
      if (o.classIndex === 0 || !o.insideImage) return false;
      const type = annotationTypeOf(o);
      if (type === 'FREEHAND' && o.geometry.type === 'Polygon')
        return (o.geometry.coordinates[0]?.length ?? 0) <= ANNOTATION_LIMITS.freehandMaxVertices;
      return type !== null;
    });
    const classes = new Map<string, string | null>();
    for (const o of kept) if (!classes.has(classNameOf(o))) classes.set(classNameOf(o), o.color);
    let heatmapKey: string | null = null;
    const heatmap = file.layerImages[0];
    if (heatmap && heatmap.format !== 'unknown') {
      try {
        const png = await heatmapPng(
          Buffer.from(heatmap.bytes.buffer, heatmap.bytes.byteOffset, heatmap.bytes.byteLength),
        );
        heatmapKey = `mld/imports/${mldId}/heatmap.png`;
        await storage.delete(heatmapKey).catch(() => undefined);
        await storage.write(heatmapKey, png, 'image/png');
      } catch (error) {
        deps.log?.warn({ err: error, mldId }, 'the .mld heatmap could not be read; imported without it');
        heatmapKey = null;
      }
    }
    const counts: ImportCounts = { hpfs: 0, points: 0, regions: 0, lines: 0 };
    await db.transaction().execute(async (tx) => {
      const current = await tx
        .selectFrom('mld_files')
        .select('status')
        .where('id', '=', mldId)
        .forUpdate()
        .executeTakeFirst();
      if (current?.status !== 'PROCESSING') return;
      const classIds = await aiClasses(tx, image.study_id as number, classes);
      const rows = kept.map((o) => {
        const type = annotationTypeOf(o) as AnnotationType;
        const key = countKey[type];
        if (key) counts[key]++;
        const line = o.geometry.type === 'LineString' ? o.geometry.coordinates : null;
        return {
          type,
          classId: classIds.get(classNameOf(o)) ?? null,
          color: o.color,
          geometry: JSON.stringify(o.geometry),
          radius: type === 'HPF' ? o.radius : null,
          radiusX: type === 'ELLIPSE' ? o.radiusX : null,
          radiusY: type === 'ELLIPSE' ? o.radiusY : null,
          // The domain's tilt is in degrees, +90 as the viewer sends it (doc 3 §7).
          tilt: type === 'ELLIPSE' && o.rotation !== null ? (o.rotation * 180) / Math.PI + 90 : null,
          length: line && mpp !== null ? lengthPx(line) * mpp : null,
          ...regionMeasures(
            {
              annotationType: type,
              geometry: o.geometry,
              radius: type === 'HPF' ? o.radius : null,
              radiusX: type === 'ELLIPSE' ? o.radiusX : null,
              radiusY: type === 'ELLIPSE' ? o.radiusY : null,
            },
            mpp,
          ),
          text: type === 'TEXT' ? o.text.slice(0, ANNOTATION_LIMITS.textMaxLength) : null,
        };
      });
      for (let i = 0; i < rows.length; i += 2000) {
        const batch = rows.slice(i, i + 2000);
        const col = <K extends keyof (typeof batch)[number]>(k: K) => batch.map((r) => r[k]);
        await sql`
          insert into annotations (image_id, annotation_type, ai_class_id, color, geometry, radius, radius_x,
            radius_y, tilt, length, area, perimeter, text, source, mld_file_id)
          select ${image.id}, t.type, t.class_id, t.color, t.geometry::jsonb, t.radius, t.radius_x, t.radius_y,
                 t.tilt, t.length, t.area, t.perimeter, t.text, ${AI_SOURCE}, ${mldId}
          from unnest(${col('type')}::text[], ${col('classId')}::int[], ${col('color')}::text[],
                      ${col('geometry')}::text[], ${col('radius')}::float8[], ${col('radiusX')}::float8[],
                      ${col('radiusY')}::float8[], ${col('tilt')}::float8[], ${col('length')}::float8[],
                      ${col('area')}::float8[], ${col('perimeter')}::float8[], ${col('text')}::text[])
            as t(type, class_id, color, geometry, radius, radius_x, radius_y, tilt, length, area, perimeter, text)`.execute(
          tx,
        );
      }
      // A point's HPF: the AI HPF of this import whose circle holds it.
      await sql`
        update annotations p set parent_id = (
          select h.id from annotations h
          where h.mld_file_id = ${mldId} and h.annotation_type = 'HPF'
            and (p.x - h.x) ^ 2 + (p.y - h.y) ^ 2 <= h.radius ^ 2
          order by (p.x - h.x) ^ 2 + (p.y - h.y) ^ 2, h.id limit 1)
        where p.mld_file_id = ${mldId} and p.annotation_type = 'POINT'`.execute(tx);
      const events: AuditEvent[] = [];
      // A newer import of the same image and APP sequence replaces the older one.
      const replaced = await tx
        .updateTable('mld_files')
        .set({ status: 'ARCHIVED', error_message: MLD_IMPORT_MESSAGES.replaced(mldId), updated_at: new Date() })
        .where('image_id', '=', image.id)
        .where('id', '!=', mldId)
        .where('status', '=', 'COMPLETE')
        .where(sql<boolean>`app_sequence_id is not distinct from ${mld.app_sequence_id}`)
        .returning('id')
        .execute();
      if (replaced.length > 0)
        await tx
          .updateTable('annotations')
          .set({ deleted_at: new Date() })
          .where(
            'mld_file_id',
            'in',
            replaced.map((r) => r.id),
          )
          .where('deleted_at', 'is', null)
          .execute();
      for (const r of replaced)
        events.push({
          action: 'MLD_IMPORT_ARCHIVED',
          entityType: 'mld_file',
          entityId: r.id,
          studyId: image.study_id,
          field: 'status',
          oldValue: 'COMPLETE',
          newValue: 'ARCHIVED',
          reason: MLD_IMPORT_MESSAGES.replaced(mldId),
        });
      await tx
        .updateTable('mld_files')
        .set({
          status: 'COMPLETE',
          image_id: image.id,
          study_id: image.study_id,
          num_layers: file.layers.length,
          counts: JSON.stringify(counts),
          heatmap_key: heatmapKey,
          heatmap_name: heatmapKey ? (heatmap?.name ?? null) : null,
          error_message: null,
          completed_at: new Date(),
          updated_at: new Date(),
        })
        .where('id', '=', mldId)
        .execute();
      events.push({
        action: 'MLD_IMPORTED',
        entityType: 'mld_file',
        entityId: mldId,
        studyId: image.study_id,
        newValue: {
          imageId: image.id,
          layers: file.layers.length,
          ...counts,
          leftOut: objects.length - kept.length,
          heatmap: heatmapKey !== null,
        },
      });
      await recordAudit(tx, IMPORT_ACTOR, events);
    });
    deps.log?.info({ mldId, imageId: image.id, ...counts }, '.mld imported');
  } catch (error) {
    if (error instanceof MldParseError || error instanceof MldImportError) {
      await failImport(db, mldId, error.message);
      return;
    }
    throw error;
  }
}

/** ERROR with a message (naming no storage key), audited; a finished import is left alone. */
export async function failImport(db: Db, mldId: number, error: string): Promise<void> {
  const message = withoutStorageKeys(error, STORAGE_KEY_IN_MESSAGE);
  await db.transaction().execute(async (tx) => {
    const row = await tx
      .selectFrom('mld_files')
      .select(['status', 'study_id'])
      .where('id', '=', mldId)
      .forUpdate()
      .executeTakeFirst();
    if (!row || row.status === 'COMPLETE' || row.status === 'ARCHIVED') return;
    await tx
      .updateTable('mld_files')
      .set({ status: 'ERROR', error_message: message.slice(0, 2000), updated_at: new Date() })
      .where('id', '=', mldId)
      .execute();
    await recordAudit(tx, IMPORT_ACTOR, [
      {
        action: 'MLD_IMPORT_FAILED',
        entityType: 'mld_file',
        entityId: mldId,
        studyId: row.study_id,
        field: 'status',
        oldValue: row.status,
        newValue: 'ERROR',
        reason: message.slice(0, 1000),
      },
    ]);
  });
}

/**
 * Worker processes: one import at a time from the mld-import queue. pg-boss retries a job that
 * throws (storage or database trouble); the last attempt's failure ends the import in ERROR. A job
 * whose worker died (killed mid-import) stops sending heartbeats: the process's reaper, shared with
 * every job kind, gives it back to the queue (the import runs again from its PROCESSING state) or,
 * out of retries, ends the import in ERROR with a message — within `staleAfterSeconds` (default
 * 30) and one reaper round, not after pg-boss's expiry.
 */
export async function startMldWorker(
  deps: MldImportDeps & { jobs: JobQueue; staleAfterSeconds?: number | undefined },
): Promise<{ stop(): Promise<void> }> {
  const id = await deps.jobs.work<{ mldId: number }>(
    QUEUES.mldImport,
    async (job) => {
      const mldId = mldIdOf(job.data);
      if (mldId === null) return;
      try {
        await processMldImport(deps, mldId);
      } catch (error) {
        if (job.retryCount >= job.retryLimit) {
          await failImport(deps.db, mldId, error instanceof Error ? error.message : MLD_IMPORT_MESSAGES.workerStopped);
          return;
        }
        throw error;
      }
    },
    {
      onReaped: async (job) => {
        const mldId = mldIdOf(job.data);
        if (job.state === 'failed' && mldId !== null)
          await failImport(deps.db, mldId, MLD_IMPORT_MESSAGES.workerStopped);
      },
    },
  );
  await deps.jobs.startReaper(deps.staleAfterSeconds ?? 30, deps.log ? { log: deps.log } : {});
  return { stop: () => deps.jobs.offWork(id) };
}

/** The import a job is for (a job that is not ours: null, completed as a no-op). */
function mldIdOf(data: unknown): number | null {
  const mldId: unknown = (data as { mldId?: unknown } | null)?.mldId;
  return typeof mldId === 'number' && Number.isSafeInteger(mldId) && mldId > 0 ? mldId : null;
}
