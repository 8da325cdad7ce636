import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { MESSAGES } from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import { policy, studyFromParam } from '../../platform/rbac/policy.js';
import { visibleStudies } from '../../platform/rbac/studyScope.js';
import { principalOf } from '../../platform/http/requestContext.js';
import { NotFoundError } from '../../platform/errors.js';

const listQuery = z.object({ name: z.string().max(200).optional() });
const idParams = z.object({ id: z.coerce.number().int().positive() });

/**
 * The studies a user may see. The foundation serves the minimal study fields; the full study view
 * and configuration arrive with the studies issue.
 */
export function studyRoutes(db: Db) {
  const columns = ['studies.id', 'studies.name', 'studies.sponsor', 'studies.on_hold', 'studies.on_hold_reason', 'studies.is_noto', 'studies.created_at'] as const;
  const present = (row: {
    id: number;
    name: string;
    sponsor: string | null;
    on_hold: boolean;
    on_hold_reason: string | null;
    is_noto: boolean;
    created_at: Date;
  }) => ({
    id: row.id,
    name: row.name,
    sponsor: row.sponsor,
    onHold: row.on_hold,
    onHoldReason: row.on_hold_reason,
    isNoto: row.is_noto,
    createdAt: row.created_at.toISOString(),
  });

  return async (app: FastifyInstance) => {
    const r = app.withTypeProvider<ZodTypeProvider>();

    r.get(
      '/api/studies/list',
      { config: { policy: policy.anyOf(['S_Main_ViewStudyPage', 'S_Main_ViewAllStudies', 'S_Main_ViewAssignedStudies']) }, schema: { querystring: listQuery } },
      async (request) => {
        const principal = principalOf(request);
        const name = request.query.name?.trim();
        let query = db.selectFrom('studies').select(columns).where(visibleStudies(principal));
        if (name) query = query.where('studies.name', 'ilike', `%${name.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
        const rows = await query.orderBy('studies.created_at', 'desc').orderBy('studies.id', 'desc').execute();
        return { success: true, studies: rows.map(present), total: rows.length };
      },
    );

    r.get(
      '/api/studies/:id',
      {
        config: { policy: policy.anyOf(['S_Main_ViewStudyPage', 'S_Main_ViewAllStudies', 'S_Main_ViewAssignedStudies'], { study: studyFromParam('id') }) },
        schema: { params: idParams },
      },
      async (request) => {
        const row = await db.selectFrom('studies').select(columns).where('studies.id', '=', request.params.id).executeTakeFirst();
        if (!row) throw new NotFoundError(MESSAGES.studyNotFound);
        return present(row);
      },
    );
  };
}
