import { PassThrough } from 'node:stream';
import type { FastifyReply } from 'fastify';
import type { Compilable, Kysely } from 'kysely';
import {
  AUDIT_TRAIL_PERMISSIONS,
  GLOBAL_REPORTS,
  MESSAGES,
  REPORT_MESSAGES,
  REPORT_PERMISSION,
  VIEW_FILE_NAME_PERMISSION,
  auditTrailFileName,
  endpointsSchema,
  isCeliacStudy,
  isTimeZone,
  isWorkingAsSystemAdmin,
  reportFileName,
  reportRange,
  zonedStamp,
  type AuditTrailQuery,
  type ReportQuery,
  type ReportType,
} from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import type { DB } from '../../platform/db/schema.js';
import type { Principal } from '../../platform/auth/principal.js';
import { readAuditHead, recordAudit, type Actor } from '../../platform/audit/audit.js';
import { verifyAuditRange } from '../../platform/audit/verify.js';
import { BadRequestError, ForbiddenError, NotFoundError } from '../../platform/errors.js';
import { sendCsv } from '../../platform/http/csvStream.js';
import {
  auditTrailCells,
  auditTrailQuery,
  AUDIT_TRAIL_HEADER,
  zonedClock,
  type AuditTrailDbRow,
} from './auditTrailRows.js';
import { writeAuditTrailPdf } from './auditTrailPdf.js';
import { onlyOutcomesOf } from '../outcomes/outcomeService.js';
import { studyEndpointsJson } from '../outcomes/outcomeQueries.js';
import { AuditValueRenderer } from './auditTrailValues.js';
import {
  accessQuery,
  celiacQuery,
  hpfQuery,
  imageDetailsQuery,
  pointClasses,
  queryReportQuery,
  readOutcomesQuery,
  type ReportFilter,
} from './reportQueries.js';
import {
  accessLayout,
  celiacLayout,
  hpfLayout,
  imageDetailsLayout,
  queryLayout,
  readOutcomesLayout,
  type ReportLayout,
} from './reportColumns.js';

interface StudyRef {
  id: number;
  name: string;
  indications: string[];
}

/**
 * Reports and the audit trail export (issue 16): who may download what (the R_* permissions, PDF
 * only or PDF and CSV, Global only for system admins), the filters' rules, the export's own audit
 * event, and the streamed file. The route's scope has checked the study is visible.
 */
export class ReportService {
  constructor(private readonly db: Db) {}

  private async study(studyId: number): Promise<StudyRef> {
    const row = await this.db
      .selectFrom('studies')
      .select(['id', 'name', 'indications'])
      .where('id', '=', studyId)
      .executeTakeFirst();
    if (!row) throw new NotFoundError(MESSAGES.studyNotFound);
    return row;
  }

  /** The time zone and date range of a request, or 400 with the section's message and why. */
  private window(spec: string, query: { tz?: string | undefined; startDate?: string; endDate?: string }) {
    const zone = query.tz?.trim() || 'UTC';
    if (!isTimeZone(zone)) throw new BadRequestError(`${spec}: ${REPORT_MESSAGES.invalidTimeZone}`);
    const range = reportRange(query.startDate || undefined, query.endDate || undefined, zone);
    if ('error' in range) throw new BadRequestError(`${spec}: ${range.error}`);
    return { zone, ...range };
  }

