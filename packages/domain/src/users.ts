import { z } from 'zod';

/** User and study-access messages (spec doc 1 §5, §8). */
export const USER_MESSAGES = {
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
  userNotFound: 'User not found',
  usernameTaken: 'A user with this email address already exists',
} as const;

export const confirmStudyAccessText = (role: string, study: string): string =>
  `The user will be assigned as ${role} to ${study}.`;
export const removeStudyAccessText = (study: string): string => `The user will no longer have access to ${study}.`;

/** PUT /api/users/{id}: the user profile form (spec doc 1 §2.8). */
export const userUpdateSchema = z.object({
  firstName: z.string().trim().min(1, USER_MESSAGES.firstNameRequired).max(100).optional(),
  lastName: z.string().trim().min(1, USER_MESSAGES.lastNameRequired).max(100).optional(),
  organizationId: z.number().int().positive().nullable().optional(),
});
export type UserUpdate = z.infer<typeof userUpdateSchema>;

/** Create user (system admins): email as username; the spec does not show this screen. */
export const userCreateSchema = z.object({
  username: z.string().trim().min(1, USER_MESSAGES.emailRequired).max(320).pipe(z.email(USER_MESSAGES.emailInvalid)),
  firstName: z.string().trim().min(1, USER_MESSAGES.firstNameRequired).max(100),
  lastName: z.string().trim().min(1, USER_MESSAGES.lastNameRequired).max(100),
  organizationId: z.number().int().positive().nullable(),
});
export type UserCreate = z.infer<typeof userCreateSchema>;

export const studyAccessChangeSchema = z.object({
  studyId: z.number().int().positive(),
  userId: z.number().int().positive(),
  roleId: z.number().int().positive(),
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
