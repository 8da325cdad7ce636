import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  ARCHIVE_CASE_PERMISSION,
  CASE_COMMENT_PERMISSIONS,
  CASE_FORWARD_PERMISSIONS,
  CASE_MESSAGES,
  CREATE_CASE_PERMISSION,
  EDIT_CASE_PERMISSION,
  HOLD_CASE_PERMISSION,
  MANUAL_READER_PERMISSION,
  REVERT_STATUS_PERMISSIONS,
  VIEW_CASE_PERMISSIONS,
  assignImageRequestSchema,
  assignedCasesResponseSchema,
  caseImagesQuerySchema,
  caseImagesResponseSchema,
  caseReasonRequestSchema,
  caseResponseSchema,
  caseSearchQuerySchema,
  caseSearchResponseSchema,
  createCaseRequestSchema,
  editCaseRequestSchema,
  readsAssignedCasesOnly,
  readerSearchQuerySchema,
  readersResponseSchema,
  reopenReadRequestSchema,
  ASSIGN_ADJUDICATOR_PERMISSION,
  assignAdjudicatorRequestSchema,
  revertCaseRequestSchema,
  studyCaseListQuerySchema,
  studyCaseListResponseSchema,
  suggestReadersQuerySchema,
  IMAGE_ACTION_MESSAGES,
  IMAGE_QC_STEPS,
  caseCommentRequestSchema,
  forwardCaseRequestSchema,
  imageQcRequestSchema,
  imageActionResponseSchema,
  type Permission,
} from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import { policy, scope, studyFromBody, studyFromParam, studyFromQuery } from '../../platform/rbac/policy.js';
import { actorOf, principalOf } from '../../platform/http/requestContext.js';
import { idParams } from '../../platform/http/params.js';
import { caseScope } from '../../access/caseScope.js';
import { imageScope } from '../../access/imageScope.js';
import { CaseService } from './caseService.js';
import { assignedCases, searchStudyReaders, suggestReaders } from './caseQueries.js';
import { presentCaseImage, presentCaseSearchRow, presentReader, presentStudyCaseRow } from './casePresenter.js';

/** Who may search a study's cases: the case lists, and the Assign to Case and Move dialogs. */
const SEARCH_CASES: readonly Permission[] = [
  'S_Main_ViewCasesTab',
  'IM_CaseListTab_ViewPage',
  'IM_ImagesListTab_AssignImagetoCase',
  'S_ImageListTab_MoveImage',
];
/** Pass QC of an image: either step's permission (the service checks the step's own). */
const IMAGE_QC_PERMISSIONS: readonly Permission[] = IMAGE_QC_STEPS.map((s) => s.permission);
/** The case dialog's image search: creating or editing a case. */
const CASE_DIALOG: readonly Permission[] = [CREATE_CASE_PERMISSION, EDIT_CASE_PERMISSION];

const caseIdParams = z.object({ caseId: idParams.shape.id });
const readParams = z.object({ id: idParams.shape.id, readerId: idParams.shape.id });

/**
 * Cases (issue 11; spec doc 2 §7, doc 3 §7): create, read, edit, the status calls, image
 * assignment, the study page's case list, and the searches of the case dialog.
 */
