import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  QUERY_ISSUE_PERMISSION,
  QUERY_LIST_PERMISSION,
  QUERY_MESSAGES,
  VIEW_QUERIES_TAB_PERMISSION,
  closeQueryRequestSchema,
  createQueryReasonRequestSchema,
  createQueryRequestSchema,
  queriesOfObjectResponseSchema,
  queryActionResponseSchema,
  queryCommentRequestSchema,
  queryListRequestSchema,
  queryListResponseSchema,
  queryMetadataQuerySchema,
  queryMetadataResponseSchema,
  queryReasonResponseSchema,
  queryReasonsResponseSchema,
  queryReminderRequestSchema,
  queryStatsQuerySchema,
  queryStatsResponseSchema,
  resolveQueryRequestSchema,
  unresolvableQueryRequestSchema,
  updateQueryReasonRequestSchema,
  type Permission,
} from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import { policy, scope, studyFromBody, studyFromQuery } from '../../platform/rbac/policy.js';
import { actorOf, principalOf } from '../../platform/http/requestContext.js';
import { idParams } from '../../platform/http/params.js';
import { caseScope } from '../../access/caseScope.js';
import { imageScopeOf } from '../../access/imageScope.js';
import { QueryService } from './queryService.js';
import { QueryReasonService } from './queryReasonService.js';
import { queryScope } from '../../access/queryVisibility.js';
import { queriesOfCase, queriesOfImage, queryStats } from './queryQueries.js';

const caseIdParams = z.object({ caseId: idParams.shape.id });
const imageIdParams = z.object({ imageId: idParams.shape.id });

const LIST: readonly Permission[] = [QUERY_LIST_PERMISSION.CASE, QUERY_LIST_PERMISSION.IMAGE];
const ISSUE: readonly Permission[] = [QUERY_ISSUE_PERMISSION.CASE, QUERY_ISSUE_PERMISSION.IMAGE];
const CLOSE: readonly Permission[] = [
  'Q_Close_CancelQueryunderUserRoleOnly',
  'Q_Close_CancelQueryunderassignedstudies',
];
/** The list and stats, and the metadata the wizard and the list's role filter read. */
const VIEW_OR_ISSUE: readonly Permission[] = [...LIST, ...ISSUE, VIEW_QUERIES_TAB_PERMISSION];

/**
 * Queries (issue 15; doc 3 §7): the metadata, the queries of a case or an image, the lifecycle
 * calls, the queries list and its stats, and the reason catalogue of system admins. Each handler
 * parses, calls the service and presents; the rules are the domain's (queryActionsFor …) applied
 * by QueryService, the visibility is principalSeesQuery.
 */
