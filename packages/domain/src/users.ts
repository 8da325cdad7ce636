import { z } from 'zod';
import { TEXT_LIMITS } from './constants.js';
import { isWorkingAsSystemAdmin, type ActingUser } from './roles.js';
import { pageSchema, pageSizeSchema, sortValues } from './studies.js';

/** User and study-access messages (spec doc 1 §5, §8). */
export const USER_MESSAGES = {
  /** Beside a disabled '+ Add' (issue 20): the access chosen is already there. */
  accessAlreadyHeld: 'Already has this role in this study',
  firstNameRequired: 'First Name Required',
  lastNameRequired: 'Last Name Required',
  emailRequired: 'Email Required',
  emailInvalid: 'Enter a valid email address',
  unableToFetchUsers: 'Unable to fetch users',
  unableToFetchUsersInStudy: 'Unable to fetch users in study',
  unableToFetchUserById: 'Unable to fetch user by Id',
  unableToFetchUserStudyAccess: 'Unable to fetch user study access',
  unableToFetchOrganizations: 'Unable to fetch organizations',
  unableToUpdateUser: 'Unable to update user',
  unableToFetchPermissionRoles: 'Unable to fetch permission roles',
  unableToAddStudyAccess: 'Unable to add study access',
  unableToRemoveStudyAccess: 'Unable to remove study access',
  confirmStudyAccessTitle: 'Confirm Study Access',
  removeStudyAccessQuestion: 'Are you sure you want to remove study access?',
  roleNotAssignable: 'This role cannot be granted as study access',
  chooseRole: 'Choose a role',
  userNotFound: 'User not found',
  usernameTaken: 'A user with this email address already exists',
  organizationNotFound: 'Organization not found',
  studyAccessExists: 'The user already has this role in this study',
  studyAccessNotFound: 'Study access not found',
  ownStudyAccess: 'You cannot change your own study access',
  ownAccountStatus: 'You cannot deactivate your own account',
  /** A system admin's profile, status or study access, changed by anyone but a system admin (issue 26). */
  systemAdminAccount: 'Only a system admin can change a system admin',
  accountDeactivated: 'This account is deactivated',
  alreadyActive: 'The account is already active',
  alreadyDeactivated: 'The account is already deactivated',
  userCreated: 'User created',
  userUpdated: 'User updated',
  userActivated: 'User activated',
  userDeactivated: 'User deactivated',
  studyAccessAdded: 'Study access added',
  studyAccessRemoved: 'Study access removed',
  // Create user and account status (screens the spec does not show).
  initialPasswordWarning:
    'This password is shown only once. Copy it now and give it to the user through a secure channel; it cannot be shown again.',
  unableToCreateUser: 'Unable to create user',
  deactivateQuestion: 'Deactivate this account?',
  unableToChangeAccountStatus: 'Unable to change the account status',
} as const;

/**
 * Only a system admin (working as SystemAdmin) changes a system admin's account: profile,
 * organization, status, study access (issue 26). Everyone who manages users changes the others.
 */
export function mayChangeAccount(target: { isSystemAdmin: boolean }, changer: ActingUser): boolean {
  return !target.isSystemAdmin || isWorkingAsSystemAdmin(changer);
}

export const deactivateAccountText = (username: string): string =>
  `${username} will no longer be able to log in, and any session of theirs ends now. The account is kept and can be activated again.`;

export const confirmStudyAccessText = (role: string, study: string): string =>
  `The user will be assigned as ${role} to ${study}.`;
export const removeStudyAccessText = (study: string): string => `The user will no longer have access to ${study}.`;

/** PUT /api/users/{id}: the user profile form (spec doc 1 §2.8). */
export const userUpdateSchema = z.object({
  firstName: z.string().trim().min(1, USER_MESSAGES.firstNameRequired).max(TEXT_LIMITS.personName).optional(),
  lastName: z.string().trim().min(1, USER_MESSAGES.lastNameRequired).max(TEXT_LIMITS.personName).optional(),
  organizationId: z.number().int().positive().nullable().optional(),
});
export type UserUpdate = z.infer<typeof userUpdateSchema>;

/** Create user (system admins): email as username; the spec does not show this screen. */
export const userCreateSchema = z.object({
  username: z
    .string()
    .trim()
    .min(1, USER_MESSAGES.emailRequired)
    .max(TEXT_LIMITS.email)
    .pipe(z.email(USER_MESSAGES.emailInvalid)),
  firstName: z.string().trim().min(1, USER_MESSAGES.firstNameRequired).max(TEXT_LIMITS.personName),
  lastName: z.string().trim().min(1, USER_MESSAGES.lastNameRequired).max(TEXT_LIMITS.personName),
  organizationId: z.number().int().positive().nullable(),
});
export type UserCreate = z.infer<typeof userCreateSchema>;

export const studyAccessChangeSchema = z.object({
  studyId: z.number().int().positive(),
  userId: z.number().int().positive(),
  roleId: z.number(USER_MESSAGES.chooseRole).int(USER_MESSAGES.chooseRole).positive(USER_MESSAGES.chooseRole),
});
export type StudyAccessChange = z.infer<typeof studyAccessChangeSchema>;

