import {
  OUTCOME_MESSAGES,
  outcomePairsResponseSchema,
  studyAgreementResponseSchema,
  studyOutcomeListResponseSchema,
  type OutcomeAdjudicationFilter,
  type StudyOutcomeListResponse,
} from '@lamina/domain';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { withFallbackMessage } from '../../api/ApiError';
import { apiFetch } from '../../api/client';
import { listQuery } from '../../lib/listQuery';

/**
 * The Reads tab's calls (issue 30; docs/OUTCOMES.md): the study's read cases, the agreement between
 * its readers and the charts' value pairs. Under the study's key, so anything that refreshes a
 * study's lists refreshes them.
 */
export const outcomeKeys = {
  list: (params: StudyOutcomeListParams) => ['studies', params.studyId, 'outcomes', 'list', params] as const,
  agreement: (studyId: number) => ['studies', studyId, 'outcomes', 'agreement'] as const,
  pairs: (studyId: number, endpointKey: string) => ['studies', studyId, 'outcomes', 'pairs', endpointKey] as const,
};

export interface StudyOutcomeListParams {
  studyId: number;
  procId?: string;
  adjudicated?: OutcomeAdjudicationFilter | '';
  pageIndex: number;
  pageSize: number;
  sort: string;
}

export function fetchStudyOutcomes(
  params: StudyOutcomeListParams,
  signal?: AbortSignal,
): Promise<StudyOutcomeListResponse> {
  const query = listQuery({
    procId: params.procId?.trim(),
    adjudicated: params.adjudicated || undefined,
    page: params.pageIndex + 1,
    pageSize: params.pageSize,
    sort: params.sort,
  });
  return withFallbackMessage(
    apiFetch(`/api/studies/${params.studyId}/outcomes${query}`, { schema: studyOutcomeListResponseSchema, signal }),
    OUTCOME_MESSAGES.unableToFetchOutcomes,
  );
}

/** GET /api/studies/{id}/outcomes: one page of the study's read cases. */
export function useStudyOutcomes(params: StudyOutcomeListParams) {
  return useQuery({
    queryKey: outcomeKeys.list(params),
    queryFn: ({ signal }) => fetchStudyOutcomes(params, signal),
    placeholderData: keepPreviousData,
  });
}

/** GET /api/studies/{id}/agreement: each endpoint's agreement between the study's readers. */
export function useStudyAgreement(studyId: number) {
  return useQuery({
    queryKey: outcomeKeys.agreement(studyId),
    queryFn: async ({ signal }) =>
      (
        await withFallbackMessage(
          apiFetch(`/api/studies/${studyId}/agreement`, { schema: studyAgreementResponseSchema, signal }),
          OUTCOME_MESSAGES.unableToFetchAgreement,
        )
      ).endpoints,
  });
}

/** GET /api/studies/{id}/outcomes/pairs?endpointKey: the two primary readers' values per case, for the charts. */
export function useOutcomePairs(studyId: number, endpointKey: string | null) {
  return useQuery({
    queryKey: outcomeKeys.pairs(studyId, endpointKey ?? ''),
    queryFn: async ({ signal }) =>
      (
        await withFallbackMessage(
          apiFetch(`/api/studies/${studyId}/outcomes/pairs${listQuery({ endpointKey })}`, {
            schema: outcomePairsResponseSchema,
            signal,
          }),
          OUTCOME_MESSAGES.unableToFetchPairs,
        )
      ).pairs,
    enabled: endpointKey !== null,
  });
}
