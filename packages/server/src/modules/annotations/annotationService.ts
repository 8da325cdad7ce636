import { sql, type Kysely, type Transaction } from 'kysely';
import {
  ANNOTATION_COLORS,
  ANNOTATION_MESSAGES,
  CLASS_TYPE_OF,
  CREATE_ANNOTATION_PERMISSION,
  HPF_WEIGHT,
  annotationRequestProblem,
  hpfRadiusPx,
  isCeliacStudy,
  isNashStudy,
  parentFinder,
  parentHpfOf,
  xy,
  polylineLengthUm,
  regionMeasures,
  type AnnotationType,
  type AnnotationView,
  type CreateAnnotationRequest,
  type MultilineCategory,
} from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import type { DB } from '../../platform/db/schema.js';
import type { Principal } from '../../platform/auth/principal.js';
import { recordAudit, type Actor, type AuditEvent } from '../../platform/audit/audit.js';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError } from '../../platform/errors.js';

type Tx = Transaction<DB>;

/** Advisory lock class of one image's annotations (with the image id). */
const ANNOTATION_LOCK = 727_014;
/** Rows per INSERT of a bulk insert (an import). */
const INSERT_BATCH = 2000;
/** Up to this many new HPFs, the earlier points are found near each; beyond, all are read once. */
const NEAR_QUERY_MAX = 20;
type Q = Kysely<DB>;

/** A point's new HPF after a create or delete (null: the 'Orphan'). */
export interface Reparented {
  id: number;
  parentId: number | null;
}

/** What the service needs of the image an annotation is drawn on. */
export interface AnnotatedImage {
  id: number;
  studyId: number | null;
  caseId: number | null;
  width: number | null;
  height: number | null;
  mpp: number | null;
  indications: string[];
}

