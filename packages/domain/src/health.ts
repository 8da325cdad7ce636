import { z } from 'zod';

/**
 * What `GET /api/ready` checks (docs/DEPLOYMENT.md): the database answers, every migration file of
 * this version is applied, the object storage answers.
 */
export const READINESS_CHECKS = ['database', 'migrations', 'storage'] as const;
export type ReadinessCheckName = (typeof READINESS_CHECKS)[number];

export const readinessCheckSchema = z.object({
  name: z.enum(READINESS_CHECKS),
  ok: z.boolean(),
  /** 'ok', or what failed in a few words (never a connection string, host, bucket or driver message). */
  message: z.string(),
});
export type ReadinessCheck = z.infer<typeof readinessCheckSchema>;

/** `GET /api/ready`: 200 when every check passed, 503 otherwise, with the same body. */
export const readinessSchema = z.object({
  success: z.boolean(),
  message: z.string(),
  roles: z.array(z.enum(['api', 'tiles', 'worker'])),
  checks: z.array(readinessCheckSchema),
});
export type ReadinessReport = z.infer<typeof readinessSchema>;
