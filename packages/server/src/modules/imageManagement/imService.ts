import type { FastifyReply } from 'fastify';
import type { Compilable } from 'kysely';
import type { z } from 'zod';
import {
  CASE_MESSAGES,
  IM_CASE_COLUMNS,
  IM_EXPORT_PERMISSIONS,
  IM_IMAGE_COLUMNS,
  IMAGE_MESSAGES,
  imCsvFileName,
  imExportColumns,
  mayEditImColumn,
  viewableColumns,
  type CsvValue,
  type ImCaseRecord,
  type ImCaseSortKey,
  type ImColumn,
  type ImDateFilter,
  type ImImageRecord,
  type ImImageSortKey,
  type RoleName,
  type imCaseListRequestSchema,
  type imImageListRequestSchema,
} from '@lamina/domain';
import type { Principal } from '../../platform/auth/principal.js';
import type { Db } from '../../platform/db/database.js';
import { pageWindow, parseSort } from '../../platform/db/paging.js';
import { ForbiddenError, NotFoundError } from '../../platform/errors.js';
import { sendCsv } from '../../platform/http/csvStream.js';
import {
  caseRecord,
  casesQuery,
  imageRecord,
  imagesQuery,
  listCases,
  listImages,
  searchCaseIds,
  type ImageRecordRow,
} from './imQueries.js';
import { caseCsvCells, imageCsvCells, presentCaseRecord, presentImageRecord } from './imPresenter.js';

type ImageListBody = z.output<typeof imImageListRequestSchema>;
type CaseListBody = z.output<typeof imCaseListRequestSchema>;

/** Each tab's order when the one asked for is not the user's to sort by: the newest first. */
const IMAGE_DEFAULT_SORT: `-${ImImageSortKey}` = '-uploadedAt';
const CASE_DEFAULT_SORT: `-${ImCaseSortKey}` = '-caseCreatedAt';

/** A sort key the user may not view is no sort key for them (the order would tell the hidden values). */
function allowedSort<K extends string>(sort: K | `-${K}`, viewable: ReadonlySet<string>, fallback: `-${K}`) {
  const parsed = parseSort<K>(sort);
  return viewable.has(parsed.key) ? parsed : parseSort<K>(fallback);
}

/** The image columns the user may edit with Edit Column (each row says which of them it refuses). */
const editableImageColumns = (principal: Principal) =>
  IM_IMAGE_COLUMNS.filter((c) => mayEditImColumn(c, principal.actions)).map((c) => c.key);

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

/** A tab, its types inferred from its columns, sort and presenter. */
const listTab = <K extends string, S extends K, Row, Rec>(tab: ListTab<K, S, Row, Rec>) => tab;

/**
 * A list call's options for `principal`: the columns the user may view are the only ones searched,
 * sorted by and sent; then the filters, and the search's candidate ids when the tab has them.
 */
async function listOptions<K extends string, S extends K, Row, Rec>(
  principal: Principal,
  body: ListBody<S>,
  tab: ListTab<K, S, Row, Rec>,
): Promise<ListOptions<K, S>> {
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
  return options;
}

/** One page of a tab's records with the total. */
async function page<K extends string, S extends K, Row, Rec>(
  principal: Principal,
  body: ListBody<S>,
  tab: ListTab<K, S, Row, Rec>,
): Promise<{ results: Rec[]; total: number }> {
  const options = await listOptions(principal, body, tab);
  const { rows, total } = await tab.list(principal, { ...options, ...pageWindow(body.page, body.pageSize) });
  return { results: rows.map(tab.present), total };
}

/**
 * Every row of a tab as CSV from a cursor, for holders of the tab's export permission (else 403):
 * the columns the user shows of those they may view.
 */
