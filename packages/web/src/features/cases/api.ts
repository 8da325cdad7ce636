import { imageQueryKey } from '../../api/imageQuery';
import {
  CASE_MESSAGES,
  IMAGE_ACTION_MESSAGES,
  SIGNATURE_MESSAGES,
  caseImagesResponseSchema,
  caseResponseSchema,
  caseSearchResponseSchema,
  imageActionResponseSchema,
  readersResponseSchema,
  studyCaseListResponseSchema,
  type AssignAdjudicatorRequest,
  type CaseImage,
  type CaseReader,
  type CaseStatus,
  type CaseView,
  type CreateCaseRequest,
  type EditCaseRequest,
  type EditImageRequest,
  type ImageActionResponse,
  type StudyCaseListResponse,
} from '@lamina/domain';
import { keepPreviousData, queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { isApiError, withFallbackMessage } from '../../api/ApiError';
import { apiFetch, setCsrfToken } from '../../api/client';
import { currentPath, fullPageNavigate } from '../../lib/browser';
import { listQuery } from '../../lib/listQuery';
import { loginUrlFor } from '../../lib/safeRedirect';

/**
 * The calls of cases and of the image row actions (issue 11; doc 2 §7, doc 3 §7), with their query
 * keys. Every mutation refreshes the study's case and image lists and the case it touched.
 */
export const caseKeys = {
  studyCases: (studyId: number) => ['studies', studyId, 'cases'] as const,
  list: (params: StudyCaseListParams) => ['studies', params.studyId, 'cases', 'list', params] as const,
  detail: (id: number) => ['cases', 'detail', id] as const,
  readers: (studyId: number, name: string) => ['studies', studyId, 'readers', name] as const,
  suggested: (studyId: number, subjectId: string) => ['studies', studyId, 'suggested-readers', subjectId] as const,
  assignable: (studyId: number, name: string, exclude: string) =>
    ['studies', studyId, 'cases', 'assignable-images', name, exclude] as const,
  search: (studyId: number, text: string, purpose: string) =>
    ['studies', studyId, 'cases', 'search', text, purpose] as const,
};

export interface StudyCaseListParams {
  studyId: number;
  procId?: string;
  status?: CaseStatus | '';
  /** 'any', 'unassigned' or a reader's id. */
  assignee?: string;
  pageIndex: number;
  pageSize: number;
  sort: string;
}

export function fetchStudyCases(params: StudyCaseListParams, signal?: AbortSignal): Promise<StudyCaseListResponse> {
  const query = listQuery({
    procId: params.procId?.trim(),
    status: params.status || undefined,
    assignee: params.assignee && params.assignee !== 'any' ? params.assignee : undefined,
    page: params.pageIndex + 1,
    pageSize: params.pageSize,
    sort: params.sort,
  });
  return withFallbackMessage(
    apiFetch(`/api/studies/${params.studyId}/cases${query}`, { schema: studyCaseListResponseSchema, signal }),
    CASE_MESSAGES.unableToFetchCases,
  );
}

/** GET /api/studies/{id}/cases: one page of the study's cases. */
export function useStudyCases(params: StudyCaseListParams) {
  return useQuery({
    queryKey: caseKeys.list(params),
    queryFn: ({ signal }) => fetchStudyCases(params, signal),
    placeholderData: keepPreviousData,
  });
}

/**
 * GET /api/cases/{id}. The case viewer route's prefetch uses the same options with
 * `redirectOn401: false` (the guard handles a missing session).
 */
export function caseQueryOptions(id: number, { redirectOn401 = true } = {}) {
  return queryOptions({
    queryKey: caseKeys.detail(id),
    queryFn: async ({ signal }): Promise<CaseView> =>
      (
        await withFallbackMessage(
          apiFetch(`/api/cases/${id}`, { schema: caseResponseSchema, signal, redirectOn401 }),
          CASE_MESSAGES.unableToFetchCase,
        )
      ).case,
  });
}

export function useCase(id: number | null) {
  return useQuery({ ...caseQueryOptions(id ?? 0), enabled: id !== null });
}

/** GET /api/studies/{studyId}/users?name: the study's readers (the case dialog, the assignee filter). */
export function useStudyReaders(studyId: number, name: string, enabled = true) {
  return useQuery({
    queryKey: caseKeys.readers(studyId, name),
    queryFn: async ({ signal }): Promise<CaseReader[]> =>
      (
        await withFallbackMessage(
          apiFetch(`/api/studies/${studyId}/users${listQuery({ name })}`, { schema: readersResponseSchema, signal }),
          CASE_MESSAGES.unableToSearchReaders,
        )
      ).readers,
    enabled,
    staleTime: 30_000,
  });
}

/** GET /api/users/suggest-readers?studyId&subjectId. */
export function useSuggestedReaders(studyId: number, subjectId: string, enabled: boolean) {
  return useQuery({
    queryKey: caseKeys.suggested(studyId, subjectId),
    queryFn: async ({ signal }): Promise<CaseReader[]> =>
      (
        await withFallbackMessage(
          apiFetch(`/api/users/suggest-readers${listQuery({ studyId, subjectId: subjectId || undefined })}`, {
            schema: readersResponseSchema,
            signal,
          }),
          CASE_MESSAGES.unableToFetchSuggestedReaders,
        )
      ).readers,
    enabled,
  });
}

/** GET /api/studies/{studyId}/cases/images?name&exclude: images waiting for a case. */
export function useAssignableImages(studyId: number, name: string, exclude: readonly number[], enabled: boolean) {
  const excluded = exclude.join(',');
  return useQuery({
    queryKey: caseKeys.assignable(studyId, name, excluded),
    queryFn: async ({ signal }): Promise<CaseImage[]> =>
      (
        await withFallbackMessage(
          apiFetch(`/api/studies/${studyId}/cases/images${listQuery({ name, exclude: excluded || undefined })}`, {
            schema: caseImagesResponseSchema,
            signal,
          }),
          CASE_MESSAGES.unableToFetchCaseImages,
        )
      ).images,
    enabled,
    // Slides join the list as their processing ends: read it again while the dialog is open.
    refetchInterval: 5_000,
  });
}

/** GET /api/cases?studyId&searchText&purpose: the case search of Assign to Case and Move Image. */
export function useCaseSearch(studyId: number | null, text: string, purpose: 'assign' | 'move', enabled = true) {
  return useQuery({
    queryKey: caseKeys.search(studyId ?? 0, text, purpose),
    queryFn: async ({ signal }) =>
      (
        await withFallbackMessage(
          apiFetch(`/api/cases${listQuery({ studyId: studyId ?? 0, searchText: text || undefined, purpose })}`, {
            schema: caseSearchResponseSchema,
            signal,
          }),
          CASE_MESSAGES.unableToFetchCases,
        )
      ).cases,
    enabled: enabled && studyId !== null,
  });
}

/** Refreshes what a case or image change can touch: the study's case and image lists, the case. */
function useRefresh() {
  const queryClient = useQueryClient();
  return (studyId: number, caseIds: readonly (number | null | undefined)[] = []) =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: caseKeys.studyCases(studyId) }),
      queryClient.invalidateQueries({ queryKey: ['studies', studyId, 'images'] }),
      // Every open case (an image edited from the case page belongs to one), and the named ones.
      queryClient.invalidateQueries({ queryKey: ['cases', 'detail'] }),
      // Image Management's lists (doc 2 §2.1–2.2) show the same images and cases.
      queryClient.invalidateQueries({ queryKey: ['imageManagement'] }),
      ...caseIds
        .filter((id): id is number => typeof id === 'number')
        .map((id) => queryClient.invalidateQueries({ queryKey: caseKeys.detail(id) })),
    ]);
}

