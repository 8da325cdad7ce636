import { describe, expect, it } from 'vitest';
import {
  IM_CASE_COLUMNS,
  IM_EDIT_MESSAGES,
  IMAGE_ACTION_MESSAGES,
  imCaseEditRefusal,
  imImageEditRefusal,
  imImageEditRefusals,
  IM_IMAGE_COLUMNS,
  imColumn,
  imColumnValueError,
  imageDataStatus,
  imFilterCount,
  labVisitEditable,
  mayEditImColumn,
  type ImColumn,
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

describe('Edit Column rules (doc 2 §5–6)', () => {
  const image = (key: string) => imColumn('images', key) as ImColumn<string>;
  const kase = (key: string) => imColumn('cases', key) as ImColumn<string>;

  it('every editable column names an AP_*_Edit* permission; derived and counted ones are not editable', () => {
    for (const c of [...IM_IMAGE_COLUMNS, ...IM_CASE_COLUMNS])
      if (c.edit) expect(c.edit.permission, c.key).toMatch(/^AP_(ImageData|StudyData|CaseData)_Edit/);
    for (const key of ['status', 'inQuery', 'sponsor']) expect(image(key).edit).toBeNull();
    for (const key of ['totalImages', 'status', 'openQueries', 'labTech', 'crAssignments'])
      expect(kase(key).edit).toBeNull();
  });

  it('editing needs the view and the edit permission; the file name also pass-lab-QC; the study name by emptiness', () => {
    expect(mayEditImColumn(image('subjectId'), ['AP_CaseData_EditSubjectID'])).toBe(false);
    expect(mayEditImColumn(image('subjectId'), ['AP_CaseData_ViewSubjectID', 'AP_CaseData_EditSubjectID'])).toBe(true);
    const name = ['AP_ImageData_ViewFilename', 'AP_ImageData_EditFileName'];
    expect(mayEditImColumn(image('imageFilename'), name)).toBe(false);
    expect(mayEditImColumn(image('imageFilename'), [...name, 'AP_ImageViewer_ViewButtonPassLabQC'])).toBe(true);
    const empty = ['AP_StudyData_ViewStudyName', 'AP_StudyData_EditStudyName'];
    expect(mayEditImColumn(image('studyName'), empty, { populated: false })).toBe(true);
    expect(mayEditImColumn(image('studyName'), empty, { populated: true })).toBe(false);
    const populated = ['AP_StudyData_ViewStudyName', 'AP_StudyData_EditStudyNamePopulated'];
    expect(mayEditImColumn(image('studyName'), populated, { populated: true })).toBe(true);
    expect(mayEditImColumn(image('studyName'), populated, { populated: false })).toBe(false);
    expect(mayEditImColumn(image('status'), ['AP_ImageData_ViewImageStatus'])).toBe(false);
  });

  it('value rules: case fields, names, dates, counts, lengths', () => {
    const now = new Date('2026-11-25T12:00:00Z');
    expect(imColumnValueError('images', image('subjectId'), 'S'.repeat(31))).toBe(
      'Subject ID must be less than 30 characters',
    );
    expect(imColumnValueError('images', image('siteId'), 'A<b>')).toBe('Site ID must be alphanumeric');
    expect(imColumnValueError('cases', kase('procId'), null)).toBe(IM_EDIT_MESSAGES.required('Endo Procedure ID'));
    expect(imColumnValueError('images', image('imageFilename'), null)).toBe('File Name is required');
    expect(imColumnValueError('images', image('specimenCollectionDate'), '2026-02-29', now)).toBe(
      IM_EDIT_MESSAGES.badDate('Collection Date'),
    );
    expect(imColumnValueError('images', image('specimenCollectionDate'), '2024-02-29', now)).toBeNull();
    expect(imColumnValueError('images', image('specimenCollectionDate'), '2026-11-26', now)).toBe(
      IM_EDIT_MESSAGES.futureDate('Collection Date'),
    );
    expect(imColumnValueError('cases', kase('imagesExpected'), '12')).toBeNull();
    expect(imColumnValueError('cases', kase('imagesExpected'), '1.5')).toBe(
      IM_EDIT_MESSAGES.badCount('Images Expected'),
    );
    expect(imColumnValueError('cases', kase('imagesExpected'), '1001')).toBe(
      IM_EDIT_MESSAGES.badCount('Images Expected'),
    );
    expect(imColumnValueError('images', image('qaComments'), 'q'.repeat(1000))).toBeNull();
    expect(imColumnValueError('images', image('qaComments'), 'q'.repeat(1001))).toMatch(/less than 1000/);
    expect(imColumnValueError('images', image('protocolId'), 'p'.repeat(101))).toMatch(/less than 100/);
  });

  it('the Lab Visit ID condition', () => {
    expect(labVisitEditable({ caseId: null, studyId: 1, status: 'LAB_QC_PENDING' })).toBe(true);
    expect(labVisitEditable({ caseId: null, studyId: 1, status: 'PROCESSING' })).toBe(true);
    expect(labVisitEditable({ caseId: 4, studyId: 1, status: 'LAB_QC_PENDING' })).toBe(false);
    expect(labVisitEditable({ caseId: null, studyId: null, status: 'CASE_ASSIGNMENT_PENDING' })).toBe(false);
    expect(labVisitEditable({ caseId: null, studyId: 1, status: 'READY_FOR_READING' })).toBe(false);
  });

  it('the status study data gives an image', () => {
    const base = {
      status: 'CASE_ASSIGNMENT_PENDING',
      studyId: 1,
      caseId: null,
      siteId: 'S',
      subjectId: 'P',
      visitId: null,
    };
    expect(imageDataStatus(base, { markIncomplete: true })).toBe('DATA_INCOMPLETE');
    expect(imageDataStatus(base, { markIncomplete: false })).toBe('CASE_ASSIGNMENT_PENDING');
    const complete = { ...base, status: 'DATA_INCOMPLETE', visitId: 'V1' };
    expect(imageDataStatus(complete, { markIncomplete: false })).toBe('CASE_ASSIGNMENT_PENDING');
    expect(imageDataStatus({ ...base, caseId: 3, status: 'LAB_QC_PENDING' }, { markIncomplete: true })).toBe(
      'LAB_QC_PENDING',
    );
    expect(
      imageDataStatus({ ...base, studyId: null, status: 'STUDY_ASSIGNMENT_PENDING' }, { markIncomplete: true }),
    ).toBe('STUDY_ASSIGNMENT_PENDING');
  });
});

describe('imImageEditRefusal (issue 29 item 13: the pencils offered are the edits the server accepts)', () => {
  const free = { caseId: null, studyId: 3, status: 'CASE_ASSIGNMENT_PENDING' };
  const inCase = { caseId: 40, studyId: 3, status: 'LAB_QC_PENDING' };
  it('Site, Subject and Visit ID belong to the case of an image in a case', () => {
    for (const key of ['siteId', 'subjectId', 'visitId']) {
      expect(imImageEditRefusal(key, free)).toBeNull();
      expect(imImageEditRefusal(key, inCase)).toMatch(/can be edited only for an image without a case/);
    }
  });
  it('the procedure ids need a case; the Lab Visit ID follows labVisitEditable; archived images take no edit', () => {
    expect(imImageEditRefusal('histoProcedureId', free)).toBe(IM_EDIT_MESSAGES.noCase('Histo Procedure ID'));
    expect(imImageEditRefusal('histoProcedureId', inCase)).toBeNull();
    expect(imImageEditRefusal('labVisitId', free)).toBeNull();
    expect(imImageEditRefusal('labVisitId', inCase)).toBe(IM_EDIT_MESSAGES.labVisitNotNow);
    expect(imImageEditRefusal('labVisitId', { ...free, status: 'READY_FOR_READING' })).toBe(
      IM_EDIT_MESSAGES.labVisitNotNow,
    );
    expect(imImageEditRefusal('accessionNumber', { ...free, status: 'ARCHIVED' })).toBe(
      IMAGE_ACTION_MESSAGES.alreadyArchived,
    );
    expect(imImageEditRefusal('accessionNumber', inCase)).toBeNull();
  });
  it('imImageEditRefusals names the refused columns among those asked for, and only those (issue 29 item 17)', () => {
    expect(imImageEditRefusals(inCase, ['siteId', 'accessionNumber', 'labVisitId'])).toEqual({
      siteId: IM_EDIT_MESSAGES.onlyWithoutCase('Site ID'),
      labVisitId: IM_EDIT_MESSAGES.labVisitNotNow,
    });
    expect(imImageEditRefusals({ ...free, status: 'DATA_INCOMPLETE' }, ['labVisitId'])).toEqual({
      labVisitId: IM_EDIT_MESSAGES.labVisitNotNow,
    });
    expect(imImageEditRefusals(free, ['labVisitId', 'siteId'])).toEqual({});
    expect(imImageEditRefusals(inCase, [])).toEqual({});
  });
});

describe('imCaseEditRefusal', () => {
  it('refuses the columns of an archived case only', () => {
    expect(imCaseEditRefusal({ status: 'ARCHIVED' })).toBe('An archived case cannot be edited');
    expect(imCaseEditRefusal({ status: 'COMPLETED' })).toBeNull();
    expect(imCaseEditRefusal({})).toBeNull();
  });
});