  /** GET /api/audit-trail. */
  async auditTrail(reply: FastifyReply, principal: Principal, actor: Actor, query: AuditTrailQuery) {
    const format = query.reportFormat;
    const spec = REPORT_MESSAGES.unableToFetchAuditTrail(format);
    if (!AUDIT_TRAIL_PERMISSIONS[format].some((p) => principal.actions.has(p)))
      throw new ForbiddenError(`${spec}: ${REPORT_MESSAGES.formatNotAllowed}`);
    const admin = isWorkingAsSystemAdmin(principal);
    if (query.studyId === undefined && !admin) throw new BadRequestError(`${spec}: ${REPORT_MESSAGES.studyRequired}`);
    if (query.userId !== undefined && !admin)
      throw new ForbiddenError(`${spec}: ${REPORT_MESSAGES.userFilterSystemAdminOnly}`);
    const { zone, from, to } = this.window(spec, query);
    const study = query.studyId === undefined ? null : await this.study(query.studyId);
    const user =
      query.userId === undefined
        ? null
        : await this.db
            .selectFrom('users')
            .select(['id', 'username'])
            .where('id', '=', query.userId)
            .executeTakeFirst();
    if (query.userId !== undefined && !user) throw new NotFoundError(`${spec}: user ${query.userId} not found`);

    const now = new Date();
    const maxId = (await readAuditHead(this.db))?.id ?? 0;
    const filters = {
      format,
      study: study?.name ?? 'Global',
      user: user?.username ?? null,
      startDate: query.startDate ?? null,
      endDate: query.endDate ?? null,
      timeZone: zone,
      upToEvent: maxId,
    };
    await this.db.transaction().execute((tx) =>
      recordAudit(tx, actor, [
        {
          action: 'AUDIT_TRAIL_EXPORTED',
          entityType: 'study',
          entityId: study?.id ?? null,
          studyId: study?.id ?? null,
          newValue: filters,
        },
      ]),
    );
    const fileNames = principal.actions.has(VIEW_FILE_NAME_PERMISSION);
    const rows = auditTrailQuery(this.db, {
      studyId: study?.id ?? null,
      userId: user?.id ?? null,
      from,
      to,
      maxId,
      imageNames: fileNames,
    });
    const local = zonedClock(zone);
    // Old and New Value as this exporter may see them (no storage keys, file names by permission,
    // ids named), looked up per cursor batch; the PDF's SHA-256 is of these rendered rows.
    const values = new AuditValueRenderer({ fileNames, principal });
    const cells = (row: AuditTrailDbRow) => auditTrailCells(row, local, values);
    const prepare = (batch: AuditTrailDbRow[], tx: Kysely<DB>) => values.prepare(batch, tx);
    const fileName = auditTrailFileName(study?.name ?? null, principal.username, format, now, zone);
    if (format === 'csv')
      return sendCsv(reply, {
        fileName,
        header: AUDIT_TRAIL_HEADER,
        db: this.db,
        query: rows,
        cells,
        prepare,
      });

    // The chain over the exported range (all events between its first and last row, whatever their
    // study: the chain is one), read before the cursors start (PGlite has one connection).
    const bounds = await this.db
      .selectFrom(rows.as('x'))
      .select((eb) => [eb.fn.min('x.id').as('first'), eb.fn.max('x.id').as('last')])
      .executeTakeFirst();
    const chain = await verifyAuditRange(this.db, bounds?.first ?? 1, bounds?.last ?? 0);
    const anchorsChecked = 0;
    const stamp = zonedStamp(now, zone);
    const who = [principal.firstName, principal.lastName].filter(Boolean).join(' ');
    const out = new PassThrough({ highWaterMark: 1024 * 1024 });
    reply
      .header('content-type', 'application/pdf')
      .header('content-disposition', `attachment; filename="${fileName}"`)
      .header('cache-control', 'no-store');
    void writeAuditTrailPdf(out, {
      db: this.db,
      query: rows,
      cells,
      prepare,
      meta: {
        title: `Audit trail — ${study?.name ?? 'Global (every study)'}`,
        filters: [
          `Study: ${study?.name ?? 'every study (Global)'}${study ? ` (id ${study.id})` : ''}`,
          `User: ${user ? user.username : 'every user'}`,
          `Dates: ${query.startDate ?? 'the beginning'} to ${query.endDate ?? 'today'} (${zone}; the end date included)`,
          `Events up to: ${maxId} (the chain's head when the export started)`,
        ],
        generated: `Generated ${local(now)} (${now.toISOString().replace('T', ' ').slice(0, 19)} UTC, ${stamp.date}) by ${who ? `${who} (${principal.username})` : principal.username}`,
        chain: { ...chain, anchorsChecked },
        maxId,
      },
    })
      .then(() => out.end())
      .catch((error: unknown) => {
        reply.log.warn({ err: error }, 'audit trail PDF ended early');
        out.destroy(error instanceof Error ? error : new Error(String(error)));
      });
    return reply.send(out);
  }