/** A case mutation: the call, its fallback message, and the refresh of the study's lists and the case. */
function useCaseMutation<V>(call: (variables: V) => Promise<{ message: string; case: CaseView }>) {
  const refresh = useRefresh();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: call,
    onSuccess: async (response) => {
      queryClient.setQueryData(caseKeys.detail(response.case.id), response.case);
      await refresh(response.case.studyId, [response.case.id]);
    },
  });
}

export function useCreateCase() {
  return useCaseMutation((body: CreateCaseRequest) =>
    withFallbackMessage(
      apiFetch('/api/cases', { method: 'POST', body, schema: caseResponseSchema }),
      CASE_MESSAGES.unableToCreateCase,
    ),
  );
}

export function useEditCase() {
  return useCaseMutation(({ id, changes }: { id: number; changes: EditCaseRequest }) =>
    withFallbackMessage(
      apiFetch(`/api/cases/${id}`, { method: 'PATCH', body: changes, schema: caseResponseSchema }),
      CASE_MESSAGES.editReasonRequired,
    ),
  );
}

/**
 * An electronic signature given with one request (issue 30): the password of a password account,
 * none for a single sign-on account that has signed in again at its provider. The call takes the
 * password out once, so neither the dialog's state nor the mutation's variables (which the query
 * cache keeps) hold it after the request.
 */
export class Signing {
  #password: string | undefined;

  constructor(password?: string) {
    this.#password = password === '' ? undefined : password;
  }

