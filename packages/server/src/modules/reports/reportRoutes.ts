import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import {
  AUDIT_TRAIL_PERMISSIONS,
  REPORT_PERMISSION,
  auditTrailQuerySchema,
  reportQuerySchema,
  reportTypeParamsSchema,
  studyReportParamsSchema,
  type Permission,
} from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import { policy, scope, studyFromParam } from '../../platform/rbac/policy.js';
import { actorOf, principalOf } from '../../platform/http/requestContext.js';
import { ReportService } from './reportService.js';

const AUDIT_TRAIL: readonly Permission[] = [...new Set(Object.values(AUDIT_TRAIL_PERMISSIONS).flat())];
const REPORTS: readonly Permission[] = [...new Set(Object.values(REPORT_PERMISSION))];

/**
 * The study of a request's `?studyId=`, when there is one: an absent study is the Global export
 * (system admins; the service decides), a present one must be visible (404 otherwise).
 */
const optionalStudyFromQuery = scope.study(
  (request) => (request.query as { studyId?: number } | undefined)?.studyId ?? null,
);

/**
 * Reports and the audit trail (issue 16; doc 1 §2.9, §7): CSV and PDF files streamed from database
 * cursors. The rules (formats, Global, celiac) are ReportService's; docs/REPORTS.md lists the columns.
 */
export function reportRoutes(db: Db) {
  const reports = new ReportService(db);
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();

    r.get(
      '/api/audit-trail',
      {
        config: { policy: policy.anyOf(AUDIT_TRAIL, optionalStudyFromQuery) },
        schema: { querystring: auditTrailQuerySchema },
      },
      async (request, reply) => reports.auditTrail(reply, principalOf(request), actorOf(request), request.query),
    );

    r.get(
      '/api/report/:studyId/:type',
      {
        config: { policy: policy.anyOf(REPORTS, studyFromParam('studyId')) },
        schema: { params: studyReportParamsSchema, querystring: reportQuerySchema },
      },
      async (request, reply) =>
        reports.report(
          reply,
          principalOf(request),
          actorOf(request),
          request.params.type,
          request.params.studyId,
          request.query,
        ),
    );

    r.get(
      '/api/report/:type',
      {
        config: { policy: policy.anyOf(REPORTS, optionalStudyFromQuery) },
        schema: { params: reportTypeParamsSchema, querystring: reportQuerySchema },
      },
      async (request, reply) =>
        reports.report(
          reply,
          principalOf(request),
          actorOf(request),
          request.params.type,
          request.query.studyId ?? null,
          request.query,
        ),
    );
  };
}
