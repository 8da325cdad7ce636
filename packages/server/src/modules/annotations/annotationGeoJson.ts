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
import type { Db } from '../../platform/db/database.js';
import type { Principal } from '../../platform/auth/principal.js';
import { recordAudit, type Actor } from '../../platform/audit/audit.js';
import { BadRequestError, ConflictError } from '../../platform/errors.js';
import {
  annotatedImage,
  onlyAnnotationsOf,
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
    if (features.length > ANNOTATION_LIMITS.importMaxFeatures)
      throw new BadRequestError(ANNOTATION_MESSAGES.importTooMany);
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
