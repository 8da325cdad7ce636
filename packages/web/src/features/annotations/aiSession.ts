import { ANNOTATION_COLORS, type AiLayers, type AnnotationView, type ClassRef } from '@lamina/domain';
import { useEffect, useMemo } from 'react';
import { useImage } from '../../api/imageQuery';
import { useAiAnnotations, useAiLayers, type AiAnnotationList } from './aiApi';
import { AnnotationStore } from './annotationStore';

/**
 * The imported AI annotations of the image shown (issue 17): a store of their own (the same
 * AnnotationStore the readers' annotations use, never patched: AI objects are read-only), the
 * image's imports and AI classes, and the classes as the tree reads them.
 */
export interface AiSession {
  imageId: number;
  store: AnnotationStore;
  /** GET ai-layers: imports (APP sequence, heatmap), classes with counts, acceptAiAnnotations. */
  layers: AiLayers | undefined;
  /** The AI classes that hold HPFs, and those that hold points (the tree's class levels). */
  hpfClasses: readonly ClassRef[];
  pointClasses: readonly ClassRef[];
  /** Colour of an AI class by id. */
  classColor: (classId: number | null) => string | null;
  /** Either call failed. */
  error: unknown;
}

type Row = Partial<AnnotationView>;

/** The class ids of the AI HPFs and of the AI points, from the rows as they arrive. */
export function aiClassIds(rows: readonly Row[]): { hpf: Set<number>; point: Set<number> } {
  const hpf = new Set<number>();
  const point = new Set<number>();
  for (const row of rows) {
    const id = row.annotationClassId;
    if (id === undefined || id === null) continue;
    if (row.annotationType === 'HPF') hpf.add(id);
    else if (row.annotationType === 'POINT') point.add(id);
  }
  return { hpf, point };
}

function classRefs(layers: AiLayers | undefined, ids: ReadonlySet<number>, fallback: string): ClassRef[] {
  // The server lists the classes by name: that is their order in the tree.
  return (layers?.classes ?? [])
    .filter((c) => ids.has(c.id))
    .map((c, index) => ({ id: c.id, name: c.name, color: c.color ?? fallback, sortOrder: index, enabled: true }));
}

/**
 * Loads the AI layers and objects of an image that has a completed import (`mldFile`), when the
 * user may see annotations (`imageId` null otherwise); null while there is nothing to show.
 */
export function useAiSession(imageId: number | null): AiSession | null {
  const image = useImage(imageId).data;
  const mldId = image && image.id === imageId ? (image.mldFile?.id ?? null) : null;
  const layers = useAiLayers(imageId, mldId);
  const objects = useAiAnnotations(imageId, mldId);
  // One store per image and import: a new import never shows the last one's objects.
  const store = useMemo(
    () => (imageId === null || mldId === null ? null : new AnnotationStore(imageId)),
    [imageId, mldId],
  );
  const data: AiAnnotationList | undefined = objects.data;
  const ids = useMemo(() => aiClassIds(data?.annotations ?? []), [data]);
  useEffect(() => {
    if (!store || !data || data.imageId !== store.imageId) return;
    // The classes first: the layers ask the store what to draw as soon as it loads.
    store.setClasses([...ids.hpf], [...ids.point]);
    store.load({ imageId: data.imageId, locked: true, authors: [], annotations: data.annotations });
  }, [store, data, ids]);

  return useMemo((): AiSession | null => {
    if (!store || imageId === null) return null;
    const colours = new Map((layers.data?.classes ?? []).map((c) => [c.id, c.color]));
    return {
      imageId,
      store,
      layers: layers.data,
      hpfClasses: classRefs(layers.data, ids.hpf, ANNOTATION_COLORS.hpf),
      pointClasses: classRefs(layers.data, ids.point, ANNOTATION_COLORS.default),
      classColor: (id) => (id === null ? null : (colours.get(id) ?? null)),
      error: layers.error ?? objects.error,
    };
  }, [store, imageId, layers.data, layers.error, objects.error, ids]);
}