async function csv<K extends string, S extends K, Row, Rec>(
  db: Db,
  reply: FastifyReply,
  principal: Principal,
  body: ListBody<S>,
  tab: ListTab<K, S, Row, Rec>,
): Promise<FastifyReply> {
  if (!principal.actions.has(IM_EXPORT_PERMISSIONS[tab.tab])) throw new ForbiddenError();
  const options = await listOptions(principal, body, tab);
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

/**
 * Image Management (doc 2 §2.1–2.2, §3, §7): the cross-study image and case lists over the studies
 * the user may see — a page, or with `?reportFormat=csv` and the tab's export permission every row —
 * and one-row refreshes. Every answer holds only the columns the user's permissions let them view
 * (the domain's IM_IMAGE_COLUMNS / IM_CASE_COLUMNS), and only those are searched and sorted by.
 */
export class ImageManagementService {
  constructor(private readonly db: Db) {}

  /** `editable`: the columns the user may edit, whose refusals each row carries (none in a CSV). */
  private imagesTab(body: ImageListBody, editable: readonly string[] = []) {
    const { db } = this;
    const statuses = body.imageStatusFilter ?? [];
    return listTab({
      tab: 'images',
      columns: IM_IMAGE_COLUMNS,
      defaultSort: IMAGE_DEFAULT_SORT,
      query: (principal, options) => imagesQuery(db, principal, { ...options, statuses }),
      list: (principal, options) => listImages(db, principal, { ...options, statuses }),
      present: (row: ImageRecordRow) => presentImageRecord(row, editable),
      cells: imageCsvCells,
    });
  }

  private casesTab(body: CaseListBody) {
    const { db } = this;
    const statuses = body.caseStatusFilter ?? [];
    return listTab({
      tab: 'cases',
      columns: IM_CASE_COLUMNS,
      defaultSort: CASE_DEFAULT_SORT,
      query: (principal, options) => casesQuery(db, principal, { ...options, statuses }),
      list: (principal, options) => listCases(db, principal, { ...options, statuses }),
      present: presentCaseRecord,
      cells: caseCsvCells,
      searchIds: (options) => searchCaseIds(db, options),
    });
  }

  /** POST /api/imageManagement/images: one page of the Images tab. */
  async listImages(principal: Principal, body: ImageListBody): Promise<{ results: ImImageRecord[]; total: number }> {
    return page(principal, body, this.imagesTab(body, editableImageColumns(principal)));
  }

  /** POST /api/imageManagement/images?reportFormat=csv: the Images tab's CSV export. */
  async exportImages(reply: FastifyReply, principal: Principal, body: ImageListBody): Promise<FastifyReply> {
    return csv(this.db, reply, principal, body, this.imagesTab(body));
  }

  /** POST /api/imageManagement/cases: one page of the Cases tab. */
  async listCases(principal: Principal, body: CaseListBody): Promise<{ results: ImCaseRecord[]; total: number }> {
    return page(principal, body, this.casesTab(body));
  }

  /** POST /api/imageManagement/cases?reportFormat=csv: the Cases tab's CSV export. */
  async exportCases(reply: FastifyReply, principal: Principal, body: CaseListBody): Promise<FastifyReply> {
    return csv(this.db, reply, principal, body, this.casesTab(body));
  }

  /** GET /api/imageManagement/imageRecord/{id}: one image's row, its viewable columns (the scope checked it). */
  async imageRecord(principal: Principal, imageId: number): Promise<ImImageRecord> {
    const columns = viewableColumns(IM_IMAGE_COLUMNS, principal.actions).map((c) => c.key);
    const row = await imageRecord(this.db, principal, imageId, columns);
    if (!row) throw new NotFoundError(IMAGE_MESSAGES.imageNotFound);
    return presentImageRecord(row, editableImageColumns(principal));
  }

  /** GET /api/imageManagement/caseRecord/{id}: one case's row, its viewable columns (the scope checked it). */
  async caseRecord(principal: Principal, caseId: number): Promise<ImCaseRecord> {
    const columns = viewableColumns(IM_CASE_COLUMNS, principal.actions).map((c) => c.key);
    const row = await caseRecord(this.db, principal, caseId, columns);
    if (!row) throw new NotFoundError(CASE_MESSAGES.caseNotFound);
    return presentCaseRecord(row);
  }
}
