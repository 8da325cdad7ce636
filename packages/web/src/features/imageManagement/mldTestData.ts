import type { MldRecord } from '@lamina/domain';

/** An import as the Annotations tab lists it (tests). */
export function makeMld(overrides: Partial<MldRecord> = {}): MldRecord {
  return {
    mldId: 1,
    mldName: 'APP12_S1001_A.mld',
    mldFileLength: 1_572_864,
    status: 'COMPLETE',
    errorMessage: null,
    appSequenceId: '12',
    numLayers: 3,
    imageId: 7,
    imageName: 'S1001_A.tif',
    studyId: 3,
    caseId: 40,
    procId: 'ENDO-1001',
    histoProcedureId: 'HISTO-77',
    counts: { hpfs: 2, points: 10, regions: 1, lines: 0 },
    uploadedAt: '2026-11-20T10:00:00.000Z',
    uploadedBy: 'isc',
    ...overrides,
  };
}
