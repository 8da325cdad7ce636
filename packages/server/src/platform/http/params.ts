import { z } from 'zod';

/** `:id` path parameters: a positive PostgreSQL integer. */
export const idParams = z.object({ id: z.coerce.number().int().positive().max(2_147_483_647) });