  /** The password, once; afterwards undefined. */
  takePassword(): string | undefined {
    const password = this.#password;
    this.#password = undefined;
    return password;
  }
}

/** The refusals of a signature itself, which answer 401 without ending the session. */
const SIGNATURE_REFUSALS: readonly string[] = [SIGNATURE_MESSAGES.passwordIncorrect, SIGNATURE_MESSAGES.reauthenticate];

/**
 * A call that may carry a signature. Its 401 'The signature password is incorrect' (or 'Sign in
 * again…') is the signature's answer, shown in the dialog, not a logout, so the client's redirect on
 * 401 is off; any other 401 (the session ended) still goes to /login as everywhere else.
 */
async function maybeSigned<T>(signing: Signing | undefined, call: (redirectOn401: boolean) => Promise<T>): Promise<T> {
  if (signing === undefined) return call(true);
  try {
    return await call(false);
  } catch (error) {
    if (isApiError(error, 401) && !SIGNATURE_REFUSALS.includes(error.message)) {
      setCsrfToken(null);
      fullPageNavigate(loginUrlFor(currentPath()));
    }
    throw error;
  }
}

/** The status calls of a case (doc 2 §7, doc 3 §7). */
export type CaseStatusAction =
  /**
   * includeAiCounts: the reader's choice at Mark as Scored, recorded with the read (doc 3 §4);
   * signing: where the study signs the step (Mark as Scored, Pass Lab QC, Pass ISC QC; issue 30).
   */
  | { kind: 'forward'; id: number; includeAiCounts?: boolean; signing?: Signing }
  | { kind: 'back'; id: number; value: CaseStatus; reason: string }
  | { kind: 'on_hold' | 'off_hold' | 'archive'; id: number; reason: string };

const STATUS_FALLBACK: Record<CaseStatusAction['kind'], string> = {
  forward: CASE_MESSAGES.unableToTransition,
  back: CASE_MESSAGES.unableToTransition,
  on_hold: CASE_MESSAGES.couldNotHold,
  off_hold: CASE_MESSAGES.couldNotRemoveHold,
  archive: CASE_MESSAGES.archiveReasonRequired,
};

/** The forward's body (domain forwardCaseRequestSchema); none when it carries nothing. */
function forwardBody(
  action: Extract<CaseStatusAction, { kind: 'forward' }>,
): { includeAiCounts?: boolean; signaturePassword?: string } | undefined {
  const signaturePassword = action.signing?.takePassword();
  const body = {
    ...(action.includeAiCounts !== undefined && { includeAiCounts: action.includeAiCounts }),
    ...(signaturePassword !== undefined && { signaturePassword }),
  };
  return Object.keys(body).length === 0 ? undefined : body;
}

export function useCaseStatusAction() {
  return useCaseMutation((action: CaseStatusAction) => {
    const path =
      action.kind === 'archive' ? `/api/cases/${action.id}/archive` : `/api/cases/${action.id}/status/${action.kind}`;
    const signing = action.kind === 'forward' ? action.signing : undefined;
    const body =
      action.kind === 'forward'
        ? forwardBody(action)
        : action.kind === 'back'
          ? { value: action.value, reason: action.reason }
          : { caseId: action.id, reasonForChange: action.reason };
    return maybeSigned(signing, (redirectOn401) =>
      withFallbackMessage(
        apiFetch(path, { method: 'PATCH', body, schema: caseResponseSchema, redirectOn401 }),
        STATUS_FALLBACK[action.kind],
      ),
    );
  });
}

/** PATCH /api/cases/{id}/reads/{readerId}/reopen { reasonForChange } (issue 29): one reader's read reopened. */
export function useReopenRead() {
  return useCaseMutation(({ id, readerId, reason }: { id: number; readerId: number; reason: string }) =>
    withFallbackMessage(
      apiFetch(`/api/cases/${id}/reads/${readerId}/reopen`, {
        method: 'PATCH',
        body: { reasonForChange: reason },
        schema: caseResponseSchema,
      }),
      CASE_MESSAGES.unableToReopenRead,
    ),
  );
}

/**
 * PATCH /api/cases/{id}/adjudicator { readerId, reasonForChange? } (issue 30): the adjudicator of a
 * case pending adjudication; the reason is required when one is replaced (the server says so).
 */
export function useAssignAdjudicator() {
  return useCaseMutation(({ id, readerId, reason }: { id: number; readerId: number; reason: string }) => {
    const body: AssignAdjudicatorRequest = reason === '' ? { readerId } : { readerId, reasonForChange: reason };
    return withFallbackMessage(
      apiFetch(`/api/cases/${id}/adjudicator`, { method: 'PATCH', body, schema: caseResponseSchema }),
      CASE_MESSAGES.unableToAssignAdjudicator,
    );
  });
}

