import {
  QUERY_MESSAGES,
  queriesOfObjectResponseSchema,
  queryActionResponseSchema,
  queryListResponseSchema,
  queryMetadataResponseSchema,
  queryReasonResponseSchema,
  queryReasonsResponseSchema,
  queryStatsResponseSchema,
  type CreateQueryReasonRequest,
  type CreateQueryRequest,
  type QueryActionResponse,
  type QueryListRequest,
  type QueryObjectType,
  type UpdateQueryReasonRequest,
} from '@lamina/domain';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { withFallbackMessage } from '../../api/ApiError';
import { apiFetch, type HttpMethod } from '../../api/client';
import { caseKeys } from '../cases/api';

/**
 * The query calls (issue 15; doc 3 §7) and their keys. Everything sits under 'queries', so one
 * invalidation after an action refreshes the viewer's panels, the lists and the stats together.
 */
export const queryDataKeys = {
  all: ['queries'] as const,
  ofCase: (caseId: number) => ['queries', 'case', caseId] as const,
  ofImage: (imageId: number) => ['queries', 'image', imageId] as const,
  metadata: (studyId: number) => ['queries', 'metadata', studyId] as const,
  list: (params: QueryListRequest) => ['queries', 'list', params] as const,
  stats: (objectType: QueryObjectType) => ['queries', 'stats', objectType] as const,
};

/** GET /api/queries/case/{caseId}: the case's queries, newest first. */
export function useCaseQueries(caseId: number | null, enabled = true) {
  return useQuery({
    queryKey: queryDataKeys.ofCase(caseId ?? 0),
    enabled: enabled && caseId !== null,
    queryFn: async ({ signal }) =>
      (
        await withFallbackMessage(
          apiFetch(`/api/queries/case/${caseId ?? 0}`, { schema: queriesOfObjectResponseSchema, signal }),
          QUERY_MESSAGES.unableToFetchForCase(caseId ?? 0),
        )
      ).queries,
  });
}

/** GET /api/queries/image/{imageId}: the image's queries, newest first. */
export function useImageQueries(imageId: number | null, enabled = true) {
  return useQuery({
    queryKey: queryDataKeys.ofImage(imageId ?? 0),
    enabled: enabled && imageId !== null,
    queryFn: async ({ signal }) =>
      (
        await withFallbackMessage(
          apiFetch(`/api/queries/image/${imageId ?? 0}`, { schema: queriesOfObjectResponseSchema, signal }),
          QUERY_MESSAGES.unableToFetchForImage(imageId ?? 0),
        )
      ).queries,
  });
}

/** GET /api/queries/metadata?studyId: the roles the caller may query, the reasons, the resolution options. */
export function useQueryMetadata(studyId: number | null, enabled = true) {
  return useQuery({
    queryKey: queryDataKeys.metadata(studyId ?? 0),
    enabled: enabled && studyId !== null,
    staleTime: 5 * 60_000,
    queryFn: ({ signal }) =>
      withFallbackMessage(
        apiFetch(`/api/queries/metadata?studyId=${studyId ?? 0}`, { schema: queryMetadataResponseSchema, signal }),
        QUERY_MESSAGES.unableToFetchMetadata,
      ),
  });
}

/** POST /api/queries: one page of the queries list. */
export function useQueryList(params: QueryListRequest) {
  return useQuery({
    queryKey: queryDataKeys.list(params),
    placeholderData: keepPreviousData,
    queryFn: ({ signal }) =>
      withFallbackMessage(
        apiFetch('/api/queries', { method: 'POST', body: params, schema: queryListResponseSchema, signal }),
        QUERY_MESSAGES.unableToFetchQueries,
      ),
  });
}

/** GET /api/queries/stats?objectType: Open / Answered / Closed / Overdue. */
export function useQueryStats(objectType: QueryObjectType) {
  return useQuery({
    queryKey: queryDataKeys.stats(objectType),
    queryFn: async ({ signal }) =>
      (
        await withFallbackMessage(
          apiFetch(`/api/queries/stats?objectType=${objectType}`, { schema: queryStatsResponseSchema, signal }),
          QUERY_MESSAGES.unableToFetchStats,
        )
      ).stats,
  });
}