export function queryRoutes(db: Db) {
  const queries = new QueryService(db);
  const reasons = new QueryReasonService(db);
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();
    const answer = async (request: FastifyRequest, id: number, message: string) => ({
      success: true as const,
      message,
      query: await queries.view(principalOf(request), id),
    });

    r.get(
      '/api/queries/metadata',
      {
        config: { policy: policy.anyOf(VIEW_OR_ISSUE, studyFromQuery('studyId')) },
        schema: { querystring: queryMetadataQuerySchema, response: { 200: queryMetadataResponseSchema } },
      },
      async (request) => reasons.metadata(principalOf(request)),
    );

    r.get(
      '/api/queries/case/:caseId',
      {
        config: { policy: policy.anyOf([VIEW_QUERIES_TAB_PERMISSION], caseScope('caseId')) },
        schema: { params: caseIdParams, response: { 200: queriesOfObjectResponseSchema } },
      },
      async (request) => {
        const principal = principalOf(request);
        const rows = await queriesOfCase(db, principal, request.params.caseId);
        return { success: true as const, queries: await queries.present(principal, rows) };
      },
    );

    r.get(
      '/api/queries/image/:imageId',
      {
        config: { policy: policy.anyOf([VIEW_QUERIES_TAB_PERMISSION], imageScopeOf('imageId')) },
        schema: { params: imageIdParams, response: { 200: queriesOfObjectResponseSchema } },
      },
      async (request) => {
        const principal = principalOf(request);
        const rows = await queriesOfImage(db, principal, request.params.imageId);
        return { success: true as const, queries: await queries.present(principal, rows) };
      },
    );

    r.post(
      '/api/queries/new',
      {
        config: { policy: policy.anyOf(ISSUE, studyFromBody('studyId')) },
        schema: { body: createQueryRequestSchema, response: { 201: queryActionResponseSchema } },
      },
      async (request, reply) => {
        const id = await queries.create(principalOf(request), actorOf(request), request.body);
        return reply.code(201).send(await answer(request, id, QUERY_MESSAGES.created));
      },
    );

    r.post(
      '/api/queries/:id/comment',
      {
        config: { policy: policy.anyOf(['Q_Commentonassignedqueries'], queryScope) },
        schema: { params: idParams, body: queryCommentRequestSchema, response: { 200: queryActionResponseSchema } },
      },
      async (request) => {
        await queries.comment(principalOf(request), actorOf(request), request.params.id, request.body);
        return answer(request, request.params.id, QUERY_MESSAGES.commented);
      },
    );

    for (const method of ['patch', 'put'] as const) {
      r[method](
        '/api/queries/:id/resolve',
        {
          config: { policy: policy.anyOf(['Q_MarkQueryasResolved'], queryScope) },
          schema: { params: idParams, body: resolveQueryRequestSchema, response: { 200: queryActionResponseSchema } },
        },
        async (request) => {
          await queries.resolve(principalOf(request), actorOf(request), request.params.id, request.body);
          return answer(request, request.params.id, QUERY_MESSAGES.resolved);
        },
      );
    }

    r.patch(
      '/api/queries/:id/close',
      {
        config: { policy: policy.anyOf(CLOSE, queryScope) },
        schema: { params: idParams, body: closeQueryRequestSchema, response: { 200: queryActionResponseSchema } },
      },
      async (request) => {
        const outcome = await queries.close(principalOf(request), actorOf(request), request.params.id, request.body);
        return answer(
          request,
          request.params.id,
          outcome === 'cancelled' ? QUERY_MESSAGES.cancelled : QUERY_MESSAGES.closed,
        );
      },
    );

    r.patch(
      '/api/queries/:id/unresolvable',
      {
        config: { policy: policy.anyOf(['Q_MarkQueryasUnresolvable'], queryScope) },
        schema: {
          params: idParams,
          body: unresolvableQueryRequestSchema,
          response: { 200: queryActionResponseSchema },
        },
      },
      async (request) => {
        await queries.unresolvable(principalOf(request), actorOf(request), request.params.id, request.body);
        return answer(request, request.params.id, QUERY_MESSAGES.markedUnresolvable);
      },
    );

    r.post(
      '/api/queries/:id/reminder',
      {
        config: { policy: policy.anyOf(['Q_Flagforfollowup'], queryScope) },
        schema: { params: idParams, body: queryReminderRequestSchema, response: { 200: queryActionResponseSchema } },
      },
      async (request) => {
        await queries.followUp(principalOf(request), actorOf(request), request.params.id, request.body);
        return answer(request, request.params.id, QUERY_MESSAGES.followUpSet);
      },
    );

    r.post(
      '/api/queries',
      {
        config: {
          policy: policy.anyOf(
            LIST,
            scope.global('the queries list spans the studies the caller sees (principalSeesQuery filters by them)'),
          ),
        },
        schema: { body: queryListRequestSchema, response: { 200: queryListResponseSchema } },
      },
      async (request) => ({ success: true as const, ...(await queries.list(principalOf(request), request.body)) }),
    );

    r.get(
      '/api/queries/stats',
      {
        config: {
          policy: policy.anyOf(
            LIST,
            scope.global('the stats count the queries of the studies the caller sees (principalSeesQuery)'),
          ),
        },
        schema: { querystring: queryStatsQuerySchema, response: { 200: queryStatsResponseSchema } },
      },
      async (request) => {
        const s = await queryStats(db, principalOf(request), request.query.objectType);
        return {
          success: true as const,
          stats: {
            numOpen: s.num_open,
            numAnswered: s.num_answered,
            numClosed: s.num_closed,
            numOverdue: s.num_overdue,
          },
        };
      },
    );

    // The reason catalogue (system admins)

    r.get(
      '/api/query-reasons',
      {
        config: { policy: policy.systemAdmin() },
        schema: { response: { 200: queryReasonsResponseSchema } },
      },
      async () => ({ success: true as const, reasons: await reasons.list() }),
    );

    r.post(
      '/api/query-reasons',
      {
        config: { policy: policy.systemAdmin() },
        schema: { body: createQueryReasonRequestSchema, response: { 201: queryReasonResponseSchema } },
      },
      async (request, reply) =>
        reply.code(201).send({
          success: true as const,
          message: QUERY_MESSAGES.reasonCreated,
          reason: await reasons.create(actorOf(request), request.body),
        }),
    );

    r.patch(
      '/api/query-reasons/:id',
      {
        config: { policy: policy.systemAdmin() },
        schema: {
          params: idParams,
          body: updateQueryReasonRequestSchema,
          response: { 200: queryReasonResponseSchema },
        },
      },
      async (request) => ({
        success: true as const,
        message: QUERY_MESSAGES.reasonSaved,
        reason: await reasons.update(actorOf(request), request.params.id, request.body),
      }),
    );
  };
}
