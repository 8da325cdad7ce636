import { z } from 'zod';

export const loginRequestSchema = z.object({
  username: z.string().trim().min(1).max(320),
  password: z.string().min(1).max(1024),
});
export type LoginRequest = z.infer<typeof loginRequestSchema>;

export const roleRefSchema = z.object({ id: z.number().int(), name: z.string(), displayName: z.string() });
export type RoleRef = z.infer<typeof roleRefSchema>;

/** The spec's User (doc 1 §3). */
export const userInfoSchema = z.object({
  id: z.number().int(),
  username: z.string(),
  firstName: z.string().nullable(),
  lastName: z.string().nullable(),
  organizationId: z.number().int().nullable(),
  organizationName: z.string().nullable(),
  registered: z.boolean(),
  lastLoginDt: z.string().nullable(),
  workAsRole: roleRefSchema.nullable(),
  roles: z.array(roleRefSchema),
  actions: z.array(z.string()),
  isSystemAdmin: z.boolean(),
  studyCount: z.number().int(),
});
export type UserInfo = z.infer<typeof userInfoSchema>;

export const loginResponseSchema = z.object({
  success: z.literal(true),
  message: z.string(),
  csrfToken: z.string(),
  user: userInfoSchema,
});
export type LoginResponse = z.infer<typeof loginResponseSchema>;

export const csrfResponseSchema = z.object({ csrfToken: z.string() });

export const configSchema = z.object({
  ssoLoginUrl: z.string().nullable(),
  ssoLogoutUrl: z.string().nullable(),
  tileServerLocation: z.string(),
});
export type AppConfig = z.infer<typeof configSchema>;

export const availableRoleSchema = z.object({ id: z.number().int(), displayName: z.string() });
export const availableRolesResponseSchema = z.array(availableRoleSchema);
export type AvailableRole = z.infer<typeof availableRoleSchema>;

export const workAsRequestSchema = z.object({ roleId: z.number().int().positive() });
export type WorkAsRequest = z.infer<typeof workAsRequestSchema>;

export const actionResponseSchema = z.object({ success: z.boolean(), message: z.string() });
export type ActionResponse = z.infer<typeof actionResponseSchema>;

export const errorResponseSchema = z.object({ success: z.literal(false), message: z.string() });
export type ErrorResponse = z.infer<typeof errorResponseSchema>;
