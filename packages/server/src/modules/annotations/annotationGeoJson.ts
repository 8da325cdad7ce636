import { sql, type Kysely } from 'kysely';
import {
  ANNOTATION_LIMITS,
  ANNOTATION_MESSAGES,
  CLASS_TYPE_OF,
  createAnnotationRequestSchema,
  geoJsonFeatureSchema,
  hexToRgb,
  type AnnotationType,
  type CreateAnnotationRequest,
  type GeoJsonFeature,
  type MultilineCategory,
} from '@lamina/domain';
import type { DB } from '../../platform/db/schema.js';
import type { JsonBudget } from './jsonBudget.js';
import type { Db } from '../../platform/db/database.js';
import type { Principal } from '../../platform/auth/principal.js';
import { recordAudit, type Actor } from '../../platform/audit/audit.js';
import { BadRequestError, ConflictError } from '../../platform/errors.js';
import { onlyAnnotationsOf } from '../../access/annotationVisibility.js';
import {
  annotatedImage,
  prepareAnnotation,
  studyClasses,
  type AnnotationService,
  type ClassRow,
  type PreparedAnnotation,
} from './annotationService.js';

/**
 * GeoJSON export and import (issue 14, beyond the spec). A feature is QuPath's: `geometry` in image
 * pixels (y down), `properties.objectType` 'annotation', `properties.classification` { name,
 * color: [r, g, b] }, `properties.name` the text; Lamina's own fields (the annotation type, an
 * ellipse's radii and tilt, a multiline's category) ride in `properties.lamina`, so a Lamina file
 * imports back unchanged while a QuPath file imports by its geometry.
 */

export function exportQuery(db: Kysely<DB>, principal: Principal, imageId: number) {
  const owner = onlyAnnotationsOf(principal);
  return db
    .selectFrom('annotations as a')
    .leftJoin('annotation_classes as c', 'c.id', 'a.annotation_class_id')
    .select([
      'a.id',
      'a.annotation_type',
      sql<string>`a.geometry::text`.as('geometry'),
      'a.text',
      'a.radius',
      'a.radius_x',
      'a.radius_y',
      'a.tilt',
      'a.length',
      'a.area',
      'a.perimeter',
      'a.multiline_category',
      'a.parent_id',
      'c.name as class_name',
      sql<string | null>`coalesce(c.color, a.color)`.as('color'),
    ])
    .where('a.image_id', '=', imageId)
    .where('a.deleted_at', 'is', null)
    .$if(owner !== null, (q) => q.where('a.user_id', '=', owner))
    .orderBy('a.id');
}

type ExportRow = Awaited<ReturnType<ReturnType<typeof exportQuery>['execute']>>[number];

/** One annotation as a GeoJSON feature (text; the geometry is the stored text, not re-encoded). */
export function featureJson(row: ExportRow): string {
  const rgb = hexToRgb(row.color);
  const classification = row.class_name ? { name: row.class_name, ...(rgb ? { color: rgb } : {}) } : undefined;
  const lamina: Record<string, unknown> = { annotationType: row.annotation_type };
  if (row.multiline_category) lamina.multilineCategory = row.multiline_category;
  if (row.radius !== null) lamina.radius = row.radius;
  if (row.radius_x !== null) lamina.radiusX = row.radius_x;
  if (row.radius_y !== null) lamina.radiusY = row.radius_y;
  if (row.tilt !== null) lamina.tilt = row.tilt;
  if (row.length !== null) lamina.length = row.length;
  if (row.area !== null) lamina.area = row.area;
  if (row.perimeter !== null) lamina.perimeter = row.perimeter;
  if (row.parent_id !== null) lamina.parentId = row.parent_id;
  if (row.text !== null) lamina.text = row.text;
  const properties = {
    objectType: 'annotation',
    ...(row.text !== null ? { name: row.text } : {}),
    ...(classification ? { classification } : {}),
    ...(!classification && rgb ? { color: rgb } : {}),
    lamina,
  };
  return `{"type":"Feature","id":"${row.id}","geometry":${row.geometry},"properties":${JSON.stringify(properties)}}`;
}

/** The features of a file: a FeatureCollection, a bare array of features, or one Feature (QuPath writes all three). */
function featuresOf(body: unknown): unknown[] {
  if (Array.isArray(body)) return body;
  if (body && typeof body === 'object') {
    const o = body as { type?: unknown; features?: unknown };
    if (o.type === 'FeatureCollection' && Array.isArray(o.features)) return o.features;
    if (o.type === 'Feature') return [body];
  }
  throw new BadRequestError(ANNOTATION_MESSAGES.importInvalid);
}

/**
 * The most a GeoJSON import body may hold, counted while it streams in (jsonBudget.ts), so that
 * parsing it stays bounded (about 400 MB of heap at worst, as the largest allowed file needs):
 * objects and arrays, one per position and at most 8 others per feature (a Lamina export's feature,
 * geometry, properties, classification, colour, lamina, a polygon's coordinates and ring); values,
 * 3 per position (the array and x, y) and at most 32 others per feature (every property a Lamina
 * export writes).
 */