export interface StudyAccessRow {
  studyId: number;
  studyName: string;
  roleId: number;
  roleName: string;
}

export interface OrganizationView {
  id: number;
  name: string;
  groupEmail: string | null;
}

export interface RoleView {
  id: number;
  name: string;
  displayName: string;
  description: string;
  roleType: string;
  createdAt: string;
  updatedAt: string;
}

/** A row of the users list (spec doc 1 §2.7). */
export interface UserListRow {
  id: number;
  username: string;
  firstName: string | null;
  lastName: string | null;
  lastLoginDt: string | null;
  organizationId: number | null;
  organizationName: string | null;
  studyCount: number;
  registered: boolean;
  active: boolean;
  isSystemAdmin: boolean;
}

// ---------------------------------------------------------------------------------------------
// The users API as built (docs/STUDIES.md, "Users and study access"): queries and responses.

export const USER_SORT_KEYS = [
  'username',
  'firstName',
  'lastName',
  'lastLoginDt',
  'organizationName',
  'studyCount',
  'registered',
] as const;
export type UserSortKey = (typeof USER_SORT_KEYS)[number];

/** GET /api/users: role (id or name), name (first, last or username), registered, exclude (ids, comma list). */
export const userListQuerySchema = z.object({
  role: z.string().trim().max(50).optional(),
  name: z.string().max(TEXT_LIMITS.search).optional(),
  registered: z.enum(['true', 'false']).optional(),
  exclude: z
    .string()
    .max(4000)
    .regex(/^\s*(\d{1,10}(\s*,\s*\d{1,10})*)?\s*$/, 'exclude must be a comma-separated list of user ids')
    .optional(),
  page: pageSchema.optional(),
  pageSize: pageSizeSchema.optional(),
  sort: z.enum(sortValues(USER_SORT_KEYS)).default('username'),
});
export type UserListQuery = z.input<typeof userListQuerySchema>;

/** POST /api/users/list: name search, optionally only the users with access to one study. */
export const userSearchSchema = z.object({
  name: z.string().max(TEXT_LIMITS.search).nullish(),
  filterByStudyId: z.number().int().positive().max(2_147_483_647).nullish(),
});
export type UserSearch = z.infer<typeof userSearchSchema>;

/** POST /api/users/inStudy/{studyId}: optionally only some roles (one id or a list). */
export const usersInStudySchema = z.object({
  roleIdFilter: z.union([z.number().int().positive(), z.array(z.number().int().positive())]).nullish(),
});
export type UsersInStudy = z.infer<typeof usersInStudySchema>;

/** PATCH /api/users/{id}/deactivate and /activate: an optional reason for the audit trail. */
export const userStatusChangeSchema = z.object({ reason: z.string().trim().max(TEXT_LIMITS.reason).optional() });

export const userListRowSchema = z.object({
  id: z.number().int(),
  username: z.string(),
  firstName: z.string().nullable(),
  lastName: z.string().nullable(),
  lastLoginDt: z.string().nullable(),
  organizationId: z.number().int().nullable(),
  organizationName: z.string().nullable(),
  studyCount: z.number().int(),
  registered: z.boolean(),
  active: z.boolean(),
  isSystemAdmin: z.boolean(),
}) satisfies z.ZodType<UserListRow>;

export const userListResponseSchema = z.object({
  success: z.literal(true),
  users: z.array(userListRowSchema),
  total: z.number().int(),
});
export type UserListResponse = z.infer<typeof userListResponseSchema>;

/** A user holding study access (POST /api/users/inStudy/{studyId}; the study view's user lists). */
export const studyUserRowSchema = z.object({
  id: z.number().int(),
  username: z.string(),
  firstName: z.string().nullable(),
  lastName: z.string().nullable(),
  roleId: z.number().int(),
  roleName: z.string(),
  organizationName: z.string().nullable(),
});
export const usersInStudyResponseSchema = z.object({ success: z.literal(true), users: z.array(studyUserRowSchema) });

export const userSaveResponseSchema = z.object({
  success: z.literal(true),
  message: z.string(),
  user: userListRowSchema,
});
export type UserSaveResponse = z.infer<typeof userSaveResponseSchema>;

/** POST /api/users: the one-time initial password is in this response only. */
export const userCreateResponseSchema = userSaveResponseSchema.extend({ initialPassword: z.string() });
export type UserCreateResponse = z.infer<typeof userCreateResponseSchema>;

export const studyAccessRowSchema = z.object({
  studyId: z.number().int(),
  studyName: z.string(),
  roleId: z.number().int(),
  roleName: z.string(),
}) satisfies z.ZodType<StudyAccessRow>;
export const studyAccessChangeResponseSchema = z.object({
  success: z.literal(true),
  message: z.string(),
  studyAccess: z.array(studyAccessRowSchema),
});

export const organizationViewSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  groupEmail: z.string().nullable(),
}) satisfies z.ZodType<OrganizationView>;

export const roleViewSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  displayName: z.string(),
  description: z.string(),
  roleType: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
}) satisfies z.ZodType<RoleView>;
