import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import {
  CASE_MESSAGES,
  IM_CASE_COLUMNS,
  IM_IMAGE_COLUMNS,
  IMAGE_MESSAGES,
  imCaseListRequestSchema,
  imCaseListResponseSchema,
  imCaseRecordResponseSchema,
  imImageListRequestSchema,
  imImageListResponseSchema,
  imImageRecordResponseSchema,
  viewableColumns,
  editImColumnRequestSchema,
  editImColumnResponseSchema,
  IM_EDIT_PERMISSIONS,
  IM_EXPORT_PERMISSIONS,
  imCsvFileName,
  imExportColumns,
  imListQuerySchema,
  type ImCaseSortKey,
  type ImImageSortKey,
  type Permission,
  type RoleName,
} from '@lamina/domain';
import type { Principal } from '../../platform/auth/principal.js';
import type { Db } from '../../platform/db/database.js';
import { pageWindow, parseSort } from '../../platform/db/paging.js';
import { ForbiddenError, NotFoundError } from '../../platform/errors.js';
import { actorOf, principalOf } from '../../platform/http/requestContext.js';
import { idParams } from '../../platform/http/params.js';
import { policy, scope } from '../../platform/rbac/policy.js';
import { caseScope, caseStudyOf } from '../cases/caseScope.js';
import { imageScope, imageStudyOf } from '../images/imageScope.js';
import { ImEditService } from './imEditService.js';
import { caseRecord, casesQuery, imageRecord, imagesQuery, listCases, listImages } from './imQueries.js';
import { caseCsvCells, imageCsvCells, presentCaseRecord, presentImageRecord } from './imPresenter.js';
import { sendCsv } from '../../platform/http/csvStream.js';

export const IM_IMAGES_PERMISSION: Permission = 'IM_ImageListTab_ViewImageslistTab';
export const IM_CASES_PERMISSION: Permission = 'IM_CaseListTab_ViewPage';

/** A sort key the user may not view is no sort key for them (the order would tell the hidden values). */
function allowedSort<K extends string>(sort: K | `-${K}`, viewable: ReadonlySet<string>, fallback: `-${K}`) {
  const parsed = parseSort<K>(sort);
  return viewable.has(parsed.key) ? parsed : parseSort<K>(fallback);
}

/** The role the user works as (its default columns), by name. */
const roleOf = (principal: Principal) => (principal.workAsRole?.name ?? null) as RoleName | null;

/** Whether the body addresses a case (tabName 'cases'); otherwise the id is an image's. */
const addressesCase = (request: FastifyRequest) =>
  (request.body as { tabName?: unknown } | undefined)?.tabName === 'cases';

/** Edit Column's `{id}` is an image or a case, as its body's tabName says. */
const editColumnScope = scope.resource(
  'image or case (by tabName)',
  (request) => (addressesCase(request) ? CASE_MESSAGES.caseNotFound : IMAGE_MESSAGES.imageNotFound),
  (db, request, principal) =>
    addressesCase(request) ? caseStudyOf(db, request, principal) : imageStudyOf(db, request, principal),
);

/**
 * Image Management (doc 2 §2.1–2.2, §3, §7): the cross-study image and case lists over the studies
 * the user may see, and one-row refreshes. Every response holds only the columns the user's
 * permissions let them view (the domain's IM_IMAGE_COLUMNS / IM_CASE_COLUMNS).
 */
