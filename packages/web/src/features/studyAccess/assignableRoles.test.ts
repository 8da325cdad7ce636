import { describe, expect, it } from 'vitest';
import { makeRoleViews, makeUser, makeUserAs } from '../../test/fixtures';
import { assignableRoles } from './assignableRoles';

const names = (roles: { name: string }[]) => roles.map((r) => r.name);

describe('assignableRoles: the role choices of the study-access forms (the domain rule, issue 26)', () => {
  it('the seven assignable roles, in the domain order, for a study admin', () => {
    expect(names(assignableRoles(makeRoleViews(), makeUserAs('StudyAdmin', ['UM_GrantStudyAccess'])))).toEqual([
      'ISC',
      'DM',
      'PM',
      'SPONSOR',
      'LabTech',
      'UPLOADER',
      'CR',
    ]);
  });

  it('and Site, NOTO and LIS for a system admin working as SystemAdmin only', () => {
    const sysadmin = makeUserAs('SystemAdmin', ['UM_GrantStudyAccess'], { isSystemAdmin: true });
    expect(names(assignableRoles(makeRoleViews(), sysadmin))).toEqual([
      'ISC',
      'DM',
      'PM',
      'SPONSOR',
      'LabTech',
      'UPLOADER',
      'CR',
      'Site',
      'NOTO',
      'LIS',
    ]);
    const elsewhere = makeUserAs('StudyAdmin', ['UM_GrantStudyAccess'], { isSystemAdmin: true });
    expect(names(assignableRoles(makeRoleViews(), elsewhere))).not.toContain('Site');
    expect(names(assignableRoles(makeRoleViews(), undefined))).toHaveLength(7);
    expect(names(assignableRoles(makeRoleViews(), makeUser()))).not.toContain('SystemAdmin');
  });
});
