import {
  CELIAC_DEFAULT_LINE_CLASSES,
  CELIAC_DEFAULT_POINT_CLASSES,
  roleByName,
  type AdjudicationConfig,
  type AnnotationClassType,
  type EndpointDefinition,
  type Indication,
  type RoleName,
} from '@lamina/domain';
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

interface DemoClass {
  name: string;
  color: string;
}

/** A demo study's read-outcome configuration (docs/OUTCOMES.md); absent fields keep their defaults. */
interface DemoOutcomesConfig {
  endpoints?: readonly EndpointDefinition[];
  adjudication?: AdjudicationConfig;
  /** Mark as Scored and the QC passes as Part 11 signatures (issue 30). */
  signatures?: boolean;
}

/**
 * Studies with one case ready for reading each (issue 14): a celiac study (villus height and crypt
 * depth lines, the celiac default classes) and a NASH study (HPFs twice the size), so the
 * annotation tools that depend on the indication can be tried after `npm start`.
 */
export const DEMO_READING_STUDIES: readonly {
  name: string;
  protocolId: string;
  indication: Indication;
  procId: string;
  subjectId: string;
  classes: Partial<Record<AnnotationClassType, readonly DemoClass[]>>;
  outcomes?: DemoOutcomesConfig;
}[] = [
  {
    name: 'DEMO-CD-002 Celiac Disease Histology',
    protocolId: 'ACME-CD-201',
    indication: 'CELIAC_DISEASE',
    procId: 'ENDO-2001',
    subjectId: '2001',
    classes: {
      HPF: [{ name: 'IEL count', color: '#4A90E2' }],
      POINT: CELIAC_DEFAULT_POINT_CLASSES,
      MULTILINE: CELIAC_DEFAULT_LINE_CLASSES,
    },
  },
  {
    name: 'DEMO-NASH-003 NASH Liver Biopsy',
    protocolId: 'ACME-NASH-301',
    indication: 'NASH',
    procId: 'ENDO-3001',
    subjectId: '3001',
    classes: {
      HPF: [{ name: 'Lobular inflammation', color: '#FF001E' }],
      POINT: [
        { name: 'Inflammatory focus', color: '#FF9F00' },
        { name: 'Ballooned hepatocyte', color: '#00FFFF' },
      ],
      FREEHAND: [{ name: 'Steatosis', color: '#FDEB03' }],
    },
    // Electronic signatures on (issue 30): its reads and QC passes are Part 11 signatures.
    outcomes: { signatures: true },
  },
];

/**
 * The read-outcomes study (issue 30): an EoE-style study whose endpoint is the peak eosinophil
 * count per HPF (≥ 15: active disease) and whose cases go to an adjudicator when the two readers'
 * categories disagree. Its cases and reads are demoReads.ts's.
 */
export const DEMO_OUTCOMES_STUDY = {
  name: 'DEMO-EOE-004 Eosinophilic Esophagitis',
  protocolId: 'ACME-EOE-401',
  indication: 'EOSINOPHILIC_ESOPHAGITIS',
  visitIds: ['BASELINE', 'WEEK 24'],
  segments: ['Proximal esophagus', 'Distal esophagus'],
  classes: {
    HPF: [{ name: 'Eosinophils', color: '#FF001E' }],
    POINT: [{ name: 'Eosinophil', color: '#FF9F00' }],
  },
  outcomes: {
    endpoints: [
      {
        key: 'pec',
        label: 'Peak eosinophil count (eos/HPF)',
        kind: 'PEAK_COUNT_PER_HPF',
        className: 'Eosinophil',
        threshold: 15,
        positiveWhen: 'GTE',
      },
    ],
    adjudication: { endpointKey: 'pec', rule: 'CATEGORY_DISAGREES' },
  },
} as const satisfies {
  name: string;
  protocolId: string;
  indication: Indication;
  visitIds: readonly string[];
  segments: readonly string[];
  classes: Partial<Record<AnnotationClassType, readonly DemoClass[]>>;
  outcomes: DemoOutcomesConfig;
};

const CRO = 'Lamina Central Lab';
const SPONSOR = 'Acme Therapeutics';
const SITE = 'Northside Hospital';