  /** GET /api/report/{studyId}/{type} and GET /api/report/{type}. */
  async report(
    reply: FastifyReply,
    principal: Principal,
    actor: Actor,
    type: ReportType,
    studyId: number | null,
    query: ReportQuery,
  ) {
    const spec = REPORT_MESSAGES.unableToFetchReport(type);
    if (!principal.actions.has(REPORT_PERMISSION[type])) throw new ForbiddenError(spec);
    // Every reader's values: never to a user working as a blinded reader, whatever their role holds.
    if (type === 'read-outcomes' && onlyOutcomesOf(principal) !== null) throw new ForbiddenError(spec);
    if (studyId === null) {
      if (!GLOBAL_REPORTS.includes(type)) throw new BadRequestError(`${spec}: ${REPORT_MESSAGES.studyRequired}`);
      if (!isWorkingAsSystemAdmin(principal))
        throw new ForbiddenError(`${spec}: ${REPORT_MESSAGES.globalOnlyForSystemAdmins}`);
    }
    const { zone, from, to } = this.window(spec, query);
    const study = studyId === null ? null : await this.study(studyId);
    if (type === 'celiac-annotations' && study && !isCeliacStudy(study.indications))
      throw new BadRequestError(`${spec}: ${REPORT_MESSAGES.celiacOnly}`);
    const filter: ReportFilter = { studyId, userId: query.userId ?? null, from, to };
    const now = new Date();
    await this.db.transaction().execute((tx) =>
      recordAudit(tx, actor, [
        {
          action: 'REPORT_EXPORTED',
          entityType: 'study',
          entityId: studyId,
          studyId,
          field: type,
          newValue: {
            report: type,
            study: study?.name ?? 'Global',
            userId: filter.userId,
            startDate: query.startDate ?? null,
            endDate: query.endDate ?? null,
            timeZone: zone,
          },
        },
      ]),
    );
    const fileName = reportFileName(study?.name ?? null, type, now, zone);
    const send = <R>(q: Compilable<R>, layout: ReportLayout<R>) =>
      sendCsv(reply, { fileName, header: layout.header, db: this.db, query: q, cells: layout.cells });
    const actions = principal.actions;
    switch (type) {
      case 'image-details':
      case 'image-details-sponsor':
        return send(imageDetailsQuery(this.db, filter), imageDetailsLayout(type, actions));
      case 'hpf-annotations': {
        const classes = await pointClasses(this.db, studyId as number);
        return send(hpfQuery(this.db, { ...filter, studyId: studyId as number }), hpfLayout(actions, classes));
      }
      case 'celiac-annotations':
        return send(celiacQuery(this.db, { ...filter, studyId: studyId as number }), celiacLayout(actions));
      case 'query':
        return send(
          queryReportQuery(this.db, principal, { ...filter, studyId: studyId as number }),
          queryLayout(actions, now),
        );
      case 'access':
        return send(accessQuery(this.db, { ...filter, studyId: studyId as number }), accessLayout());
      case 'read-outcomes': {
        const endpoints = endpointsSchema.parse(await studyEndpointsJson(this.db, studyId as number));
        const layout = readOutcomesLayout(actions, endpoints, filter);
        return sendCsv(reply, {
          fileName,
          header: layout.header,
          db: this.db,
          query: readOutcomesQuery(this.db, { ...filter, studyId: studyId as number }),
          lines: layout.lines,
        });
      }
    }
  }
}
