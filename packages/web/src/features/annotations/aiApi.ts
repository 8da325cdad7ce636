import { aiLayersResponseSchema, type AiLayers, type AnnotationView, type ImageView } from '@lamina/domain';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { apiFetch } from '../../api/client';
import { imageAction } from '../cases/api';
import { imageQueryKey } from '../../api/imageQuery';

/** The imported AI annotations of an image (issue 17): its imports and classes, its objects, the accept flag. */

export const aiKeys = {
  /** `mldId`: the image's latest completed import; a new one asks again. */
  layers: (imageId: number, mldId: number) => ['annotations', 'ai', imageId, mldId, 'layers'] as const,
  annotations: (imageId: number, mldId: number) => ['annotations', 'ai', imageId, mldId, 'objects'] as const,
  image: (imageId: number) => ['annotations', 'ai', imageId] as const,
};

export interface AiAnnotationList {
  imageId: number;
  annotations: Partial<AnnotationView>[];
}

function isAiList(body: unknown): body is AiAnnotationList {
  if (typeof body !== 'object' || body === null) return false;
  const b = body as Record<string, unknown>;
  return typeof b.imageId === 'number' && Array.isArray(b.annotations);
}

/** GET /api/images/{id}/ai-layers: the completed imports (APP sequence, heatmap) and the AI classes with counts. */
export function useAiLayers(imageId: number | null, mldId: number | null) {
  return useQuery({
    queryKey: aiKeys.layers(imageId ?? 0, mldId ?? 0),
    queryFn: ({ signal }) => apiFetch(`/api/images/${imageId}/ai-layers`, { schema: aiLayersResponseSchema, signal }),
    enabled: imageId !== null && mldId !== null,
    staleTime: Infinity,
    refetchOnWindowFocus: false,
  });
}

/**
 * GET /api/images/{id}/ai-annotations: every AI object, in the compact rows of the readers' list
 * (made whole in the store, like theirs). Read once: AI annotations never change in the viewer.
 */
export function useAiAnnotations(imageId: number | null, mldId: number | null) {
  return useQuery({
    queryKey: aiKeys.annotations(imageId ?? 0, mldId ?? 0),
    queryFn: async ({ signal }): Promise<AiAnnotationList> => {
      const body = await apiFetch(`/api/images/${imageId}/ai-annotations`, { signal });
      if (!isAiList(body)) throw new Error('Unexpected response');
      return body;
    },
    enabled: imageId !== null && mldId !== null,
    staleTime: Infinity,
    refetchOnWindowFocus: false,
  });
}

/**
 * 'Include AI annotation counts in reports' (doc 3 §2, §4): PATCH /api/images/{id}/accept-ai-annotations.
 * The image's flag is patched in place in the cached layers and image (Mark as Scored reads it), so
 * the image is not fetched again (a new tile token would reload every tile).
 */
export function useAcceptAiAnnotations(imageId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (accept: boolean) => imageAction({ kind: 'acceptAi', imageId, accept }).then(() => accept),
    onSuccess: (accept) => {
      queryClient.setQueriesData<AiLayers>({ queryKey: aiKeys.image(imageId) }, (layers) =>
        layers && 'acceptAiAnnotations' in layers ? { ...layers, acceptAiAnnotations: accept } : layers,
      );
      queryClient.setQueryData<ImageView>(imageQueryKey(imageId), (image) =>
        image ? { ...image, acceptAiAnnotations: accept } : image,
      );
    },
  });
}
