import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  CASE_STATUSES,
  CASE_TRANSITIONS,
  IMAGE_STATUSES,
  IMAGE_TRANSITIONS,
  IMAGE_STATUS_LABELS,
  PROCESSING_STATUSES,
  canTransitionCase,
  canTransitionImage,
  canTransitionProcessing,
  createImageRequestSchema,
  effectiveObjectivePower,
  hasImageExtension,
  imageExtent,
  magnificationsFor,
  maxTmsZoom,
  notifyUploadRequestSchema,
  processedState,
  signedUrlsRequestSchema,
  statusAfterProcessing,
  unsupportedFileType,
  viewerProcessingMessage,
  acceptedImageExtensions,
  IMAGE_EXTENSIONS,
  imageAccept,
  imageExtensionOf,
  openSlideFormatOf,
  SPEC_IMAGE_EXTENSIONS,
} from '../src/index.js';

describe('statuses', () => {
  it('lists the spec values exactly', () => {
    expect(IMAGE_STATUSES).toEqual([
      'PROCESSING',
      'FAIL_PROCESSING',
      'DATA_INCOMPLETE',
      'STUDY_ASSIGNMENT_PENDING',
      'DUPLICATE_IMAGE',
      'CASE_ASSIGNMENT_PENDING',
      'LAB_QC_PENDING',
      'ISC_QC_PENDING',
      'READY_FOR_READING',
      'COMPLETE',
      'ARCHIVED',
    ]);
    // The spec's case statuses, and Lamina's Pending Adjudication (issue 30) between Processed and Completed.
    expect(CASE_STATUSES).toEqual([
      'PENDING_LAB_QC',
      'PENDING_QC',
      'PROCESSED',
      'PENDING_ADJUDICATION',
      'COMPLETED',
      'ON_HOLD',
      'INVALID',
      'ARCHIVED',
    ]);
    expect(PROCESSING_STATUSES).toEqual(['HOLDING', 'PENDING', 'SUBMITTED', 'SUCCESS', 'FAIL']);
    expect(IMAGE_STATUS_LABELS.CASE_ASSIGNMENT_PENDING).toBe('Case Assignment Pending');
  });

  it('every transition names known statuses, and archived is terminal', () => {
    for (const t of IMAGE_TRANSITIONS) {
      expect(IMAGE_STATUSES).toContain(t.from);
      expect(IMAGE_STATUSES).toContain(t.to);
    }
    for (const t of CASE_TRANSITIONS) {
      expect(CASE_STATUSES).toContain(t.from);
      expect(CASE_STATUSES).toContain(t.to);
    }
    for (const s of IMAGE_STATUSES) expect(canTransitionImage('ARCHIVED', s)).toBe(false);
    for (const s of CASE_STATUSES) expect(canTransitionCase('ARCHIVED', s)).toBe(false);
  });

  it('processing leads from PROCESSING to exactly the four outcomes', () => {
    const fromProcessing = IMAGE_TRANSITIONS.filter((t) => t.from === 'PROCESSING')
      .map((t) => t.to)
      .sort();
    expect(fromProcessing).toEqual([
      'ARCHIVED',
      'CASE_ASSIGNMENT_PENDING',
      'DUPLICATE_IMAGE',
      'FAIL_PROCESSING',
      'STUDY_ASSIGNMENT_PENDING',
    ]);
    fc.assert(
      fc.property(fc.boolean(), fc.boolean(), fc.boolean(), (ok, hasStudy, duplicate) => {
        const to = statusAfterProcessing({ ok, hasStudy, duplicate });
        expect(canTransitionImage('PROCESSING', to)).toBe(true);
        if (!ok) expect(to).toBe('FAIL_PROCESSING');
      }),
    );
    expect(statusAfterProcessing({ ok: true, hasStudy: true, duplicate: false })).toBe('CASE_ASSIGNMENT_PENDING');
    expect(statusAfterProcessing({ ok: true, hasStudy: false, duplicate: false })).toBe('STUDY_ASSIGNMENT_PENDING');
    expect(statusAfterProcessing({ ok: true, hasStudy: true, duplicate: true })).toBe('DUPLICATE_IMAGE');
  });

  it('processing status only moves forward', () => {
    expect(canTransitionProcessing('PENDING', 'SUBMITTED')).toBe(true);
    expect(canTransitionProcessing('SUBMITTED', 'SUCCESS')).toBe(true);
    expect(canTransitionProcessing('SUBMITTED', 'FAIL')).toBe(true);
    expect(canTransitionProcessing('SUCCESS', 'PENDING')).toBe(false);
    expect(canTransitionProcessing('FAIL', 'SUCCESS')).toBe(false);
  });

  it('processed column and viewer messages', () => {
    expect(processedState({ cogKey: 'images/1/pyramid.tif', processingStatus: 'SUCCESS' })).toBe('Succeeded');
    expect(processedState({ cogKey: null, processingStatus: 'FAIL' })).toBe('Failed');
    expect(processedState({ cogKey: null, processingStatus: 'SUBMITTED' })).toBeNull();
    expect(viewerProcessingMessage({ processingStatus: 'PENDING', status: 'PROCESSING', statusMessage: null })).toBe(
      'Image processing...',
    );
    expect(
      viewerProcessingMessage({
        processingStatus: 'FAIL',
        status: 'FAIL_PROCESSING',
        statusMessage: 'The JPEG 2000 data of tile 3 (column 3, row 0) of level 0 could not be decoded',
      }),
    ).toBe('Image processing failed: The JPEG 2000 data of tile 3 (column 3, row 0) of level 0 could not be decoded');
    expect(
      viewerProcessingMessage({ processingStatus: 'SUCCESS', status: 'CASE_ASSIGNMENT_PENDING', statusMessage: null }),
    ).toBeNull();
  });
});

