import {
  ANNOTATION_MESSAGES,
  createAnnotationResponseSchema,
  deleteAnnotationResponseSchema,
  importAnnotationsResponseSchema,
  restoreAnnotationResponseSchema,
  type AnnotationListResponse,
  type CreateAnnotationRequest,
  type CreateAnnotationResponse,
  type DeleteAnnotationResponse,
  type RestoreAnnotationResponse,
} from '@lamina/domain';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { withFallbackMessage } from '../../api/ApiError';
import { apiDownload, apiFetch, saveDownload } from '../../api/client';
import type { HistoryOps } from './annotationHistory';
import type { AnnotationStore } from './annotationStore';

export const annotationKeys = {
  list: (imageId: number) => ['annotations', 'image', imageId] as const,
};

/** The list's top level is checked by hand: a schema over 200,000 rows would copy every one of them. */
function isListResponse(body: unknown): body is AnnotationListResponse {
  if (typeof body !== 'object' || body === null) return false;
  const b = body as Record<string, unknown>;
  return typeof b.locked === 'boolean' && Array.isArray(b.authors) && Array.isArray(b.annotations);
}

/**
 * GET /api/images/{id}/annotations: every annotation of the image the user may see, once. It is
 * not refetched on focus (200,000 rows); creates and deletes patch the store instead.
 */
export function useAnnotationList(imageId: number | null) {
  return useQuery({
    queryKey: annotationKeys.list(imageId ?? 0),
    queryFn: async ({ signal }): Promise<AnnotationListResponse> => {
      const body = await apiFetch(`/api/images/${imageId}/annotations`, { signal });
      if (!isListResponse(body)) throw new Error('Unexpected response');
      return body;
    },
    enabled: imageId !== null,
    staleTime: Infinity,
    refetchOnWindowFocus: false,
  });
}

/** POST /api/annotations; the created annotation (and its reparented points) go into the store. */
export function useCreateAnnotation(store: AnnotationStore | null) {
  return useMutation({
    mutationFn: (request: CreateAnnotationRequest): Promise<CreateAnnotationResponse> =>
      withFallbackMessage(
        apiFetch('/api/annotations', { method: 'POST', body: request, schema: createAnnotationResponseSchema }),
        ANNOTATION_MESSAGES.unableToCreate,
      ),
    onSuccess: (response) => store?.add(response.annotation, response.reparented),
  });
}

export interface DeleteInput {
  id: number;
  /** An HPF's points go with it (true) or become orphans / move to another HPF (false). */
  deleteNested: boolean;
}

/** DELETE /api/annotations/{id}?deleteNested=…; the deleted ids leave the store once the server said yes. */
export async function deleteAnnotation(
  store: AnnotationStore | null,
  { id, deleteNested }: DeleteInput,
): Promise<DeleteAnnotationResponse> {
  const response = await withFallbackMessage(
    apiFetch(`/api/annotations/${id}?deleteNested=${deleteNested}`, {
      method: 'DELETE',
      schema: deleteAnnotationResponseSchema,
    }),
    ANNOTATION_MESSAGES.unableToDelete,
  );
  store?.remove(response.deletedIds, response.reparented);
  return response;
}

/**
 * POST /api/annotations/{id}/restore (issue 29: undo of a delete, redo of a create): the restored
 * annotations (an HPF with the points deleted with it) and the points a restored HPF takes back go
 * into the store once the server said yes.
 */
export async function restoreAnnotation(store: AnnotationStore | null, id: number): Promise<RestoreAnnotationResponse> {
  const response = await withFallbackMessage(
    apiFetch(`/api/annotations/${id}/restore`, { method: 'POST', schema: restoreAnnotationResponseSchema }),
    ANNOTATION_MESSAGES.unableToRestore,
  );
  store?.addAll(response.annotations, response.reparented);
  return response;
}

/** The server calls of undo and redo, patching `store`. */
export function historyOps(store: AnnotationStore): HistoryOps {
  return {
    remove: (id, deleteNested) => deleteAnnotation(store, { id, deleteNested }),
    restore: (id) => restoreAnnotation(store, id),
  };
}

/** GET /api/images/{id}/annotations.geojson, handed to the browser's download. */
export async function exportAnnotations(imageId: number): Promise<void> {
  const file = await apiDownload(`/api/images/${imageId}/annotations.geojson`);
  saveDownload(file, `image-${imageId}-annotations.geojson`);
}

/** POST /api/images/{id}/annotations/import with a GeoJSON FeatureCollection; the list reloads. */
export function useImportAnnotations(imageId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (file: File) => {
      let body: unknown;
      try {
        body = JSON.parse(await file.text()) as unknown;
      } catch {
        throw new Error(ANNOTATION_MESSAGES.importInvalid);
      }
      return apiFetch(`/api/images/${imageId}/annotations/import`, {
        method: 'POST',
        body,
        schema: importAnnotationsResponseSchema,
      });
    },
    onSuccess: () => queryClient.invalidateQueries({ queryKey: annotationKeys.list(imageId) }),
  });
}
