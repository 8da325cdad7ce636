import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Compilable } from 'kysely';
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
  IM_EXPORT_PERMISSIONS,
  imCsvFileName,
  imExportColumns,
  imListQuerySchema,
  type CsvValue,
  type ImColumn,
  type ImDateFilter,
  type RoleName,
} from '@lamina/domain';
import type { Principal } from '../../platform/auth/principal.js';
import type { Db } from '../../platform/db/database.js';
import { pageWindow, parseSort } from '../../platform/db/paging.js';
import { ForbiddenError, NotFoundError } from '../../platform/errors.js';
import { principalOf } from '../../platform/http/requestContext.js';
import { idParams } from '../../platform/http/params.js';
import { policy, scope } from '../../platform/rbac/policy.js';
import { caseScope } from '../../access/caseScope.js';
import { imageScope } from '../../access/imageScope.js';
import { IM_CASES_PERMISSION, IM_IMAGES_PERMISSION } from './imageColumns.js';
import { caseRecord, casesQuery, imageRecord, imagesQuery, listCases, listImages, searchCaseIds } from './imQueries.js';
import { caseCsvCells, imageCsvCells, presentCaseRecord, presentImageRecord } from './imPresenter.js';
import { sendCsv } from '../../platform/http/csvStream.js';

/** A sort key the user may not view is no sort key for them (the order would tell the hidden values). */
function allowedSort<K extends string>(sort: K | `-${K}`, viewable: ReadonlySet<string>, fallback: `-${K}`) {
  const parsed = parseSort<K>(sort);
  return viewable.has(parsed.key) ? parsed : parseSort<K>(fallback);
}

/** The role the user works as (its default columns), by name. */
const roleOf = (principal: Principal) => (principal.workAsRole?.name ?? null) as RoleName | null;

/** What a list's request carries besides its statuses (both tabs' bodies). */
interface ListBody<S extends string> {
  searchText?: string | undefined;
  studyFilter?: { selectedIds: number[] } | undefined;
  dateFilter?: ImDateFilter | null | undefined;
  sort: S | `-${S}`;
  page: number;
  pageSize: number;
  columns?: string[] | undefined;
}

/** What answerList needs of a list request. */
const callOf = <S extends string>(
  request: FastifyRequest & { body: ListBody<S>; query: { reportFormat?: 'csv' | undefined } },
  reply: FastifyReply,
) => ({ principal: principalOf(request), body: request.body, csv: request.query.reportFormat === 'csv', reply });

/** The list options both tabs' queries take (their statuses added by the tab). */
interface ListOptions<K extends string, S extends string> {
  searchText: string | undefined;
  studyIds: readonly number[];
  dateFilter: ImDateFilter | null | undefined;
  now: Date;
  searchIn: readonly K[];
  columns: readonly K[];
  sort: S;
  descending: boolean;
  searchIds?: readonly number[] | null;
}

interface ListTab<K extends string, S extends string, Row, Rec> {
  tab: 'images' | 'cases';
  columns: readonly ImColumn<K>[];
  defaultSort: `-${S}`;
  query: (principal: Principal, options: ListOptions<K, S>) => Compilable<Row>;
  list: (
    principal: Principal,
    options: ListOptions<K, S> & { limit?: number; offset?: number },
  ) => Promise<{ rows: Row[]; total: number }>;
  present: (row: Row) => Rec;
  cells: (record: Rec, columns: K[]) => CsvValue[];
  /** The search's candidate ids, fetched before the list (searchCaseIds), when the tab has them. */
  searchIds?: (options: ListOptions<K, S>) => Promise<number[] | null>;
}

/**
 * One list call of either tab: the columns the user may view (searched, sorted by, sent), the
 * filters, then a page of records with the total — or, with `?reportFormat=csv` and the tab's
 * export permission, every row as CSV from a cursor, the columns the user shows of those.
 */
async function answerList<K extends string, S extends K, Row, Rec>(
  db: Db,
  call: { principal: Principal; body: ListBody<S>; csv: boolean; reply: FastifyReply },
  tab: ListTab<K, S, Row, Rec>,
) {
  const { principal, body, reply } = call;
  const viewable = viewableColumns(tab.columns, principal.actions).map((c) => c.key);
  const { key, descending } = allowedSort<S>(body.sort, new Set<string>(viewable), tab.defaultSort);
  const options: ListOptions<K, S> = {
    searchText: body.searchText?.trim() || undefined,
    studyIds: body.studyFilter?.selectedIds ?? [],
    dateFilter: body.dateFilter,
    now: new Date(),
    searchIn: viewable,
    columns: viewable,
    sort: key,
    descending,
  };
  if (tab.searchIds) options.searchIds = await tab.searchIds(options);
  if (call.csv) {
    if (!principal.actions.has(IM_EXPORT_PERMISSIONS[tab.tab])) throw new ForbiddenError();
    const exported = imExportColumns(tab.columns, principal.actions, roleOf(principal), body.columns);
    const columns = exported.map((c) => c.key);
    return sendCsv(reply, {
      fileName: imCsvFileName(tab.tab, options.now),
      header: exported.map((c) => c.label),
      db,
      query: tab.query(principal, { ...options, columns }),
      cells: (row) => tab.cells(tab.present(row), columns),
    });
  }
  const { rows, total } = await tab.list(principal, { ...options, ...pageWindow(body.page, body.pageSize) });
  return { success: true as const, results: rows.map(tab.present), total };
}

/**
 * Image Management (doc 2 §2.1–2.2, §3, §7): the cross-study image and case lists over the studies
 * the user may see, and one-row refreshes. Every response holds only the columns the user's
 * permissions let them view (the domain's IM_IMAGE_COLUMNS / IM_CASE_COLUMNS).
 */
export function imageManagementRoutes(db: Db) {
  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();

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
        const statuses = request.body.imageStatusFilter ?? [];
        return answerList(db, callOf(request, reply), {
          tab: 'images',
          columns: IM_IMAGE_COLUMNS,
          defaultSort: '-uploadedAt',
          query: (principal, options) => imagesQuery(db, principal, { ...options, statuses }),
          list: (principal, options) => listImages(db, principal, { ...options, statuses }),
          present: presentImageRecord,
          cells: imageCsvCells,
        });
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
        const statuses = request.body.caseStatusFilter ?? [];
        return answerList(db, callOf(request, reply), {
          tab: 'cases',
          columns: IM_CASE_COLUMNS,
          defaultSort: '-caseCreatedAt',
          query: (principal, options) => casesQuery(db, principal, { ...options, statuses }),
          list: (principal, options) => listCases(db, principal, { ...options, statuses }),
          present: presentCaseRecord,
          cells: caseCsvCells,
          searchIds: (options) => searchCaseIds(db, options),
        });
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
