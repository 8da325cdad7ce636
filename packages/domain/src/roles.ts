/**
 * The twelve roles of spec doc 1 §6. Ids are stable: they are stored in the database
 * (roles table, study_access.role_id, users.work_as_role_id) and sent to clients.
 */
export const ROLE_NAMES = [
  'SystemAdmin',
  'StudyAdmin',
  'ISC',
  'DM',
  'PM',
  'SPONSOR',
  'UPLOADER',
  'CR',
  'LabTech',
  'Site',
  'NOTO',
  'LIS',
] as const;

export type RoleName = (typeof ROLE_NAMES)[number];

/** How a role is held: by the system-admin flag, globally on the user, per study, or by an integration. */
export type RoleType = 'SYSTEM' | 'GLOBAL' | 'STUDY' | 'INTEGRATION';

export interface RoleDefinition {
  id: number;
  name: RoleName;
  displayName: string;
  description: string;
  roleType: RoleType;
}

export const ROLES: readonly RoleDefinition[] = [
  {
    id: 1,
    name: 'SystemAdmin',
    displayName: 'System Admin',
    description:
      'Administers the whole platform: users, organizations, every study. Held through the system-admin flag on the user, never granted as study access.',
    roleType: 'SYSTEM',
  },
  {
    id: 2,
    name: 'StudyAdmin',
    displayName: 'Study Admin',
    description: 'Sets studies up and keeps them running: configuration, study access, reports and the audit trail.',
    roleType: 'GLOBAL',
  },
  {
    id: 3,
    name: 'ISC',
    displayName: 'ISC',
    description: 'Image-sample coordinator: ISC quality check of images and cases, query handling.',
    roleType: 'STUDY',
  },
  {
    id: 4,
    name: 'DM',
    displayName: 'Data Manager',
    description: 'Reconciles case and image data, raises data queries, runs reports.',
    roleType: 'STUDY',
  },
  {
    id: 5,
    name: 'PM',
    displayName: 'Project Manager',
    description: 'Follows study progress: lists, queries and reports, read-mostly.',
    roleType: 'STUDY',
  },
  {
    id: 6,
    name: 'SPONSOR',
    displayName: 'Sponsor',
    description: 'Trial sponsor: read-only view of progress and the sponsor image report.',
    roleType: 'STUDY',
  },
  {
    id: 7,
    name: 'UPLOADER',
    displayName: 'Uploader',
    description: 'Uploads and replaces images of a study and answers image queries.',
    roleType: 'STUDY',
  },
  {
    id: 8,
    name: 'CR',
    displayName: 'Central Reader',
    description:
      'Blinded central reader: annotates images and scores cases; never sees subject, site or visit IDs or slide labels.',
    roleType: 'STUDY',
  },
  {
    id: 9,
    name: 'LabTech',
    displayName: 'Lab Technician',
    description: 'Uploads images, builds cases and passes lab quality checks.',
    roleType: 'STUDY',
  },
  {
    id: 10,
    name: 'Site',
    displayName: 'Site',
    description:
      'Clinical site staff: uploads images for its subjects and answers image queries. Held per study, granted by a system admin.',
    roleType: 'STUDY',
  },
  {
    id: 11,
    name: 'NOTO',
    displayName: 'NOTO',
    description: 'Reader working inside the NOTO platform through the embedded mode.',
    roleType: 'INTEGRATION',
  },
  {
    id: 12,
    name: 'LIS',
    displayName: 'LIS',
    description: 'Laboratory information system integration: image metadata and sample data import.',
    roleType: 'INTEGRATION',
  },
];

/** Roles that may be selected or assigned as study access (spec doc 1 §6). */
export const ASSIGNABLE_ROLE_NAMES: readonly RoleName[] = ['ISC', 'DM', 'PM', 'SPONSOR', 'LabTech', 'UPLOADER', 'CR'];

/**
 * Roles held per study that are not in the assignable set of spec doc 1 §6: only a system admin
 * (working as SystemAdmin) grants or revokes them (docs/PERMISSIONS.md), so that a study can have
 * site users, embedded (NOTO) readers and a LIS account.
 */
export const SYSTEM_ADMIN_GRANTED_ROLE_NAMES: readonly RoleName[] = ['Site', 'NOTO', 'LIS'];

const byName = new Map(ROLES.map((r) => [r.name, r]));
const byId = new Map(ROLES.map((r) => [r.id, r]));

export function roleByName(name: RoleName): RoleDefinition {
  const role = byName.get(name);
  if (!role) throw new Error(`Unknown role ${name}`);
  return role;
}

export function roleById(id: number): RoleDefinition | undefined {
  return byId.get(id);
}

export function isAssignableRole(id: number): boolean {
  const role = byId.get(id);
  return role !== undefined && ASSIGNABLE_ROLE_NAMES.includes(role.name);
}

/** Who acts: the system-admin flag and the role worked as (a server principal, the web user info). */
export type ActingUser = { isSystemAdmin: boolean; workAsRole: { name: string } | null } | null | undefined;

/**
 * The roles `grantor` may grant or revoke as study access, in the order the forms offer them: the
 * assignable roles for everyone who manages study access, and Site, NOTO and LIS for a system admin
 * working as SystemAdmin. SystemAdmin and StudyAdmin are never study access. The one rule of the
 * server (studyAccessPolicy) and the study-access forms.
 */
export function grantableRoleNames(grantor: ActingUser): readonly RoleName[] {
  return isWorkingAsSystemAdmin(grantor)
    ? [...ASSIGNABLE_ROLE_NAMES, ...SYSTEM_ADMIN_GRANTED_ROLE_NAMES]
    : ASSIGNABLE_ROLE_NAMES;
}

/** Whether `grantor` may grant or revoke the role of this id as study access ({@link grantableRoleNames}). */
export function mayGrantStudyRole(grantor: ActingUser, roleId: number): boolean {
  const role = byId.get(roleId);
  return role !== undefined && grantableRoleNames(grantor).includes(role.name);
}

/**
 * The system-admin rule, in one place for the server's guard, its services and the web: the
 * system-admin flag **and** working as SystemAdmin (holding the flag alone is not enough).
 */
export function isWorkingAsSystemAdmin(user: ActingUser): boolean {
  return user?.isSystemAdmin === true && user.workAsRole?.name === 'SystemAdmin';
}