/** Refreshes everything a query change shows in: the panels, lists, stats, and the case's open count. */
function useRefreshQueries() {
  const queryClient = useQueryClient();
  return async (caseId: number | null) => {
    await Promise.all([
      queryClient.invalidateQueries({ queryKey: queryDataKeys.all }),
      caseId === null ? null : queryClient.invalidateQueries({ queryKey: caseKeys.detail(caseId) }),
    ]);
  };
}

/** The actions on one query (doc 3 §7): the path after /api/queries/{id}/, its method and body. */
export type QueryCall =
  | { kind: 'comment'; commentText: string }
  | { kind: 'resolve'; resolutionOption: string; commentText: string | null }
  | { kind: 'close'; detailedResolutionText: string }
  | { kind: 'unresolvable'; unresolvableReasonText: string }
  | { kind: 'reminder'; queryReminderId: number; followUpInDays: number };

const CALLS: Record<QueryCall['kind'], { method: HttpMethod; fallback: (id: number) => string }> = {
  comment: { method: 'POST', fallback: QUERY_MESSAGES.unableToComment },
  resolve: { method: 'PATCH', fallback: QUERY_MESSAGES.unableToResolve },
  close: { method: 'PATCH', fallback: QUERY_MESSAGES.unableToClose },
  unresolvable: { method: 'PATCH', fallback: QUERY_MESSAGES.unableToMarkUnresolvable },
  reminder: { method: 'POST', fallback: QUERY_MESSAGES.unableToRemind },
};

export function sendQueryCall(queryId: number, call: QueryCall): Promise<QueryActionResponse> {
  const { kind, ...body } = call;
  const { method, fallback } = CALLS[kind];
  return withFallbackMessage(
    apiFetch(`/api/queries/${queryId}/${kind}`, {
      method,
      body: { queryId, ...body },
      schema: queryActionResponseSchema,
    }),
    fallback(queryId),
  );
}

/** One action on a query; afterwards every query view is read again. */
export function useQueryCall(queryId: number, caseId: number | null) {
  const refresh = useRefreshQueries();
  return useMutation({
    mutationFn: (call: QueryCall) => sendQueryCall(queryId, call),
    onSuccess: () => refresh(caseId),
  });
}

/** POST /api/queries/new. */
export function useCreateQuery() {
  const refresh = useRefreshQueries();
  return useMutation({
    mutationFn: (request: CreateQueryRequest) =>
      withFallbackMessage(
        apiFetch('/api/queries/new', { method: 'POST', body: request, schema: queryActionResponseSchema }),
        QUERY_MESSAGES.unableToCreate(request.queryObjectType, request.objectId),
      ),
    onSuccess: (_response, request) => refresh(request.caseId ?? null),
  });
}

/** Refreshes the queries after a replacement moved them to the new image. */
export function useRefreshAfterReplace() {
  return useRefreshQueries();
}

// The reason catalogue (system admins; issue 15)

export const queryReasonKeys = { all: ['queryReasons'] as const };

/** GET /api/query-reasons: every reason of every role and object type. */
export function useQueryReasons() {
  return useQuery({
    queryKey: queryReasonKeys.all,
    queryFn: async ({ signal }) =>
      (await apiFetch('/api/query-reasons', { schema: queryReasonsResponseSchema, signal })).reasons,
  });
}

export type SaveReason =
  { kind: 'create'; body: CreateQueryReasonRequest } | { kind: 'update'; id: number; body: UpdateQueryReasonRequest };

/** POST /api/query-reasons or PATCH /api/query-reasons/{id}; the catalogue and the wizards' metadata refresh. */
export function useSaveQueryReason() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (save: SaveReason) =>
      save.kind === 'create'
        ? apiFetch('/api/query-reasons', { method: 'POST', body: save.body, schema: queryReasonResponseSchema })
        : apiFetch(`/api/query-reasons/${save.id}`, {
            method: 'PATCH',
            body: save.body,
            schema: queryReasonResponseSchema,
          }),
    onSuccess: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: queryReasonKeys.all }),
        queryClient.invalidateQueries({ queryKey: ['queries', 'metadata'] }),
      ]),
  });
}