/** Whether `userId`'s annotations on the image's case are locked: they marked the case scored. */
export async function readLocked(db: Q, caseId: number | null, userId: number | null): Promise<boolean> {
  if (caseId === null || userId === null) return false;
  const row = await db
    .selectFrom('case_readers')
    .select('read_at')
    .where('case_id', '=', caseId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return !!row?.read_at;
}

export async function annotatedImage(db: Q, imageId: number): Promise<AnnotatedImage> {
  const row = await db
    .selectFrom('images')
    .leftJoin('studies', 'studies.id', 'images.study_id')
    .select([
      'images.id',
      'images.study_id',
      'images.case_id',
      'images.width',
      'images.height',
      'images.mpp',
      'studies.indications',
    ])
    .where('images.id', '=', imageId)
    .executeTakeFirst();
  if (!row) throw new NotFoundError(ANNOTATION_MESSAGES.notFound);
  return {
    id: row.id,
    studyId: row.study_id,
    caseId: row.case_id,
    width: row.width,
    height: row.height,
    mpp: row.mpp,
    indications: row.indications ?? [],
  };
}

export interface ClassRow {
  id: number;
  study_id: number;
  type: string;
  name: string;
  color: string;
  enabled: boolean;
  deleted: boolean;
}

/** A create request made whole: every field the row stores, computed by the server. */
export type PreparedAnnotation = Pick<
  AnnotationView,
  | 'imageId'
  | 'annotationType'
  | 'geometry'
  | 'annotationClassId'
  | 'multilineCategory'
  | 'text'
  | 'radius'
  | 'radiusX'
  | 'radiusY'
  | 'tilt'
  | 'weight'
  | 'length'
  | 'area'
  | 'perimeter'
> & { color: string };

/**
 * Checks a create request against the image and the study's classes and computes what the server
 * owns: the HPF radius (from the slide's pixel size, doubled for NASH), the length of lines in µm,
 * the area (µm²) and perimeter (µm) of regions (null when the slide records no pixel size),
 * the colour (the class's, else the spec's default), the HPF weight. Throws 400 with the reason.
 */
export function prepareAnnotation(
  request: CreateAnnotationRequest,
  image: AnnotatedImage,
  classes: ReadonlyMap<number, ClassRow>,
  refuse: (reason: string) => Error = (reason) =>
    new BadRequestError(`${ANNOTATION_MESSAGES.unableToCreate}: ${reason}`),
): PreparedAnnotation {
  if (image.width === null || image.height === null) throw refuse(ANNOTATION_MESSAGES.imageHasNoExtent);
  const problem = annotationRequestProblem(request, { width: image.width, height: image.height });
  if (problem) throw refuse(problem);
  const type = request.annotationType;
  const classId = request.annotationClassId ?? null;
  let cls: ClassRow | null = null;
  if (classId !== null) {
    const found = classes.get(classId);
    if (!found || found.deleted || found.study_id !== image.studyId) throw refuse(ANNOTATION_MESSAGES.classNotInStudy);
    if (found.type !== CLASS_TYPE_OF[type]) throw refuse(ANNOTATION_MESSAGES.classWrongType(type));
    if (!found.enabled) throw refuse(ANNOTATION_MESSAGES.classDisabled);
    cls = found;
  }
  if (type === 'MULTILINE' && !isCeliacStudy(image.indications)) throw refuse(ANNOTATION_MESSAGES.multilineNotCeliac);
  const g = request.geometry;
  const defaultColor =
    type === 'HPF'
      ? ANNOTATION_COLORS.hpf
      : type === 'MULTILINE'
        ? ANNOTATION_COLORS.multiline
        : ANNOTATION_COLORS.default;
  const text = request.text?.trim() ? request.text.trim() : null;
  const radius = type === 'HPF' ? hpfRadiusPx(image.mpp, isNashStudy(image.indications)) : null;
  const radiusX = type === 'ELLIPSE' ? (request.radiusX ?? null) : null;
  const radiusY = type === 'ELLIPSE' ? (request.radiusY ?? null) : null;
  return {
    imageId: image.id,
    annotationType: type,
    geometry: g,
    annotationClassId: classId,
    multilineCategory: type === 'MULTILINE' ? (request.multilineCategory ?? null) : null,
    text: type === 'TEXT' || type === 'ELLIPSE' || type === 'HPF' ? text : null,
    color: cls?.color ?? defaultColor,
    radius,
    radiusX,
    radiusY,
    tilt: type === 'ELLIPSE' ? (request.tilt ?? 0) : null,
    weight: type === 'HPF' ? HPF_WEIGHT : null,
    length: g.type === 'LineString' ? polylineLengthUm(g.coordinates, image.mpp) : null,
    ...regionMeasures({ annotationType: type, geometry: g, radius, radiusX, radiusY }, image.mpp),
  };
}

/** The study's classes by id (deleted ones too, to tell 'deleted' from 'another study'). */
export async function studyClasses(db: Q, studyId: number | null): Promise<Map<number, ClassRow>> {
  if (studyId === null) return new Map();
  const rows = await db
    .selectFrom('annotation_classes')
    .select(['id', 'study_id', 'type', 'name', 'color', 'enabled', 'deleted'])
    .where('study_id', '=', studyId)
    .execute();
  return new Map(rows.map((r) => [r.id, r]));
}

/** The live HPFs of one author on one image (the candidates for a point's parent). */
async function ownerHpfs(tx: Tx, imageId: number, userId: number | null, exceptId?: number) {
  let q = tx
    .selectFrom('annotations')
    .select(['id', 'x', 'y', 'radius'])
    .where('image_id', '=', imageId)
    .where('annotation_type', '=', 'HPF')
    .where('deleted_at', 'is', null)
    .where('mld_file_id', 'is', null);
  q = userId === null ? q.where('user_id', 'is', null) : q.where('user_id', '=', userId);
  if (exceptId !== undefined) q = q.where('id', '!=', exceptId);
  const rows = await q.execute();
  return rows.map((r) => ({ id: r.id, centre: [r.x ?? 0, r.y ?? 0], radius: r.radius ?? 0 }));
}

/** The author's live points on the image: inside a circle's bounding box (then checked exactly), or all. */
async function ownerPoints(
  tx: Tx,
  imageId: number,
  userId: number | null,
  near?: { cx: number; cy: number; r: number },
) {
  let q = tx
    .selectFrom('annotations')
    .select(['id', 'x', 'y', 'parent_id'])
    .where('image_id', '=', imageId)
    .where('annotation_type', '=', 'POINT')
    .where('deleted_at', 'is', null)
    .where('mld_file_id', 'is', null);
  if (near)
    q = q
      .where('x', '>=', near.cx - near.r)
      .where('x', '<=', near.cx + near.r)
      .where('y', '>=', near.cy - near.r)
      .where('y', '<=', near.cy + near.r);
  q = userId === null ? q.where('user_id', 'is', null) : q.where('user_id', '=', userId);
  return q.execute();
}

/**
 * The author's live points that HPFs just added (created or restored) may now hold: those near
 * them (one query per HPF, or all the author's points beyond NEAR_QUERY_MAX HPFs) whose parent under
 * `parentOf` differs from the stored one; `skip` are points the caller places itself.
 */
async function pointsToRehome(
  tx: Tx,
  imageId: number,
  userId: number | null,
  hpfs: readonly { centre: readonly number[]; radius: number }[],
  parentOf: (point: readonly number[]) => number | null,
  skip: ReadonlySet<number> = new Set(),
): Promise<Reparented[]> {
  const candidates: Awaited<ReturnType<typeof ownerPoints>> = [];
  if (hpfs.length <= NEAR_QUERY_MAX)
    for (const h of hpfs)
      candidates.push(
        ...(await ownerPoints(tx, imageId, userId, { cx: h.centre[0] ?? 0, cy: h.centre[1] ?? 0, r: h.radius })),
      );
  else candidates.push(...(await ownerPoints(tx, imageId, userId)));
  const seen = new Set<number>(skip);
  const changes: Reparented[] = [];
  for (const p of candidates) {
    if (seen.has(p.id)) continue;
    seen.add(p.id);
    const parent = parentOf([p.x ?? 0, p.y ?? 0]);
    if (parent !== p.parent_id) changes.push({ id: p.id, parentId: parent });
  }
  return changes;
}

/** Writes new parents, grouped by parent (one statement per HPF, not per point). */
async function writeParents(tx: Tx, changes: readonly Reparented[]): Promise<void> {
  const byParent = new Map<number | null, number[]>();
  for (const c of changes) {
    const ids = byParent.get(c.parentId);
    if (ids) ids.push(c.id);
    else byParent.set(c.parentId, [c.id]);
  }
  for (const [parentId, ids] of byParent)
    for (let i = 0; i < ids.length; i += 10_000)
      await tx
        .updateTable('annotations')
        .set({ parent_id: parentId })
        .where('id', 'in', ids.slice(i, i + 10_000))
        .execute();
}

const reparentEvent = (
  image: AnnotatedImage,
  hpfId: number,
  changes: readonly Reparented[],
  why: 'created' | 'deleted' | 'restored',
): AuditEvent => ({
  action: 'ANNOTATION_POINTS_REPARENTED',
  entityType: 'annotation',
  entityId: hpfId,
  studyId: image.studyId,
  field: 'parent_id',
  newValue: JSON.stringify({ hpf: why, points: changes }),
});

/**
 * Annotations: create (validated, computed, audited; a point gets the HPF that holds it, an HPF
 * takes the points it holds), soft delete (an HPF with or without its points; the points left get
 * their next HPF or the Orphan), and the lock of a reader's annotations once their read is scored.
 */
export class AnnotationService {
  constructor(private readonly db: Db) {}

  async create(
    principal: Principal,
    actor: Actor,
    request: CreateAnnotationRequest,
  ): Promise<{ id: number; reparented: Reparented[] }> {
    const image = await annotatedImage(this.db, request.imageId);
    const prepared = prepareAnnotation(request, image, await studyClasses(this.db, image.studyId));
    return this.db.transaction().execute(async (tx) => {
      await this.assertUnlocked(tx, image, principal.id, ANNOTATION_MESSAGES.unableToCreate);
      if (prepared.annotationType === 'MULTILINE')
        await this.assertMultilineFree(tx, image, principal.id, prepared, ANNOTATION_MESSAGES.unableToCreate);
      const { ids, reparented } = await this.insert(tx, principal.id, image, [prepared]);
      const id = ids[0];
      if (id === undefined) throw new Error('The annotation was not inserted');
      await recordAudit(tx, actor, [
        createdEvent(image, id, prepared),
        ...(reparented.length ? [reparentEvent(image, id, reparented, 'created')] : []),
      ]);
      return { id, reparented };
    });
  }

  /**
   * Inserts prepared annotations of one author on one image in the caller's transaction (no audit:
   * the caller writes it). The new HPFs go first, in bulk; then every new point gets the HPF that
   * holds it among the author's HPFs, old and new (parentFinder); then the author's earlier points
   * that a new HPF now holds move to it. Returns the ids in the order of `items`.
   */
  async insert(
    tx: Tx,
    userId: number,
    image: AnnotatedImage,
    items: readonly PreparedAnnotation[],
  ): Promise<{ ids: number[]; reparented: Reparented[] }> {
    // One author's annotations on one image change one at a time: two HPFs created at once would
    // otherwise each miss the other when points choose their parent.
    await sql`select pg_advisory_xact_lock(${ANNOTATION_LOCK}, ${image.id})`.execute(tx);
    const rowOf = (p: PreparedAnnotation, parentId: number | null) => ({
      image_id: image.id,
      annotation_type: p.annotationType,
      annotation_class_id: p.annotationClassId,
      parent_id: parentId,
      source: 'CR',
      geometry: JSON.stringify(p.geometry),
      text: p.text,
      color: p.color,
      radius: p.radius,
      radius_x: p.radiusX,
      radius_y: p.radiusY,
      tilt: p.tilt,
      weight: p.weight,
      length: p.length,
      area: p.area,
      perimeter: p.perimeter,
      multiline_category: p.multilineCategory,
      user_id: userId,
    });
    const bulk = async (rows: ReturnType<typeof rowOf>[]) => {
      const ids: number[] = [];
      for (let i = 0; i < rows.length; i += INSERT_BATCH) {
        const inserted = await tx
          .insertInto('annotations')
          .values(rows.slice(i, i + INSERT_BATCH))
          .returning('id')
          .execute();
        ids.push(...inserted.map((r) => r.id));
      }
      return ids;
    };
    const centreOf = (p: PreparedAnnotation) => xy(p.geometry.type === 'Point' ? p.geometry.coordinates : undefined);

    const ids = new Array<number>(items.length);
    const hpfIndexes = items.flatMap((p, i) => (p.annotationType === 'HPF' ? [i] : []));
    const otherIndexes = items.flatMap((p, i) => (p.annotationType === 'HPF' ? [] : [i]));
    const newHpfIds = await bulk(hpfIndexes.map((i) => rowOf(items[i] as PreparedAnnotation, null)));
    hpfIndexes.forEach((itemIndex, k) => (ids[itemIndex] = newHpfIds[k] ?? 0));
    const newHpfs = hpfIndexes.map((itemIndex, k) => {
      const p = items[itemIndex] as PreparedAnnotation;
      return { id: newHpfIds[k] ?? 0, centre: centreOf(p), radius: p.radius ?? 0 };
    });
    const parentOf = parentFinder([
      ...(await ownerHpfs(tx, image.id, userId)).filter((h) => !newHpfIds.includes(h.id)),
      ...newHpfs,
    ]);

    // The author's points already there that a new HPF may now hold: near it (one HPF), or all.
    const reparented = newHpfs.length > 0 ? await pointsToRehome(tx, image.id, userId, newHpfs, parentOf) : [];
    await writeParents(tx, reparented);

    const otherIds = await bulk(
      otherIndexes.map((i) => {
        const p = items[i] as PreparedAnnotation;
        return rowOf(p, p.annotationType === 'POINT' ? parentOf(centreOf(p)) : null);
      }),
    );
    otherIndexes.forEach((itemIndex, k) => (ids[itemIndex] = otherIds[k] ?? 0));
    return { ids, reparented };
  }

  /** DELETE /api/annotations/{id}?deleteNested: soft; the route's scope found it visible and live. */
  async delete(
    principal: Principal,
    actor: Actor,
    id: number,
    deleteNested: boolean,
  ): Promise<{ deletedIds: number[]; reparented: Reparented[] }> {
    if (!principal.actions.has(CREATE_ANNOTATION_PERMISSION))
      throw new ForbiddenError(`${ANNOTATION_MESSAGES.unableToDelete}: ${ANNOTATION_MESSAGES.notOwner}`);
    return this.db.transaction().execute(async (tx) => {
      const row = await tx
        .selectFrom('annotations')
        .select([
          'id',
          'image_id',
          'annotation_type',
          'user_id',
          'deleted_at',
          'annotation_class_id',
          'parent_id',
          'mld_file_id',
        ])
        .where('id', '=', id)
        .forUpdate()
        .executeTakeFirst();
      // Imported (AI) annotations change only with their import (issue 17).
      if (row?.mld_file_id != null)
        throw new ForbiddenError(`${ANNOTATION_MESSAGES.unableToDelete}: ${ANNOTATION_MESSAGES.importedReadOnly}`);
      if (!row) throw new NotFoundError(ANNOTATION_MESSAGES.notFound);
      if (row.deleted_at)
        throw new ConflictError(`${ANNOTATION_MESSAGES.unableToDelete}: ${ANNOTATION_MESSAGES.alreadyDeleted}`);
      const image = await annotatedImage(tx, row.image_id);
      await this.assertUnlocked(tx, image, row.user_id, ANNOTATION_MESSAGES.unableToDelete);
      await sql`select pg_advisory_xact_lock(${ANNOTATION_LOCK}, ${image.id})`.execute(tx);
      const now = new Date();
      const deletedIds = [id];
      let reparented: Reparented[] = [];
      if (row.annotation_type === 'HPF') {
        const children = await tx
          .selectFrom('annotations')
          .select(['id', 'x', 'y'])
          .where('parent_id', '=', id)
          .where('deleted_at', 'is', null)
          .execute();
        if (deleteNested) deletedIds.push(...children.map((c) => c.id));
        else {
          const others = await ownerHpfs(tx, image.id, row.user_id, id);
          reparented = children.map((c) => ({ id: c.id, parentId: parentHpfOf([c.x ?? 0, c.y ?? 0], others) }));
        }
      }
      for (let i = 0; i < deletedIds.length; i += 10_000)
        await tx
          .updateTable('annotations')
          .set({ deleted_at: now, deleted_by: principal.id, status: 'DELETED' })
          .where('id', 'in', deletedIds.slice(i, i + 10_000))
          .execute();
      await writeParents(tx, reparented);
      const events: AuditEvent[] = deletedIds.map((deleted) => ({
        action: 'ANNOTATION_DELETED',
        entityType: 'annotation',
        entityId: deleted,
        studyId: image.studyId,
        field: 'deleted_at',
        oldValue: deleted === id ? row.annotation_type : 'POINT',
        newValue:
          deleted === id
            ? deleteNested && row.annotation_type === 'HPF'
              ? 'with its points'
              : 'deleted'
            : `with HPF ${id}`,
      }));
      if (reparented.length) events.push(reparentEvent(image, id, reparented, 'deleted'));
      await recordAudit(tx, actor, events);
      return { deletedIds, reparented };
    });
  }

  /**
   * POST /api/annotations/{id}/restore (issue 29: the undo of a delete, the redo of a create): the
   * annotation back under its id, with the points deleted with it (an HPF deleted with its points:
   * its children deleted at the same instant). Only the user who deleted it restores it, and only
   * while the author's read is open; each annotation is checked as a create would be (its class
   * still in the study's list and enabled, a line measurement's class and category still free).
   * Parents follow the one rule: a restored HPF takes the author's points it holds again, a restored
   * point its nearest containing HPF. One ANNOTATION_RESTORED audit row per annotation.
   */
  async restore(
    principal: Principal,
    actor: Actor,
    id: number,
  ): Promise<{ imageId: number; ids: number[]; reparented: Reparented[] }> {
    const failure = ANNOTATION_MESSAGES.unableToRestore;
    return this.db.transaction().execute(async (tx) => {
      const row = await tx
        .selectFrom('annotations')
        .select(RESTORE_FIELDS)
        .where('id', '=', id)
        .forUpdate()
        .executeTakeFirst();
      if (!row) throw new NotFoundError(ANNOTATION_MESSAGES.notFound);
      if (row.mld_file_id != null) throw new ForbiddenError(`${failure}: ${ANNOTATION_MESSAGES.importedReadOnly}`);
      if (!row.deleted_at) throw new ConflictError(`${failure}: ${ANNOTATION_MESSAGES.notDeleted}`);
      if (row.deleted_by !== principal.id)
        throw new ForbiddenError(`${failure}: ${ANNOTATION_MESSAGES.notYourDeletion}`);
      const image = await annotatedImage(tx, row.image_id);
      await this.assertUnlocked(tx, image, row.user_id, failure);
      await sql`select pg_advisory_xact_lock(${ANNOTATION_LOCK}, ${image.id})`.execute(tx);
      const nested =
        row.annotation_type === 'HPF'
          ? await tx
              .selectFrom('annotations')
              .select(RESTORE_FIELDS)
              .where('parent_id', '=', id)
              .where('annotation_type', '=', 'POINT')
              .where('deleted_at', '=', row.deleted_at)
              .orderBy('id')
              .forUpdate()
              .execute()
          : [];
      const rows = [row, ...nested];
      const classes = await studyClasses(tx, image.studyId);
      const refuse = (reason: string) => new BadRequestError(`${failure}: ${reason}`);
      for (const r of rows) {
        const prepared = prepareAnnotation(storedRequest(r), image, classes, refuse);
        if (prepared.annotationType === 'MULTILINE')
          await this.assertMultilineFree(tx, image, r.user_id, prepared, failure);
      }
      const ids = rows.map((r) => r.id);
      await tx
        .updateTable('annotations')
        .set({ deleted_at: null, deleted_by: null, status: 'ACTIVE' })
        .where('id', 'in', ids)
        .execute();

      // Parents, by the rule every create follows, among the author's live HPFs (the restored one too).
      const parentOf = parentFinder(await ownerHpfs(tx, image.id, row.user_id));
      const changes: Reparented[] = [];
      const restoredPoints = rows.filter((r) => r.annotation_type === 'POINT');
      for (const p of restoredPoints) {
        const parent = parentOf([p.x ?? 0, p.y ?? 0]);
        if (parent !== p.parent_id) changes.push({ id: p.id, parentId: parent });
      }
      const reparented =
        row.annotation_type === 'HPF'
          ? await pointsToRehome(
              tx,
              image.id,
              row.user_id,
              [{ centre: [row.x ?? 0, row.y ?? 0], radius: row.radius ?? 0 }],
              parentOf,
              new Set(ids),
            )
          : [];
      await writeParents(tx, [...changes, ...reparented]);

      const events: AuditEvent[] = rows.map((r) => ({
        action: 'ANNOTATION_RESTORED',
        entityType: 'annotation',
        entityId: r.id,
        studyId: image.studyId,
        field: 'deleted_at',
        oldValue: r.annotation_type,
        newValue: r.id === id ? 'restored' : `with HPF ${id}`,
      }));
      if (reparented.length) events.push(reparentEvent(image, id, reparented, 'restored'));
      await recordAudit(tx, actor, events);
      return { imageId: image.id, ids, reparented };
    });
  }

  /** Refuses (409) when the author's read of the image's case is scored. */
  async assertUnlocked(db: Q, image: AnnotatedImage, userId: number | null, failure: string): Promise<void> {
    if (await readLocked(db, image.caseId, userId))
      throw new ConflictError(`${failure}: ${ANNOTATION_MESSAGES.lockedScored}`);
  }

  /** One villus height and one crypt depth per multiline class, per reader and image. */
  private async assertMultilineFree(
    tx: Tx,
    image: AnnotatedImage,
    userId: number | null,
    p: PreparedAnnotation,
    failure: string,
  ) {
    const category = p.multilineCategory;
    if (p.annotationClassId === null || category === null) return;
    const taken = await tx
      .selectFrom('annotations')
      .innerJoin('annotation_classes', 'annotation_classes.id', 'annotations.annotation_class_id')
      .select('annotation_classes.name')
      .where('annotations.image_id', '=', image.id)
      .$if(userId === null, (q) => q.where('annotations.user_id', 'is', null))
      .$if(userId !== null, (q) => q.where('annotations.user_id', '=', userId))
      .where('annotations.annotation_type', '=', 'MULTILINE')
      .where('annotations.deleted_at', 'is', null)
      .where('annotations.annotation_class_id', '=', p.annotationClassId)
      .where('annotations.multiline_category', '=', category)
      .executeTakeFirst();
    if (taken) throw new ConflictError(`${failure}: ${ANNOTATION_MESSAGES.multilineTaken(taken.name, category)}`);
  }
}

/** What restore reads of a deleted annotation: enough to check it as a create and to place its points. */
const RESTORE_FIELDS = [
  'id',
  'image_id',
  'annotation_type',
  'annotation_class_id',
  'multiline_category',
  'geometry',
  'text',
  'radius_x',
  'radius_y',
  'tilt',
  'user_id',
  'parent_id',
  'deleted_at',
  'deleted_by',
  'mld_file_id',
  'x',
  'y',
  'radius',
] as const;

/** A stored annotation as the create request that would make it (restore checks it as a create). */
function storedRequest(r: {
  image_id: number;
  annotation_type: string;
  annotation_class_id: number | null;
  multiline_category: MultilineCategory | null;
  geometry: unknown;
  text: string | null;
  radius_x: number | null;
  radius_y: number | null;
  tilt: number | null;
}): CreateAnnotationRequest {
  const geometry = (
    typeof r.geometry === 'string' ? JSON.parse(r.geometry) : r.geometry
  ) as CreateAnnotationRequest['geometry'];
  const request: CreateAnnotationRequest = {
    imageId: r.image_id,
    annotationType: r.annotation_type as AnnotationType,
    geometry,
  };
  if (r.annotation_class_id !== null) request.annotationClassId = r.annotation_class_id;
  if (r.multiline_category !== null) request.multilineCategory = r.multiline_category;
  if (r.text !== null) request.text = r.text;
  if (r.radius_x !== null) request.radiusX = r.radius_x;
  if (r.radius_y !== null) request.radiusY = r.radius_y;
  if (r.tilt !== null) request.tilt = r.tilt;
  return request;
}

export function createdEvent(image: AnnotatedImage, id: number, p: PreparedAnnotation): AuditEvent {
  return {
    action: 'ANNOTATION_CREATED',
    entityType: 'annotation',
    entityId: id,
    studyId: image.studyId,
    newValue: JSON.stringify({
      imageId: image.id,
      annotationType: p.annotationType,
      annotationClassId: p.annotationClassId,
      multilineCategory: p.multilineCategory,
      geometry: p.geometry,
      text: p.text,
      radius: p.radius,
      radiusX: p.radiusX,
      radiusY: p.radiusY,
      tilt: p.tilt,
      length: p.length,
      area: p.area,
      perimeter: p.perimeter,
    }),
  };
}