export const IMPORT_JSON_BUDGET: JsonBudget = {
  containers: ANNOTATION_LIMITS.importMaxVertices + 8 * ANNOTATION_LIMITS.importMaxFeatures,
  values: 3 * ANNOTATION_LIMITS.importMaxVertices + 32 * ANNOTATION_LIMITS.importMaxFeatures,
};

/** Positions (arrays whose first item is a number) under a `coordinates` value, walked without recursion. */
function positionsIn(coordinates: unknown): number {
  if (!Array.isArray(coordinates)) return 0;
  if (typeof coordinates[0] === 'number') return 1;
  let count = 0;
  const stack: unknown[][] = [coordinates];
  for (let list = stack.pop(); list; list = stack.pop())
    for (const item of list)
      if (Array.isArray(item)) {
        if (typeof item[0] === 'number') count++;
        else stack.push(item);
      }
  return count;
}

/** The geometries of a feature's geometry: itself, or a GeometryCollection's members (nested too). */
function geometriesOf(geometry: unknown): { type: unknown; coordinates: unknown }[] {
  const found: { type: unknown; coordinates: unknown }[] = [];
  const stack: unknown[] = [geometry];
  while (stack.length > 0) {
    const g = stack.pop();
    if (!g || typeof g !== 'object') continue;
    const o = g as { type?: unknown; coordinates?: unknown; geometries?: unknown };
    if (o.type === 'GeometryCollection' && Array.isArray(o.geometries)) stack.push(...(o.geometries as unknown[]));
    else found.push({ type: o.type, coordinates: o.coordinates });
  }
  return found;
}

/**
 * What a file asks for, counted before any feature is checked or anything written (issue 26): its
 * annotations (a MultiPoint's positions one each) and its vertices (every position of every
 * geometry), each against its limit; then every geometry against the vertices one may hold (a
 * MultiPoint: as many points as a file may hold). 400 naming the limit, the first too large
 * geometry by its feature number.
 */
function assertImportSize(features: readonly unknown[]): void {
  let annotations = 0;
  let vertices = 0;
  let oversized: { index: number; vertices: number } | null = null;
  for (let index = 0; index < features.length; index++) {
    const feature = features[index];
    const geometry = feature && typeof feature === 'object' ? (feature as { geometry?: unknown }).geometry : null;
    const multiPoint = (geometry as { type?: unknown } | null | undefined)?.type === 'MultiPoint';
    let featureVertices = 0;
    for (const g of geometriesOf(geometry)) {
      const n = positionsIn(g.coordinates);
      featureVertices += n;
      const max = g.type === 'MultiPoint' ? ANNOTATION_LIMITS.importMaxFeatures : ANNOTATION_LIMITS.geometryMaxVertices;
      if (n > max) oversized ??= { index, vertices: n };
    }
    vertices += featureVertices;
    annotations += multiPoint ? featureVertices : 1;
  }
  if (annotations > ANNOTATION_LIMITS.importMaxFeatures)
    throw new BadRequestError(ANNOTATION_MESSAGES.importTooMany(annotations));
  if (vertices > ANNOTATION_LIMITS.importMaxVertices)
    throw new BadRequestError(ANNOTATION_MESSAGES.importTooManyVertices(vertices));
  if (oversized)
    throw new BadRequestError(
      `${ANNOTATION_MESSAGES.unableToCreate}: ${ANNOTATION_MESSAGES.importFeature(
        oversized.index,
        ANNOTATION_MESSAGES.importGeometryTooLarge(oversized.vertices),
      )}`,
    );
}

/** The annotation type of a feature: Lamina's own, else from QuPath's geometry. */
function typeOf(feature: GeoJsonFeature, geometryType: string, positions: number): AnnotationType | null {
  const own = feature.properties?.lamina?.annotationType;
  if (own) return own;
  if (geometryType === 'Point') return 'POINT';
  if (geometryType === 'Polygon') return 'FREEHAND';
  if (geometryType === 'LineString') return positions === 2 ? 'LINE' : 'MULTILINE';
  return null;
}

