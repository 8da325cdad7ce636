import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  ASSIGNABLE_ROLE_NAMES,
  PERMISSION_NAMES,
  PERMISSIONS,
  ROLES,
  ROLE_NAMES,
  ROLE_PERMISSIONS,
  ROLE_REASONING,
  isAssignableRole,
  renderPermissionsDoc,
  roleById,
  visibleNavTabs,
} from '../src/index.js';

const specDir = new URL('../../../../shared/spec/', import.meta.url);
const specText = readdirSync(specDir)
  .filter((f) => f.endsWith('.md'))
  .map((f) => readFileSync(new URL(f, specDir), 'utf8'))
  .join('\n');

describe('permission names', () => {
  it('names every permission string the spec spells out, exactly as written', () => {
    const tokens = new Set(specText.match(/\b(?:AP|IM|S|Q|QP|R|UM)_[A-Za-z_]+/g) ?? []);
    // Family prefixes ("AP_ImageData_View*") and the QP_{Role} template are not permissions themselves.
    const families = ['AP_ImageData_View', 'AP_StudyData_View', 'AP_CaseData_View', 'QP_'];
    const missing = [...tokens].filter((t) => !families.includes(t) && !PERMISSION_NAMES.includes(t as never));
    expect(missing).toEqual([]);
    expect(tokens.size).toBeGreaterThan(30);
  });

  it('keeps the spec oddities spelled as the spec does', () => {
    expect(PERMISSION_NAMES).toContain('AP_ImageData_ViewAccesionNumber');
    expect(PERMISSION_NAMES).toContain('AP_ImageData_EditAccessionNumber');
    expect(PERMISSION_NAMES).toContain('IM_CaseListTab_PutoHold');
    expect(PERMISSION_NAMES).toContain('AP_ImageViewer_ViewimageViewer');
  });

  it('has every family member of doc 2 §6 (view and edit columns)', () => {
    for (const x of [
      'AccesionNumber',
      'ProtocolID',
      'AnatomicalSegment',
      'ImageUploadDate',
      'ImageStatus',
      'InQuery',
      'Filename',
      'QAComments',
      'UploaderOrganization',
    ]) {
      expect(PERMISSION_NAMES).toContain(`AP_ImageData_View${x}`);
    }
    for (const x of [
      'SiteID',
      'SubjectID',
      'VisitID',
      'HistopathologyProcedureID',
      'EndoProcedureID',
      'CollectionDate',
      'ExpectedNoofimages',
      'NoofimagesReceived',
    ]) {
      expect(PERMISSION_NAMES).toContain(`AP_CaseData_View${x}`);
    }
    const edits = [
      'EditAccessionNumber',
      'EditStudyName',
      'EditStudyNamePopulated',
      'EditProtocolID',
      'EditFileName',
      'EditQAComments',
      'EditAnatomicalSegment',
      'EditImageUploadDate',
      'EditUploaderOrganization',
      'EditSiteID',
      'EditSubjectID',
      'EditVisitID',
      'EditCollectionDate',
      'EditHistopathologyProcedureID',
      'EditEndoProcedureID',
      'EditExpectedNoofImages',
      'EditNoofImagesReceived',
    ];
    for (const e of edits)
      expect(
        PERMISSION_NAMES.some((p) => p.endsWith(`_${e}`)),
        e,
      ).toBe(true);
  });

  it('has unique names, each described', () => {
    expect(new Set(PERMISSION_NAMES).size).toBe(PERMISSION_NAMES.length);
    for (const p of PERMISSIONS) expect(p.description.length).toBeGreaterThan(3);
  });
});

