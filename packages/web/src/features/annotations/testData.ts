import type { AnnotationView } from '@lamina/domain';

let nextId = 1;

/** An annotation view for tests: a point by default. */
export function makeAnnotation(overrides: Partial<AnnotationView> = {}): AnnotationView {
  return {
    id: nextId++,
    imageId: 13,
    annotationType: 'POINT',
    source: 'CR',
    userId: 9,
    geometry: { type: 'Point', coordinates: [100, 100] },
    annotationClassId: null,
    color: null,
    parentId: null,
    radius: null,
    radiusX: null,
    radiusY: null,
    tilt: null,
    weight: null,
    length: null,
    area: null,
    perimeter: null,
    multilineCategory: null,
    text: null,
    createdAt: '2026-11-25T00:00:00.000Z',
    ...overrides,
  };
}