/** Create requests from one feature (a QuPath MultiPoint is one point annotation per position). */
function requestsOf(
  feature: GeoJsonFeature,
  imageId: number,
  classByName: ReadonlyMap<string, ClassRow>,
): CreateAnnotationRequest[] {
  const geometry = feature.geometry;
  if (!geometry) throw new Error(ANNOTATION_MESSAGES.importUnknownGeometry('null'));
  const parts: { type: string; coordinates: unknown }[] =
    geometry.type === 'MultiPoint' && Array.isArray(geometry.coordinates)
      ? geometry.coordinates.map((c: unknown) => ({ type: 'Point', coordinates: c }))
      : [geometry];
  return parts.map((part) => {
    const positions = Array.isArray(part.coordinates) ? part.coordinates.length : 0;
    const type = typeOf(feature, part.type, positions);
    if (!type) throw new Error(ANNOTATION_MESSAGES.importUnknownGeometry(part.type));
    const lamina = feature.properties?.lamina;
    const className = feature.properties?.classification?.name;
    const classType = CLASS_TYPE_OF[type];
    let annotationClassId: number | null = null;
    if (className && classType) {
      const cls = classByName.get(`${classType}:${className.toLowerCase()}`);
      if (!cls) throw new Error(ANNOTATION_MESSAGES.importUnknownClass(className, type));
      annotationClassId = cls.id;
    }
    const text = lamina?.text ?? (type === 'TEXT' || type === 'HPF' ? feature.properties?.name : null) ?? null;
    const parsed = createAnnotationRequestSchema.safeParse({
      imageId,
      annotationType: type,
      geometry: part,
      annotationClassId,
      multilineCategory: lamina?.multilineCategory ?? null,
      text,
      radiusX: lamina?.radiusX ?? null,
      radiusY: lamina?.radiusY ?? null,
      tilt: lamina?.tilt ?? null,
    });
    if (!parsed.success) throw new Error(ANNOTATION_MESSAGES.importUnknownGeometry(part.type));
    return parsed.data;
  });
}

export class GeoJsonImport {
  constructor(
    private readonly db: Db,
    private readonly service: AnnotationService,
  ) {}

  /**
   * POST /api/images/{id}/annotations/import: every feature checked like a drawn annotation, then
   * all inserted as the caller's, in one transaction with one audit row — or none at all, with the
   * first problem named by its feature number.
   */
  async import(principal: Principal, actor: Actor, imageId: number, body: unknown): Promise<number> {
    const features = featuresOf(body);
    if (features.length === 0) throw new BadRequestError(ANNOTATION_MESSAGES.importEmpty);
    assertImportSize(features);
    const image = await annotatedImage(this.db, imageId);
    const classes = await studyClasses(this.db, image.studyId);
    const classByName = new Map(
      [...classes.values()].filter((c) => !c.deleted && c.enabled).map((c) => [`${c.type}:${c.name.toLowerCase()}`, c]),
    );
    const prepared: PreparedAnnotation[] = [];
    const multilines = new Set<string>();
    features.forEach((raw, index) => {
      const fail = (message: string) =>
        new BadRequestError(
          `${ANNOTATION_MESSAGES.unableToCreate}: ${ANNOTATION_MESSAGES.importFeature(index, message)}`,
        );
      const feature = geoJsonFeatureSchema.safeParse(raw);
      if (!feature.success) throw fail(ANNOTATION_MESSAGES.importInvalid);
      let requests: CreateAnnotationRequest[];
      try {
        requests = requestsOf(feature.data, imageId, classByName);
      } catch (error) {
        throw fail(error instanceof Error ? error.message : String(error));
      }
      for (const request of requests) {
        const p = prepareAnnotation(request, image, classes, fail);
        if (p.annotationType === 'MULTILINE' && p.annotationClassId !== null && p.multilineCategory) {
          const key = `${p.annotationClassId}:${p.multilineCategory}`;
          const name = classes.get(p.annotationClassId)?.name ?? '';
          if (multilines.has(key)) throw fail(ANNOTATION_MESSAGES.multilineTaken(name, p.multilineCategory));
          multilines.add(key);
        }
        prepared.push(p);
      }
    });
    return this.db.transaction().execute(async (tx) => {
      await this.service.assertUnlocked(tx, image, principal.id, ANNOTATION_MESSAGES.unableToCreate);
      if (multilines.size > 0) {
        const taken = await tx
          .selectFrom('annotations')
          .select(['annotation_class_id', 'multiline_category'])
          .where('image_id', '=', imageId)
          .where('user_id', '=', principal.id)
          .where('annotation_type', '=', 'MULTILINE')
          .where('deleted_at', 'is', null)
          .execute();
        const clash = taken.find((t) => multilines.has(`${t.annotation_class_id}:${t.multiline_category}`));
        if (clash)
          throw new ConflictError(
            `${ANNOTATION_MESSAGES.unableToCreate}: ${ANNOTATION_MESSAGES.multilineTaken(
              classes.get(clash.annotation_class_id ?? 0)?.name ?? '',
              clash.multiline_category as MultilineCategory,
            )}`,
          );
      }
      const { ids } = await this.service.insert(tx, principal.id, image, prepared);
      await recordAudit(tx, actor, [
        {
          action: 'ANNOTATIONS_IMPORTED',
          entityType: 'image',
          entityId: imageId,
          studyId: image.studyId,
          newValue: JSON.stringify({
            count: ids.length,
            firstId: ids.reduce<number | null>((m, id) => (m === null || id < m ? id : m), null),
            lastId: ids.reduce<number | null>((m, id) => (m === null || id > m ? id : m), null),
          }),
        },
      ]);
      return ids.length;
    });
  }
}