export function imageManagementRoutes(db: Db) {
  const edits = new ImEditService(db);
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();

    r.post(
      '/api/imageManagement/:id/editImageColumn',
      {
        config: { policy: policy.anyOf(IM_EDIT_PERMISSIONS, editColumnScope) },
        schema: { params: idParams, body: editImColumnRequestSchema, response: { 200: editImColumnResponseSchema } },
      },
      async (request) => {
        const principal = principalOf(request);
        // The tab itself: its list's view permission.
        const tab = request.body.tabName === 'cases' ? IM_CASES_PERMISSION : IM_IMAGES_PERMISSION;
        if (!principal.actions.has(tab)) throw new ForbiddenError();
        const message = await edits.editColumn(principal, actorOf(request), request.params.id, request.body);
        return { success: true as const, message };
      },
    );

    r.post(
      '/api/imageManagement/images',
      {
        config: {
          policy: policy.anyOf(
            [IM_IMAGES_PERMISSION],
            scope.global('lists the images of the studies the user may see (visibleStudies)'),
          ),
        },
        schema: {
          querystring: imListQuerySchema,
          body: imImageListRequestSchema,
          response: { 200: imImageListResponseSchema },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const body = request.body;
        const viewable = viewableColumns(IM_IMAGE_COLUMNS, principal.actions).map((c) => c.key);
        const { key, descending } = allowedSort<ImImageSortKey>(body.sort, new Set(viewable), '-uploadedAt');
        const options = {
          searchText: body.searchText?.trim() || undefined,
          studyIds: body.studyFilter?.selectedIds ?? [],
          dateFilter: body.dateFilter,
          statuses: body.imageStatusFilter ?? [],
          now: new Date(),
          searchIn: viewable,
          columns: viewable,
          sort: key,
          descending,
        };
        if (request.query.reportFormat === 'csv') {
          if (!principal.actions.has(IM_EXPORT_PERMISSIONS.images)) throw new ForbiddenError();
          const exported = imExportColumns(IM_IMAGE_COLUMNS, principal.actions, roleOf(principal), body.columns);
          const columns = exported.map((c) => c.key);
          return sendCsv(reply, {
            fileName: imCsvFileName('images', options.now),
            header: exported.map((c) => c.label),
            db,
            query: imagesQuery(db, principal, { ...options, columns }),
            cells: (row) => imageCsvCells(presentImageRecord(row), columns),
          });
        }
        const { rows, total } = await listImages(db, principal, {
          ...options,
          ...pageWindow(body.page, body.pageSize),
        });
        return { success: true as const, results: rows.map(presentImageRecord), total };
      },
    );

    r.post(
      '/api/imageManagement/cases',
      {
        config: {
          policy: policy.anyOf(
            [IM_CASES_PERMISSION],
            scope.global('lists the cases of the studies the user may see (visibleStudies)'),
          ),
        },
        schema: {
          querystring: imListQuerySchema,
          body: imCaseListRequestSchema,
          response: { 200: imCaseListResponseSchema },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const body = request.body;
        const viewable = viewableColumns(IM_CASE_COLUMNS, principal.actions).map((c) => c.key);
        const { key, descending } = allowedSort<ImCaseSortKey>(body.sort, new Set(viewable), '-caseCreatedAt');
        const options = {
          searchText: body.searchText?.trim() || undefined,
          studyIds: body.studyFilter?.selectedIds ?? [],
          dateFilter: body.dateFilter,
          statuses: body.caseStatusFilter ?? [],
          now: new Date(),
          searchIn: viewable,
          columns: viewable,
          sort: key,
          descending,
        };
        if (request.query.reportFormat === 'csv') {
          if (!principal.actions.has(IM_EXPORT_PERMISSIONS.cases)) throw new ForbiddenError();
          const exported = imExportColumns(IM_CASE_COLUMNS, principal.actions, roleOf(principal), body.columns);
          const columns = exported.map((c) => c.key);
          return sendCsv(reply, {
            fileName: imCsvFileName('cases', options.now),
            header: exported.map((c) => c.label),
            db,
            query: casesQuery(db, principal, { ...options, columns }),
            cells: (row) => caseCsvCells(presentCaseRecord(row), columns),
          });
        }
        const { rows, total } = await listCases(db, principal, { ...options, ...pageWindow(body.page, body.pageSize) });
        return { success: true as const, results: rows.map(presentCaseRecord), total };
      },
    );

    r.get(
      '/api/imageManagement/imageRecord/:id',
      {
        config: { policy: policy.anyOf([IM_IMAGES_PERMISSION], imageScope) },
        schema: { params: idParams, response: { 200: imImageRecordResponseSchema } },
      },
      async (request) => {
        const principal = principalOf(request);
        const columns = viewableColumns(IM_IMAGE_COLUMNS, principal.actions).map((c) => c.key);
        const row = await imageRecord(db, principal, request.params.id, columns);
        if (!row) throw new NotFoundError(IMAGE_MESSAGES.imageNotFound);
        return { success: true as const, results: presentImageRecord(row) };
      },
    );

    r.get(
      '/api/imageManagement/caseRecord/:id',
      {
        config: { policy: policy.anyOf([IM_CASES_PERMISSION], caseScope()) },
        schema: { params: idParams, response: { 200: imCaseRecordResponseSchema } },
      },
      async (request) => {
        const principal = principalOf(request);
        const columns = viewableColumns(IM_CASE_COLUMNS, principal.actions).map((c) => c.key);
        const row = await caseRecord(db, principal, request.params.id, columns);
        if (!row) throw new NotFoundError(CASE_MESSAGES.caseNotFound);
        return { success: true as const, results: presentCaseRecord(row) };
      },
    );
  };
}