describe('roles', () => {
  it('are the twelve roles of spec doc 1 §6 with stable ids', () => {
    expect(ROLES.map((r) => r.name)).toEqual([...ROLE_NAMES]);
    expect(ROLES.map((r) => r.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect(roleById(8)?.name).toBe('CR');
  });

  it('only ISC, DM, PM, Sponsor, LabTech, Uploader and CR are assignable as study access', () => {
    expect([...ASSIGNABLE_ROLE_NAMES].sort()).toEqual(['CR', 'DM', 'ISC', 'LabTech', 'PM', 'SPONSOR', 'UPLOADER']);
    expect(isAssignableRole(1)).toBe(false);
    expect(isAssignableRole(2)).toBe(false);
    expect(isAssignableRole(8)).toBe(true);
  });
});

describe('default role → permission map', () => {
  it('maps every role, only to known permissions, without duplicates, with its reasoning', () => {
    for (const role of ROLE_NAMES) {
      const list = ROLE_PERMISSIONS[role];
      expect(list.length, role).toBeGreaterThan(0);
      for (const p of list) expect(PERMISSION_NAMES, `${role}: ${p}`).toContain(p);
      expect(new Set(list).size, `${role} has duplicates`).toBe(list.length);
      expect(ROLE_REASONING[role].length).toBeGreaterThan(40);
    }
  });

  it('blinds central readers: no subject, site or visit IDs, no labels, no study management', () => {
    const cr = ROLE_PERMISSIONS.CR;
    for (const p of [
      'AP_CaseData_ViewSubjectID',
      'AP_CaseData_ViewSiteID',
      'AP_CaseData_ViewVisitID',
      'AP_ImageViewer_ViewLabel',
      'S_Main_ViewAllStudies',
      'S_Main_EditStudy',
      'UM_ViewUsersPage',
    ] as const) {
      expect(cr).not.toContain(p);
      expect(ROLE_PERMISSIONS.NOTO).not.toContain(p);
    }
    expect(cr).toContain('AP_ImageViewer_EditCreateAnnotations');
    expect(cr).toContain('AP_CaseViewer_MarkCaseasScored');
  });

  it('gives admin-level roles (StudyAdmin, ISC) the admin checks, and only admins manage users and studies', () => {
    for (const role of ROLE_NAMES) {
      const manages =
        ROLE_PERMISSIONS[role].includes('UM_GrantStudyAccess') || ROLE_PERMISSIONS[role].includes('S_Main_EditStudy');
      expect(manages, role).toBe(role === 'SystemAdmin' || role === 'StudyAdmin');
    }
    expect(ROLE_PERMISSIONS.ISC).toContain('AP_CaseViewer_ViewButtonPassISCQC');
    expect(ROLE_PERMISSIONS.StudyAdmin).toContain('S_Main_ViewAllStudies');
  });

  it('follows the query action table: only the four roles offered "replace image" may upload', () => {
    const uploaders = ROLE_NAMES.filter((r) => ROLE_PERMISSIONS[r].includes('S_ImageListTab_UploadImage'));
    expect(uploaders.sort()).toEqual(['ISC', 'LabTech', 'Site', 'StudyAdmin', 'SystemAdmin', 'UPLOADER'].sort());
  });

  it('shows the navigation each kind of user expects', () => {
    const tabs = (role: keyof typeof ROLE_PERMISSIONS) => visibleNavTabs(ROLE_PERMISSIONS[role]).map((t) => t.label);
    expect(tabs('SystemAdmin')).toEqual(['Studies', 'Image Management', 'Reports', 'Queries', 'Users']);
    expect(tabs('StudyAdmin')).toEqual(['Studies', 'Image Management', 'Reports', 'Queries', 'Users']);
    expect(tabs('CR')).toEqual(['Studies', 'Queries']);
    expect(tabs('UPLOADER')).toEqual(['Studies', 'Queries']);
    expect(tabs('SPONSOR')).toEqual(['Studies', 'Reports', 'Queries']);
    expect(tabs('LIS')).toEqual(['Image Management']);
    expect(tabs('NOTO')).toEqual([]);
  });
});

describe('docs/PERMISSIONS.md', () => {
  it('is what the code generates (run npm run docs:permissions after changing the map)', () => {
    const committed = readFileSync(new URL('../../../docs/PERMISSIONS.md', import.meta.url), 'utf8');
    expect(committed).toBe(renderPermissionsDoc());
  });
});
