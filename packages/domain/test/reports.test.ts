import { describe, expect, it } from 'vitest';
import {
  ROLE_PERMISSIONS,
  auditTrailFileName,
  auditTrailFormats,
  imageDetailsColumns,
  parseReportDate,
  reportFileName,
  reportRange,
  reportTypesFor,
  startOfDayIn,
  zonedStamp,
} from '../src/index.js';

describe('report dates (doc 1 §5, §9)', () => {
  it('reads DD-MMM-YYYY and refuses what is not a real date', () => {
    expect(parseReportDate('05-Mar-2026')).toEqual({ year: 2026, month: 3, day: 5 });
    expect(parseReportDate('05-mar-2026')).toEqual({ year: 2026, month: 3, day: 5 });
    expect(parseReportDate('31-Feb-2026')).toBeNull();
    expect(parseReportDate('2026-03-05')).toBeNull();
    expect(parseReportDate('5-Mar-2026')).toBeNull();
    expect(parseReportDate('05-Foo-2026')).toBeNull();
  });

  it('includes the whole end date, in the viewer’s time zone', () => {
    expect(reportRange('01-Nov-2026', '01-Nov-2026', 'UTC')).toEqual({
      from: new Date('2026-11-01T00:00:00Z'),
      to: new Date('2026-11-02T00:00:00Z'),
    });
    expect(reportRange('01-Nov-2026', '02-Nov-2026', 'Europe/Paris')).toEqual({
      from: new Date('2026-10-31T23:00:00Z'),
      to: new Date('2026-11-02T23:00:00Z'),
    });
    // The day DST ends in Paris (25 Oct 2026) starts at +02:00.
    expect(startOfDayIn('Europe/Paris', { year: 2026, month: 10, day: 25 })).toEqual(new Date('2026-10-24T22:00:00Z'));
    expect(startOfDayIn('America/New_York', { year: 2026, month: 3, day: 8 })).toEqual(
      new Date('2026-03-08T05:00:00Z'),
    );
    expect(reportRange(undefined, undefined, 'UTC')).toEqual({ from: null, to: null });
    expect(reportRange('02-Nov-2026', '01-Nov-2026', 'UTC')).toHaveProperty('error');
    expect(reportRange('bad', undefined, 'UTC')).toHaveProperty('error');
  });

  it('names files from the study, the user, the date, the time and the zone (doc 1 §7)', () => {
    const at = new Date('2026-11-25T17:05:00Z');
    expect(reportFileName('DEMO-UC-001 Ulcerative Colitis', 'query', at)).toBe(
      'DEMO-UC-001UlcerativeColitis_query_25-Nov-2026.csv',
    );
    expect(reportFileName(null, 'image-details', at)).toBe('Global_image-details_25-Nov-2026.csv');
    expect(auditTrailFileName('Study A', 'dm@example.org', 'pdf', at, 'Europe/Paris')).toBe(
      'StudyA_dm_example.org_audit-trail_25-Nov-2026_1805_CET.pdf',
    );
    expect(zonedStamp(new Date('2026-11-25T23:30:00Z'), 'Asia/Tokyo')).toEqual({
      date: '26-Nov-2026',
      time: '0830',
      zoneName: 'GMT+9',
    });
  });
});

describe('who downloads what (doc 1 §6)', () => {
  it('PDF only for R_GenerateAuditTrailPDFonly, both for R_GenerateAuditTrailPDForCSV', () => {
    expect(auditTrailFormats(new Set(ROLE_PERMISSIONS.PM))).toEqual(['pdf']);
    expect(auditTrailFormats(new Set(ROLE_PERMISSIONS.DM))).toEqual(['pdf', 'csv']);
    expect(auditTrailFormats(new Set(ROLE_PERMISSIONS.SPONSOR))).toEqual([]);
  });

  it('the sponsor sees the image details sections and the read outcomes (issue 30)', () => {
    expect(reportTypesFor(new Set(ROLE_PERMISSIONS.SPONSOR))).toEqual([
      'image-details',
      'image-details-sponsor',
      'read-outcomes',
    ]);
    expect(reportTypesFor(new Set(ROLE_PERMISSIONS.SystemAdmin))).toHaveLength(7);
  });

  it('the read-outcomes report goes with the read outcomes: never to a blinded reader, nor to PM', () => {
    for (const role of ['ISC', 'DM', 'SPONSOR', 'StudyAdmin'] as const)
      expect(reportTypesFor(new Set(ROLE_PERMISSIONS[role])), role).toContain('read-outcomes');
    for (const role of ['CR', 'NOTO', 'PM', 'UPLOADER', 'LabTech'] as const)
      expect(reportTypesFor(new Set(ROLE_PERMISSIONS[role])), role).not.toContain('read-outcomes');
  });
});

describe('image details columns', () => {
  it('follow the reader’s column permissions; the sponsor variant the Sponsor role’s too', () => {
    const admin = imageDetailsColumns('image-details', new Set(ROLE_PERMISSIONS.StudyAdmin)).map((c) => c.key);
    expect(admin).toContain('subjectId');
    expect(admin).toContain('readers');
    const sponsorOfAdmin = imageDetailsColumns('image-details-sponsor', new Set(ROLE_PERMISSIONS.StudyAdmin)).map(
      (c) => c.key,
    );
    const sponsorOwn = imageDetailsColumns('image-details', new Set(ROLE_PERMISSIONS.SPONSOR)).map((c) => c.key);
    expect(sponsorOfAdmin).toEqual(sponsorOwn);
    expect(sponsorOwn).not.toContain('protocolId');
    expect(sponsorOwn).not.toContain('readers');
    expect(sponsorOwn).toContain('sponsor');
    for (const key of sponsorOfAdmin) expect(admin).toContain(key);
  });
});
