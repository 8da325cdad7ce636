import { describe, expect, it } from 'vitest';
import {
  ASSIGNABLE_ROLE_NAMES,
  grantableRoleNames,
  mayChangeAccount,
  mayGrantStudyRole,
  ROLE_NAMES,
  ROLE_PERMISSIONS,
  roleByName,
  SYSTEM_ADMIN_GRANTED_ROLE_NAMES,
  visibleNavTabs,
  type RoleName,
} from '../src/index.js';

/** A user working as `role`, with or without the system-admin flag. */
const working = (role: RoleName, isSystemAdmin = role === 'SystemAdmin') => ({
  isSystemAdmin,
  workAsRole: { name: role },
});

describe('issue 26, item 10: who grants which study access', () => {
  it('everyone who manages study access grants the seven assignable roles of doc 1 §6', () => {
    for (const grantor of [working('StudyAdmin'), null, undefined, { isSystemAdmin: false, workAsRole: null }]) {
      expect(grantableRoleNames(grantor)).toEqual(['ISC', 'DM', 'PM', 'SPONSOR', 'LabTech', 'UPLOADER', 'CR']);
    }
  });

  it('a system admin working as SystemAdmin also grants Site, NOTO and LIS; working as another role, not', () => {
    expect(grantableRoleNames(working('SystemAdmin'))).toEqual([
      ...ASSIGNABLE_ROLE_NAMES,
      ...SYSTEM_ADMIN_GRANTED_ROLE_NAMES,
    ]);
    expect(SYSTEM_ADMIN_GRANTED_ROLE_NAMES).toEqual(['Site', 'NOTO', 'LIS']);
    expect(grantableRoleNames(working('StudyAdmin', true))).toEqual(ASSIGNABLE_ROLE_NAMES);
    // The flag alone is not enough, nor the role name alone.
    expect(grantableRoleNames({ isSystemAdmin: false, workAsRole: { name: 'SystemAdmin' } })).toEqual(
      ASSIGNABLE_ROLE_NAMES,
    );
  });

  it('SystemAdmin and StudyAdmin are never study access; an unknown role id is refused', () => {
    for (const grantor of [working('SystemAdmin'), working('StudyAdmin')]) {
      expect(mayGrantStudyRole(grantor, roleByName('SystemAdmin').id)).toBe(false);
      expect(mayGrantStudyRole(grantor, roleByName('StudyAdmin').id)).toBe(false);
      expect(mayGrantStudyRole(grantor, 77)).toBe(false);
      expect(mayGrantStudyRole(grantor, roleByName('CR').id)).toBe(true);
    }
    for (const name of ['Site', 'NOTO', 'LIS'] as const) {
      expect(mayGrantStudyRole(working('SystemAdmin'), roleByName(name).id), name).toBe(true);
      expect(mayGrantStudyRole(working('StudyAdmin'), roleByName(name).id), name).toBe(false);
    }
    // Every role held per study is grantable by a system admin: none is left to be provisioned by hand.
    const perStudy = ROLE_NAMES.filter((r) => r !== 'SystemAdmin' && r !== 'StudyAdmin');
    expect([...grantableRoleNames(working('SystemAdmin'))].sort()).toEqual([...perStudy].sort());
  });
});

describe('issue 26, item 9: only a system admin changes a system admin', () => {
  it('mayChangeAccount', () => {
    const sysadminAccount = { isSystemAdmin: true };
    const plainAccount = { isSystemAdmin: false };
    expect(mayChangeAccount(sysadminAccount, working('SystemAdmin'))).toBe(true);
    expect(mayChangeAccount(sysadminAccount, working('StudyAdmin'))).toBe(false);
    expect(mayChangeAccount(sysadminAccount, working('StudyAdmin', true))).toBe(false);
    expect(mayChangeAccount(sysadminAccount, null)).toBe(false);
    expect(mayChangeAccount(plainAccount, working('StudyAdmin'))).toBe(true);
    expect(mayChangeAccount(plainAccount, working('SystemAdmin'))).toBe(true);
  });
});

describe('issue 26, item 8: LIS is Image Management only', () => {
  const lis = new Set<string>(ROLE_PERMISSIONS.LIS);

  it('holds no viewer, no slide upload, no queries, and sees the Image Management tab only', () => {
    expect([...lis].filter((p) => /^AP_(ImageViewer|CaseViewer|ImageCaseViewer)_/.test(p))).toEqual([]);
    expect([...lis].filter((p) => /^Q_|^QP_/.test(p))).toEqual([]);
    expect(lis.has('S_ImageListTab_UploadImage')).toBe(false);
    expect(lis.has('IM_ImagesListTab_DownloadImages')).toBe(false);
    expect(visibleNavTabs(ROLE_PERMISSIONS.LIS).map((t) => t.label)).toEqual(['Image Management']);
    // What it does hold: the images list, sample data, the metadata edits.
    for (const p of [
      'IM_ImageListTab_ViewImageslistTab',
      'IM_ImagesListTab_UploadImagestoAssignedStudiesOnly',
      'AP_ImageData_EditAccessionNumber',
      'AP_ImageData_EditAnatomicalSegment',
      'AP_ImageData_EditProtocolID',
      'AP_CaseData_EditCollectionDate',
    ])
      expect(lis.has(p), p).toBe(true);
  });

  it('the sample-data permission without the upload permission, and the lists without the viewer: LIS only', () => {
    const roles = (test: (held: ReadonlySet<string>) => boolean) =>
      ROLE_NAMES.filter((r) => test(new Set<string>(ROLE_PERMISSIONS[r])));
    // So slide uploads needing S_ImageListTab_UploadImage alone take them from LIS and nobody else …
    expect(
      roles((h) => h.has('IM_ImagesListTab_UploadImagestoAssignedStudiesOnly') && !h.has('S_ImageListTab_UploadImage')),
    ).toEqual(['LIS']);
    // … and GET /api/images/{id} needing the viewer takes it from LIS and nobody else.
    expect(
      roles(
        (h) =>
          (h.has('IM_ImageListTab_ViewImageslistTab') || h.has('S_Main_ViewImagesTab')) &&
          !h.has('AP_ImageViewer_ViewimageViewer'),
      ),
    ).toEqual(['LIS']);
  });
});
