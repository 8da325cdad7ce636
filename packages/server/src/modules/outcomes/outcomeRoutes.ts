import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import {
  CASE_OUTCOMES_PERMISSIONS,
  READ_OUTCOMES_PERMISSION,
  caseOutcomesResponseSchema,
  outcomePairsQuerySchema,
  outcomePairsResponseSchema,
  studyAgreementResponseSchema,
  studyOutcomeListQuerySchema,
  studyOutcomeListResponseSchema,
} from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import { policy, studyFromParam } from '../../platform/rbac/policy.js';
import { principalOf } from '../../platform/http/requestContext.js';
import { idParams } from '../../platform/http/params.js';
import { caseScope } from '../../access/caseScope.js';
import { OutcomeService } from './outcomeService.js';

/**
 * Read outcomes (issue 30, docs/OUTCOMES.md). GET /api/studies/{id}/agreement: the roles that see
 * every reader's values, in their studies. GET /api/cases/{id}/outcomes: the roles that see
 * results, and a case's readers (their own values only: the service's onlyOutcomesOf); a case the
 * user cannot see — for a reader, one not assigned to them — answers 404 (caseScope).
 */
export function outcomeRoutes(db: Db) {
  const outcomes = new OutcomeService(db);
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();
    r.get(
      '/api/cases/:id/outcomes',
      {
        config: { policy: policy.anyOf(CASE_OUTCOMES_PERMISSIONS, caseScope()) },
        schema: { params: idParams, response: { 200: caseOutcomesResponseSchema } },
      },
      async (request) => ({
        success: true as const,
        ...(await outcomes.caseOutcomes(principalOf(request), request.params.id)),
      }),
    );

    // The agreement between a study's readers: only the roles that see every reader's values.
    r.get(
      '/api/studies/:id/agreement',
      {
        config: { policy: policy.anyOf([READ_OUTCOMES_PERMISSION], studyFromParam('id')) },
        schema: { params: idParams, response: { 200: studyAgreementResponseSchema } },
      },
      async (request) => ({ success: true as const, endpoints: await outcomes.studyAgreement(request.params.id) }),
    );

    // The study's Reads tab (issue 30): every reader's values per case, and the charts' value pairs;
    // as the agreement, only the roles that see every reader's values, in their studies.
    r.get(
      '/api/studies/:id/outcomes',
      {
        config: { policy: policy.anyOf([READ_OUTCOMES_PERMISSION], studyFromParam('id')) },
        schema: {
          params: idParams,
          querystring: studyOutcomeListQuerySchema,
          response: { 200: studyOutcomeListResponseSchema },
        },
      },
      async (request) => ({
        success: true as const,
        ...(await outcomes.studyOutcomeCases(principalOf(request), request.params.id, request.query)),
      }),
    );

    r.get(
      '/api/studies/:id/outcomes/pairs',
      {
        config: { policy: policy.anyOf([READ_OUTCOMES_PERMISSION], studyFromParam('id')) },
        schema: {
          params: idParams,
          querystring: outcomePairsQuerySchema,
          response: { 200: outcomePairsResponseSchema },
        },
      },
      async (request) => ({
        success: true as const,
        pairs: await outcomes.studyOutcomePairs(request.params.id, request.query.endpointKey),
      }),
    );
  };
}