/**
 * One registered account per role, usernames exactly as the foundation issue lists them, and a third
 * central reader to adjudicate.
 */
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
  // The third central reader: the adjudicator of the read-outcomes study's disagreements (issue 30).
  { username: 'reader3', firstName: 'Rhea', lastName: 'Reader', organization: CRO, studyRoles: ['CR'] },
  { username: 'site', firstName: 'Sid', lastName: 'Site', organization: SITE, studyRoles: ['Site'] },
  { username: 'lis', firstName: 'Lis', lastName: 'Integration', organization: CRO, studyRoles: ['LIS'] },
  { username: 'noto', firstName: 'Noa', lastName: 'Noto', organization: CRO, studyRoles: ['NOTO'] },
  { username: 'newuser', firstName: 'Nina', lastName: 'New', organization: SITE, registered: false },
];

/**
 * Seeds demo data into a new database: organizations, the demo accounts (all with one password),
 * the demo study, the reading studies (celiac, NASH) and the read-outcomes study (EoE) with their
 * annotation classes and read-outcome settings, and study access to all of them. Does nothing when
 * any user exists. Audited as the system.
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
    const addStudy = async (
      values: {
        name: string;
        protocolId: string;
        indication: Indication;
        visitIds: readonly string[];
        segments: readonly string[];
      },
      classes: Partial<Record<AnnotationClassType, readonly DemoClass[]>>,
      outcomes: DemoOutcomesConfig = {},
    ) => {
      const study = await tx
        .insertInto('studies')
        .values({
          name: values.name,
          sponsor: SPONSOR,
          protocol_ids: [values.protocolId],
          visit_ids: [...values.visitIds],
          lab_visit_ids: values.visitIds.map((_, i) => `V${i + 1}`),
          indications: [values.indication],
          segments: values.segments.length,
          anatomical_segments: [...values.segments],
          modality: ['HISTOPATHOLOGY'],
          ...(outcomes.endpoints && { endpoints: JSON.stringify(outcomes.endpoints) }),
          ...(outcomes.adjudication && { adjudication: JSON.stringify(outcomes.adjudication) }),
          ...(outcomes.signatures !== undefined && { signatures: outcomes.signatures }),
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const created = { action: 'STUDY_CREATED', entityType: 'study', entityId: study.id, studyId: study.id } as const;
      events.push({ ...created, newValue: values.name });
      // The read-outcome settings, each as the study service's create records it.
      for (const field of ['endpoints', 'adjudication', 'signatures'] as const)
        if (outcomes[field] !== undefined) events.push({ ...created, field, newValue: outcomes[field] });
      const rows = Object.entries(classes).flatMap(([type, list]) =>
        list.map((c, i) => ({ ...c, type: type as AnnotationClassType, sort_order: i, study_id: study.id })),
      );
      if (rows.length > 0) await tx.insertInto('annotation_classes').values(rows).execute();
      return study.id;
    };
    const studyIds = [
      await addStudy(
        {
          name: DEMO_STUDY_NAME,
          protocolId: 'ACME-UC-301',
          indication: 'ULCERATIVE_COLITIS',
          visitIds: ['SCREENING', 'WEEK 12', 'WEEK 52'],
          segments: ['Rectum', 'Sigmoid colon', 'Descending colon'],
        },
        {
          HPF: [
            { name: 'Neutrophils', color: '#FF001E' },
            { name: 'Eosinophils', color: '#FF9F00' },
          ],
          POINT: [
            { name: 'Neutrophil', color: '#87FF01' },
            { name: 'Eosinophil', color: '#013BFA' },
          ],
          FREEHAND: [{ name: 'Erosion', color: '#8601FC' }],
        },
      ),
    ];
    for (const reading of DEMO_READING_STUDIES)
      studyIds.push(
        await addStudy(
          {
            name: reading.name,
            protocolId: reading.protocolId,
            indication: reading.indication,
            visitIds: ['BASELINE', 'WEEK 24'],
            segments: reading.indication === 'NASH' ? ['Liver'] : ['Duodenum'],
          },
          reading.classes,
          reading.outcomes,
        ),
      );
    studyIds.push(await addStudy(DEMO_OUTCOMES_STUDY, DEMO_OUTCOMES_STUDY.classes, DEMO_OUTCOMES_STUDY.outcomes));

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
      for (const role of u.studyRoles ?? [])
        for (const studyId of studyIds) {
          await tx
            .insertInto('study_access')
            .values({ user_id: user.id, study_id: studyId, role_id: roleByName(role).id })
            .execute();
          events.push({
            action: 'STUDY_ACCESS_GRANTED',
            entityType: 'user',
            entityId: user.id,
            studyId,
            field: 'studyAccess',
            newValue: role,
          });
        }
    }
    await recordAudit(tx, SYSTEM_ACTOR, events);
  });
  return true;
}
