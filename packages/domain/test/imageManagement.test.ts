import { describe, expect, it } from 'vitest';
import {
  IM_CASE_COLUMNS,
  IM_IMAGE_COLUMNS,
  imFilterCount,
  ROLE_PERMISSIONS,
  viewableColumns,
  visibleByDefault,
  type RoleName,
} from '../src/index.js';

const byDefault = (role: RoleName, columns: typeof IM_IMAGE_COLUMNS | typeof IM_CASE_COLUMNS) =>
  columns.filter((c) => visibleByDefault(c, role)).map((c) => c.label);

describe('Image Management columns (doc 2 §6)', () => {
  it('the filter badge: 1 for search text, 1 for studies, 1 for a date range, plus each status', () => {
    expect(imFilterCount({}, 'images')).toBe(0);
    expect(imFilterCount({ searchText: '  ' }, 'images')).toBe(0);
    expect(
      imFilterCount(
        {
          searchText: 'colon',
          studyFilter: { selectedIds: [1, 2] },
          dateFilter: 'Last7',
          imageStatusFilter: ['LAB_QC_PENDING', 'ISC_QC_PENDING'],
          caseStatusFilter: ['PROCESSED'],
        },
        'images',
      ),
    ).toBe(5);
    expect(imFilterCount({ studyFilter: { selectedIds: [] }, caseStatusFilter: ['PROCESSED'] }, 'cases')).toBe(1);
  });

  it('the image table’s default visibility per role, as the spec’s table lists it', () => {
    expect(byDefault('LabTech', IM_IMAGE_COLUMNS)).toEqual([
      'File Name',
      'Accession Number',
      'Sponsor',
      'Study Name',
      'Protocol ID',
      'Site ID',
      'Subject ID',
      'Lab Visit ID',
      'Anatomical Segment',
      'Collection Date',
      'Upload Date',
      'In Query',
      'Organization',
      'QA Comments',
    ]);
    expect(byDefault('DM', IM_IMAGE_COLUMNS)).toEqual([
      'Accession Number',
      'Sponsor',
      'Study Name',
      'Protocol ID',
      'Site ID',
      'Subject ID',
      'Visit ID',
      'Histo Procedure ID',
      'Endo Procedure ID',
      'Anatomical Segment',
      'Collection Date',
      'Status',
      'In Query',
    ]);
    expect(byDefault('PM', IM_IMAGE_COLUMNS)).not.toContain('Protocol ID');
    expect(byDefault('SPONSOR', IM_IMAGE_COLUMNS)).not.toContain('Upload Date');
  });

  it('the case table’s defaults: Date Created and CR Assignment for DM only, ISC QC for PM only', () => {
    expect(byDefault('DM', IM_CASE_COLUMNS)).toEqual(expect.arrayContaining(['Date Created', 'CR Assignment']));
    expect(byDefault('PM', IM_CASE_COLUMNS)).toContain('ISC QC');
    expect(byDefault('LabTech', IM_CASE_COLUMNS)).not.toContain('Images Expected');
    expect(byDefault('LabTech', IM_CASE_COLUMNS)).toContain('Lab Tech QC');
  });

  it('a central reader may view no subject, site or visit column', () => {
    const labels = viewableColumns(IM_IMAGE_COLUMNS, ROLE_PERMISSIONS.CR).map((c) => c.label);
    for (const blinded of ['Subject ID', 'Site ID', 'Visit ID', 'Lab Visit ID', 'File Name'])
      expect(labels).not.toContain(blinded);
  });
});