export function caseRoutes(db: Db) {
  const cases = new CaseService(db);
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();
    const answer = async (request: Parameters<typeof principalOf>[0], caseId: number, message: string) => ({
      success: true as const,
      message,
      case: await cases.view(principalOf(request), caseId),
    });

    r.post(
      '/api/cases',
      {
        config: { policy: policy.anyOf([CREATE_CASE_PERMISSION], studyFromBody()) },
        schema: { body: createCaseRequestSchema, response: { 201: caseResponseSchema } },
      },
      async (request, reply) => {
        const id = await cases.create(principalOf(request), actorOf(request), request.body);
        return reply.code(201).send(await answer(request, id, CASE_MESSAGES.created));
      },
    );

    r.get(
      '/api/cases/assigned',
      {
        config: {
          policy: policy.anyOf(
            ['AP_CaseViewer_ViewCaseViewer'],
            scope.global('the caller’s own case assignments, in the studies the caller can see'),
          ),
        },
        schema: { response: { 200: assignedCasesResponseSchema } },
      },
      async (request) => ({
        success: true as const,
        cases: (await assignedCases(db, principalOf(request))).map((row) => ({
          id: row.id,
          studyId: row.study_id,
          studyName: row.study_name,
          procId: row.proc_id,
          histoProcedureId: row.histo_procedure_id,
          status: row.status,
          numberOfImages: row.number_of_images ?? 0,
          assignedAt: row.assigned_at.toISOString(),
          myReadAt: row.read_at ? row.read_at.toISOString() : null,
        })),
      }),
    );

    r.get(
      '/api/cases/:id',
      {
        config: { policy: policy.anyOf(VIEW_CASE_PERMISSIONS, caseScope()) },
        schema: { params: idParams, response: { 200: caseResponseSchema } },
      },
      async (request) => answer(request, request.params.id, ''),
    );

    r.patch(
      '/api/cases/:id',
      {
        config: { policy: policy.anyOf([EDIT_CASE_PERMISSION], caseScope()) },
        schema: { params: idParams, body: editCaseRequestSchema, response: { 200: caseResponseSchema } },
      },
      async (request) => {
        await cases.edit(principalOf(request), actorOf(request), request.params.id, request.body);
        return answer(request, request.params.id, CASE_MESSAGES.edited);
      },
    );

    r.patch(
      '/api/cases/:id/status/forward',
      {
        config: { policy: policy.anyOf(CASE_FORWARD_PERMISSIONS, caseScope()) },
        schema: { params: idParams, body: forwardCaseRequestSchema, response: { 200: caseResponseSchema } },
      },
      async (request) => {
        const message = await cases.forward(principalOf(request), actorOf(request), request.params.id, {
          includeAiCounts: request.body?.includeAiCounts,
          signaturePassword: request.body?.signaturePassword,
          sessionId: request.session?.sessionId,
        });
        return answer(request, request.params.id, message);
      },
    );

    r.patch(
      '/api/cases/:id/status/back',
      {
        config: { policy: policy.anyOf(REVERT_STATUS_PERMISSIONS, caseScope()) },
        schema: { params: idParams, body: revertCaseRequestSchema, response: { 200: caseResponseSchema } },
      },
      async (request) => {
        await cases.back(principalOf(request), actorOf(request), request.params.id, request.body);
        return answer(request, request.params.id, CASE_MESSAGES.reverted);
      },
    );

    r.patch(
      '/api/cases/:id/reads/:readerId/reopen',
      {
        // The roles that may revert status (PATCH /api/cases/{id}/status/back), in the case's study.
        config: { policy: policy.anyOf(REVERT_STATUS_PERMISSIONS, caseScope()) },
        schema: { params: readParams, body: reopenReadRequestSchema, response: { 200: caseResponseSchema } },
      },
      async (request) => {
        const { id, readerId } = request.params;
        await cases.reopenRead(actorOf(request), id, readerId, request.body.reasonForChange);
        return answer(request, id, CASE_MESSAGES.readReopened);
      },
    );

    // Issue 30: the adjudicator of a case pending adjudication, assigned by ISC or DM.
    r.patch(
      '/api/cases/:id/adjudicator',
      {
        config: { policy: policy.anyOf([ASSIGN_ADJUDICATOR_PERMISSION], caseScope()) },
        schema: { params: idParams, body: assignAdjudicatorRequestSchema, response: { 200: caseResponseSchema } },
      },
      async (request) => {
        await cases.assignAdjudicator(actorOf(request), request.params.id, request.body);
        return answer(request, request.params.id, CASE_MESSAGES.adjudicatorAssigned);
      },
    );

    for (const [path, on] of [
      ['on_hold', true],
      ['off_hold', false],
    ] as const) {
      r.patch(
        `/api/cases/:id/status/${path}`,
        {
          config: { policy: policy.anyOf([HOLD_CASE_PERMISSION], caseScope()) },
          schema: { params: idParams, body: caseReasonRequestSchema, response: { 200: caseResponseSchema } },
        },
        async (request) => {
          await cases.hold(actorOf(request), request.params.id, on, request.body.reasonForChange);
          return answer(request, request.params.id, on ? CASE_MESSAGES.held : CASE_MESSAGES.holdRemoved);
        },
      );
    }

    r.patch(
      '/api/cases/:id/archive',
      {
        config: { policy: policy.anyOf([ARCHIVE_CASE_PERMISSION], caseScope()) },
        schema: { params: idParams, body: caseReasonRequestSchema, response: { 200: caseResponseSchema } },
      },
      async (request) => {
        await cases.archive(principalOf(request), actorOf(request), request.params.id, request.body.reasonForChange);
        return answer(request, request.params.id, CASE_MESSAGES.archived);
      },
    );

    r.put(
      '/api/cases/:caseId/assign',
      {
        config: { policy: policy.anyOf(['IM_ImagesListTab_AssignImagetoCase'], caseScope('caseId')) },
        schema: { params: caseIdParams, body: assignImageRequestSchema, response: { 200: caseResponseSchema } },
      },
      async (request) => {
        await cases.assign(actorOf(request), request.params.caseId, request.body.imageId, request.body.reasonForChange);
        return answer(request, request.params.caseId, CASE_MESSAGES.assigned);
      },
    );

    r.patch(
      '/api/images/:id/pass-qc',
      {
        config: { policy: policy.anyOf(IMAGE_QC_PERMISSIONS, imageScope) },
        schema: { params: idParams, body: imageQcRequestSchema, response: { 200: imageActionResponseSchema } },
      },
      async (request) => {
        await cases.passImageQc(principalOf(request), actorOf(request), request.params.id, {
          signaturePassword: request.body?.signaturePassword,
          sessionId: request.session?.sessionId,
        });
        return { success: true as const, message: IMAGE_ACTION_MESSAGES.passedQc, imageId: request.params.id };
      },
    );

    r.patch(
      '/api/cases/:id/comment',
      {
        config: { policy: policy.anyOf(CASE_COMMENT_PERMISSIONS, caseScope()) },
        schema: { params: idParams, body: caseCommentRequestSchema, response: { 200: caseResponseSchema } },
      },
      async (request) => {
        await cases.comment(principalOf(request), actorOf(request), request.params.id, request.body);
        return answer(request, request.params.id, CASE_MESSAGES.commentAdded);
      },
    );

    r.get(
      '/api/cases',
      {
        config: { policy: policy.anyOf(SEARCH_CASES, studyFromQuery()) },
        schema: { querystring: caseSearchQuerySchema, response: { 200: caseSearchResponseSchema } },
      },
      async (request) => {
        const principal = principalOf(request);
        const rows = await cases.search(principal, request.query);
        return { success: true as const, cases: rows.map((row) => presentCaseSearchRow(row, principal)) };
      },
    );

    r.get(
      '/api/studies/:id/cases',
      {
        config: { policy: policy.anyOf(['S_Main_ViewCasesTab'], studyFromParam('id')) },
        schema: {
          params: idParams,
          querystring: studyCaseListQuerySchema,
          response: { 200: studyCaseListResponseSchema },
        },
      },
      async (request) => {
        const principal = principalOf(request);
        const { rows, total } = await cases.studyCases(principal, request.params.id, request.query);
        return { success: true as const, cases: rows.map((row) => presentStudyCaseRow(row, principal)), total };
      },
    );

    r.get(
      '/api/studies/:id/users',
      {
        // The case dialog's reader search, and the Cases tab's assignee filter.
        config: { policy: policy.anyOf([MANUAL_READER_PERMISSION, 'S_Main_ViewCasesTab'], studyFromParam('id')) },
        schema: { params: idParams, querystring: readerSearchQuerySchema, response: { 200: readersResponseSchema } },
      },
      async (request) => {
        const principal = principalOf(request);
        const rows = await searchStudyReaders(db, request.params.id, request.query.name?.trim() || undefined);
        // A blinded reader learns of no other reader (independent reads): only themselves.
        const visible = readsAssignedCasesOnly(principal.workAsRole) ? rows.filter((r) => r.id === principal.id) : rows;
        return { success: true as const, readers: visible.map(presentReader) };
      },
    );

    r.get(
      '/api/users/suggest-readers',
      {
        config: { policy: policy.anyOf([MANUAL_READER_PERMISSION], studyFromQuery()) },
        schema: { querystring: suggestReadersQuerySchema, response: { 200: readersResponseSchema } },
      },
      async (request) => ({
        success: true as const,
        readers: (await suggestReaders(db, request.query.studyId, request.query.subjectId?.trim() || undefined)).map(
          presentReader,
        ),
      }),
    );

    r.get(
      '/api/studies/:id/cases/images',
      {
        config: { policy: policy.anyOf(CASE_DIALOG, studyFromParam('id')) },
        schema: { params: idParams, querystring: caseImagesQuerySchema, response: { 200: caseImagesResponseSchema } },
      },
      async (request) => {
        const principal = principalOf(request);
        const rows = await cases.assignableImages(principal, request.params.id, request.query);
        return { success: true as const, images: rows.map((row) => presentCaseImage(row, principal, null)) };
      },
    );
  };
}
