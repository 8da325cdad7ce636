import { roleByName, type RoleName } from '@lamina/domain';
import type { Db } from '../../platform/db/database.js';
import { recordAudit, SYSTEM_ACTOR, type AuditEvent } from '../../platform/audit/audit.js';
import { hashPassword } from '../../platform/auth/passwords.js';

interface DemoUser {
  username: string;
  firstName: string;
  lastName: string;
  organization: string;
  registered?: boolean;
  systemAdmin?: boolean;
  /** Roles held on the user itself. */
  globalRoles?: RoleName[];
  /** Roles held in the demo study. */
  studyRoles?: RoleName[];
}

export const DEMO_STUDY_NAME = 'DEMO-UC-001 Ulcerative Colitis Histology';

const CRO = 'Lamina Central Lab';
const SPONSOR = 'Acme Therapeutics';
const SITE = 'Northside Hospital';

/** One registered account per role, usernames exactly as the foundation issue lists them. */
export const DEMO_USERS: readonly DemoUser[] = [
  { username: 'sysadmin', firstName: 'Sam', lastName: 'Admin', organization: CRO, systemAdmin: true },
  { username: 'studyadmin', firstName: 'Stella', lastName: 'Study', organization: CRO, globalRoles: ['StudyAdmin'] },
  { username: 'isc', firstName: 'Ivy', lastName: 'Coordinator', organization: CRO, studyRoles: ['ISC'] },
  { username: 'dm', firstName: 'Dana', lastName: 'Manager', organization: CRO, studyRoles: ['DM', 'PM'] },
  { username: 'pm', firstName: 'Parker', lastName: 'Project', organization: CRO, studyRoles: ['PM'] },
  { username: 'sponsor', firstName: 'Sasha', lastName: 'Sponsor', organization: SPONSOR, studyRoles: ['SPONSOR'] },
  { username: 'uploader', firstName: 'Uma', lastName: 'Uploader', organization: SITE, studyRoles: ['UPLOADER'] },
  { username: 'labtech', firstName: 'Leo', lastName: 'Tech', organization: CRO, studyRoles: ['LabTech'] },
  { username: 'reader1', firstName: 'Rita', lastName: 'Reader', organization: CRO, studyRoles: ['CR'] },
  { username: 'reader2', firstName: 'Ravi', lastName: 'Reader', organization: CRO, studyRoles: ['CR'] },
  { username: 'site', firstName: 'Sid', lastName: 'Site', organization: SITE, studyRoles: ['Site'] },
  { username: 'lis', firstName: 'Lis', lastName: 'Integration', organization: CRO, studyRoles: ['LIS'] },
  { username: 'noto', firstName: 'Noa', lastName: 'Noto', organization: CRO, studyRoles: ['NOTO'] },
  { username: 'newuser', firstName: 'Nina', lastName: 'New', organization: SITE, registered: false },
];

/**
 * Seeds demo data into a new database: organizations, the demo accounts (all with one password),
 * the demo study and its study access. Does nothing when any user exists. Audited as the system.
 */
export async function seedDemoData(db: Db, password: string): Promise<boolean> {
  const existing = await db.selectFrom('users').select('id').limit(1).executeTakeFirst();
  if (existing) return false;
  const passwordHash = await hashPassword(password);
  await db.transaction().execute(async (tx) => {
    const events: AuditEvent[] = [];
    const orgIds = new Map<string, number>();
    for (const name of [CRO, SPONSOR, SITE]) {
      const org = await tx
        .insertInto('organizations')
        .values({ name, group_email: `${name.toLowerCase().replace(/[^a-z]+/g, '.')}@example.org` })
        .returning('id')
        .executeTakeFirstOrThrow();
      orgIds.set(name, org.id);
      events.push({ action: 'ORGANIZATION_CREATED', entityType: 'organization', entityId: org.id, newValue: name });
    }
    const study = await tx
      .insertInto('studies')
      .values({
        name: DEMO_STUDY_NAME,
        sponsor: SPONSOR,
        protocol_ids: ['ACME-UC-301'],
        visit_ids: ['SCREENING', 'WEEK 12', 'WEEK 52'],
        lab_visit_ids: ['V1', 'V4', 'V9'],
        indications: ['ULCERATIVE_COLITIS'],
        segments: 3,
        anatomical_segments: ['Rectum', 'Sigmoid colon', 'Descending colon'],
        modality: ['HISTOPATHOLOGY'],
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    events.push({
      action: 'STUDY_CREATED',
      entityType: 'study',
      entityId: study.id,
      studyId: study.id,
      newValue: DEMO_STUDY_NAME,
    });
    const hpf = [
      { name: 'Neutrophils', color: '#FF001E' },
      { name: 'Eosinophils', color: '#FF9F00' },
    ];
    const points = [
      { name: 'Neutrophil', color: '#87FF01' },
      { name: 'Eosinophil', color: '#013BFA' },
    ];
    const classes = [
      ...hpf.map((c, i) => ({ ...c, type: 'HPF' as const, sort_order: i })),
      ...points.map((c, i) => ({ ...c, type: 'POINT' as const, sort_order: i })),
      { name: 'Erosion', color: '#8601FC', type: 'FREEHAND' as const, sort_order: 0 },
    ];
    await tx
      .insertInto('annotation_classes')
      .values(classes.map((c) => ({ ...c, study_id: study.id })))
      .execute();

    for (const u of DEMO_USERS) {
      const user = await tx
        .insertInto('users')
        .values({
          username: u.username,
          first_name: u.firstName,
          last_name: u.lastName,
          organization_id: orgIds.get(u.organization) ?? null,
          registered: u.registered ?? true,
          is_system_admin: u.systemAdmin ?? false,
          password_hash: passwordHash,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      events.push({ action: 'USER_CREATED', entityType: 'user', entityId: user.id, newValue: u.username });
      for (const role of u.globalRoles ?? []) {
        await tx
          .insertInto('user_roles')
          .values({ user_id: user.id, role_id: roleByName(role).id })
          .execute();
        events.push({ action: 'ROLE_GRANTED', entityType: 'user', entityId: user.id, field: 'role', newValue: role });
      }
      for (const role of u.studyRoles ?? []) {
        await tx
          .insertInto('study_access')
          .values({ user_id: user.id, study_id: study.id, role_id: roleByName(role).id })
          .execute();
        events.push({
          action: 'STUDY_ACCESS_GRANTED',
          entityType: 'user',
          entityId: user.id,
          studyId: study.id,
          field: 'studyAccess',
          newValue: role,
        });
      }
    }
    await recordAudit(tx, SYSTEM_ACTOR, events);
  });
  return true;
}