describe('accepted files', () => {
  it.each([
    ['slide.svs', true],
    ['SLIDE.SVS', true],
    ['a.Tif', true],
    ['b.tiff', true],
    ['c.ndpi', true],
    ['d.tiff.zip', true],
    ['e.jpg', false],
    ['f.ndpi.txt', false],
    ['.svs', false],
    ['svs', false],
  ])('%s → %s', (name, ok) => {
    expect(hasImageExtension(name)).toBe(ok);
  });

  it('names the refused file and the accepted extensions', () => {
    expect(unsupportedFileType('x.jpg')).toBe(
      `File type not supported: x.jpg. Accepted files: ${IMAGE_EXTENSIONS.join(', ')}`,
    );
    expect(unsupportedFileType('x.ndpi', SPEC_IMAGE_EXTENSIONS)).toBe(
      'File type not supported: x.ndpi. Accepted files: .svs, .tif, .tiff',
    );
  });

  it('accepts the vendor formats that need OpenSlide only where it is installed (issue 31)', () => {
    expect(acceptedImageExtensions({ openslide: true })).toEqual([
      '.svs',
      '.tif',
      '.tiff',
      '.ndpi',
      '.scn',
      '.bif',
      '.svslide',
      '.dcm',
      '.zip',
    ]);
    // DICOM is read by Lamina itself; an archive's content decides.
    expect(acceptedImageExtensions({ openslide: false })).toEqual(['.svs', '.tif', '.tiff', '.dcm', '.zip']);
    expect(openSlideFormatOf('Scan 1.NDPI')?.label).toBe('Hamamatsu NDPI');
    expect(openSlideFormatOf('a.tiff')).toBeNull();
    expect(openSlideFormatOf('series.zip')).toBeNull();
    expect(imageExtensionOf('x.tiff')).toBe('.tiff'); // the longest match, not '.tif'
    expect(hasImageExtension('a.ndpi', acceptedImageExtensions({ openslide: false }))).toBe(false);
    expect(imageAccept(['.svs', '.ndpi'])).toBe('.svs,.ndpi');
  });

  it('validates the upload payloads', () => {
    expect(signedUrlsRequestSchema.safeParse({ studyId: 1, fileNames: ['a.svs'] }).success).toBe(true);
    expect(signedUrlsRequestSchema.safeParse({ studyId: 1, fileNames: [] }).success).toBe(false);
    expect(
      createImageRequestSchema.safeParse({
        name: 'a.svs',
        s3Key: 'uploads/1/x/a.svs',
        studyId: 1,
        imageToReplaceId: null,
      }).success,
    ).toBe(true);
    expect(notifyUploadRequestSchema.parse({ studyId: 1, numFiles: 2 }).failures).toBe(0);
  });
});

describe('viewer geometry', () => {
  it('maxTmsZoom: z = 0 is one tile', () => {
    expect(maxTmsZoom(16, 16)).toBe(0);
    expect(maxTmsZoom(256, 100)).toBe(0);
    expect(maxTmsZoom(257, 100)).toBe(1);
    expect(maxTmsZoom(2220, 2967)).toBe(4);
    expect(maxTmsZoom(300, 250)).toBe(1);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 500_000 }), fc.integer({ min: 1, max: 500_000 }), (w, h) => {
        const z = maxTmsZoom(w, h);
        expect(Math.max(w, h) / 2 ** z).toBeLessThanOrEqual(256);
        if (z > 0) expect(Math.max(w, h) / 2 ** (z - 1)).toBeGreaterThan(256);
      }),
    );
  });

  it('magnifications up to the objective power, estimated from the pixel size when absent', () => {
    expect(magnificationsFor(20)).toEqual([1.25, 2.5, 5, 10, 20]);
    expect(magnificationsFor(40)).toEqual([1.25, 2.5, 5, 10, 20, 40]);
    expect(magnificationsFor(null, 0.499)).toEqual([1.25, 2.5, 5, 10, 20]);
    expect(magnificationsFor(null, 0.25)).toEqual([1.25, 2.5, 5, 10, 20, 40]);
    expect(magnificationsFor(null, null)).toEqual([]);
    expect(effectiveObjectivePower(null, 0.5)).toBe(20);
  });

  it('extent is pixel space with y up', () => {
    expect(imageExtent(2220, 2967)).toEqual([0, -2967, 2220, 0]);
  });
});