/** PUT /api/cases/{caseId}/assign { imageId, reasonForChange }. */
export function assignImage(caseId: number, imageId: number, reasonForChange: string) {
  return withFallbackMessage(
    apiFetch(`/api/cases/${caseId}/assign`, {
      method: 'PUT',
      body: { imageId, reasonForChange },
      schema: caseResponseSchema,
    }),
    CASE_MESSAGES.unableToAssign,
  );
}

// ---------------------------------------------------------------------------------------------
// Image row actions
// ---------------------------------------------------------------------------------------------

export type ImageAction =
  | { kind: 'edit'; imageId: number; changes: EditImageRequest }
  | { kind: 'copy'; imageId: number; name: string }
  | { kind: 'archive'; imageId: number; reason: string }
  | { kind: 'assign'; imageId: number; caseId: number; reason: string }
  /** signing: where the study signs QC passes (issue 30). */
  | { kind: 'passQc'; imageId: number; caseId: number; signing?: Signing }
  | { kind: 'acceptAi'; imageId: number; accept: boolean }
  | { kind: 'moveStudy' | 'moveCase'; imageId: number; target: number; reason: string; preview?: boolean };

/** One image action call; the bulk actions call it once per image. */
export function imageAction(action: ImageAction): Promise<ImageActionResponse> {
  const call = (path: string, method: 'PATCH' | 'POST', body: unknown, fallback: string) =>
    withFallbackMessage(apiFetch(path, { method, body, schema: imageActionResponseSchema }), fallback);
  switch (action.kind) {
    case 'edit':
      return call(`/api/images/${action.imageId}`, 'PATCH', action.changes, IMAGE_ACTION_MESSAGES.updateReasonRequired);
    case 'copy':
      return call(
        `/api/images/${action.imageId}/copy`,
        'POST',
        { name: action.name },
        IMAGE_ACTION_MESSAGES.unableToCopy,
      );
    case 'passQc': {
      const signaturePassword = action.signing?.takePassword();
      const body = signaturePassword === undefined ? undefined : { signaturePassword };
      return maybeSigned(action.signing, (redirectOn401) =>
        withFallbackMessage(
          apiFetch(`/api/images/${action.imageId}/pass-qc`, {
            method: 'PATCH',
            body,
            schema: imageActionResponseSchema,
            redirectOn401,
          }),
          IMAGE_ACTION_MESSAGES.unableToTransitionImageStatus,
        ),
      );
    }
    case 'acceptAi':
      return call(
        `/api/images/${action.imageId}/accept-ai-annotations`,
        'PATCH',
        { acceptAiAnnotations: action.accept },
        IMAGE_ACTION_MESSAGES.unableToAcceptAi,
      );
    case 'assign':
      return assignImage(action.caseId, action.imageId, action.reason).then((response) => ({
        success: true as const,
        message: response.message,
        imageId: action.imageId,
      }));
    case 'archive':
      return call(
        `/api/images/${action.imageId}`,
        'POST',
        { reasonForChange: action.reason },
        IMAGE_ACTION_MESSAGES.archiveReasonRequired,
      );
    case 'moveStudy':
    case 'moveCase':
      return call(
        `/api/images/${action.imageId}/${action.kind === 'moveStudy' ? 'study' : 'case'}`,
        'PATCH',
        { value: action.target, reasonForChange: action.reason, preview: action.preview ?? false },
        action.kind === 'moveStudy' ? IMAGE_ACTION_MESSAGES.unableToMoveStudy : IMAGE_ACTION_MESSAGES.unableToMoveCase,
      );
  }
}

/** An image action with the refresh of the study's lists (and, for moves into a case, that case). */
export function useImageAction(studyId: number) {
  const refresh = useRefresh();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: imageAction,
    onSuccess: async (_response, action) => {
      // The image as a viewer shows it (its details, its status).
      if (action.kind === 'edit' || action.kind === 'passQc' || action.kind === 'acceptAi')
        await queryClient.invalidateQueries({ queryKey: imageQueryKey(action.imageId) });
      if (action.kind === 'assign' || action.kind === 'passQc') await refresh(studyId, [action.caseId]);
      else if (action.kind !== 'moveStudy' && action.kind !== 'moveCase') await refresh(studyId);
      else if (!action.preview) await refresh(studyId, action.kind === 'moveCase' ? [action.target] : []);
    },
  });
}

/** Refresh after a bulk action (once, at the end). */
export function useRefreshStudy() {
  return useRefresh();
}
