import { describe, expect, it } from 'vitest';
import {
  CASE_FORWARD_STEPS,
  CASE_STATUSES,
  CASE_TRANSITIONS,
  IMAGE_STATUS_AT_STAGE,
  ROLE_PERMISSIONS,
  CASE_FORWARD_PERMISSIONS,
  canTransitionCase,
  caseFieldError,
  caseRequiredError,
  caseStage,
  forwardStepFrom,
  imageQcStepFrom,
  isReadingStatus,
  markScoredOutcome,
  imageStatusOnAssign,
  mayViewCaseField,
  normaliseCaseField,
  readsAssignedCasesOnly,
  revertChoices,
  revertConfirmation,
  revertRefused,
  type CaseField,
  type CaseStatus,
} from '../src/index.js';

describe('case field rules (doc 2 §5)', () => {
  const cases: [CaseField, number, string][] = [
    ['visitId', 75, 'Visit ID'],
    ['procId', 50, 'Endo Procedure ID'],
    ['histoProcedureId', 50, 'Histo Procedure ID'],
    ['subjectId', 30, 'Subject ID'],
    ['siteId', 30, 'Site ID'],
  ];
  it.each(cases)('%s: at most %i characters, then "{Field} must be less than {n} characters"', (field, max, label) => {
    expect(caseFieldError(field, 'a'.repeat(max))).toBeNull();
    expect(caseFieldError(field, 'a'.repeat(max + 1))).toBe(`${label} must be less than ${max} characters`);
    // Characters, not UTF-16 units: an emoji-free but astral letter counts once.
    expect(caseFieldError(field, '𝐀'.repeat(max))).toBeNull();
  });

  it.each(cases)('%s: letters, digits, whitespace and - _ . , \' " / ( ) @ # % & * only', (field, _max, label) => {
    expect(caseFieldError(field, `A-1_2.3,'"/()@#%&* b`)).toBeNull();
    expect(caseFieldError(field, 'Zürich 7')).toBeNull();
    for (const bad of ['a<b', 'a;b', 'a+b', 'a=b', 'a!b', 'a?b', 'a$b', 'a\\b', 'a[b]'])
      expect(caseFieldError(field, bad), bad).toBe(`${label} must be alphanumeric`);
  });

  it('requires the Endo Procedure ID and the Subject ID; normalises blanks to null', () => {
    expect(caseRequiredError('procId', '  ')).toBe('Endo Procedure ID is required');
    expect(caseRequiredError('subjectId', null)).toBe('Subject ID is required');
    expect(caseRequiredError('siteId', null)).toBeNull();
    expect(normaliseCaseField('  x ')).toBe('x');
    expect(normaliseCaseField('   ')).toBeNull();
  });

  it('blinded fields need their view permission: central readers see none of them', () => {
    const cr = new Set<string>(ROLE_PERMISSIONS.CR);
    for (const field of ['subjectId', 'siteId', 'visitId'] as const) expect(mayViewCaseField(cr, field)).toBe(false);
    expect(mayViewCaseField(cr, 'procId')).toBe(true);
    const dm = new Set<string>(ROLE_PERMISSIONS.DM);
    for (const field of ['subjectId', 'siteId', 'visitId'] as const) expect(mayViewCaseField(dm, field)).toBe(true);
    expect(readsAssignedCasesOnly({ name: 'CR' })).toBe(true);
    expect(readsAssignedCasesOnly({ name: 'NOTO' })).toBe(true);
    expect(readsAssignedCasesOnly({ name: 'DM' })).toBe(false);
    expect(readsAssignedCasesOnly(null)).toBe(false);
  });
});

describe('Mark as Scored and pass QC (issue 13)', () => {
  it('a read completes the case only when it is the last assigned reader’s', () => {
    const readers = [
      { userId: 1, readAt: null },
      { userId: 2, readAt: null },
    ];
    expect(markScoredOutcome(readers, 1)).toEqual({ assigned: true, alreadyRead: false, completes: false });
    expect(
      markScoredOutcome(
        [
          { userId: 1, readAt: null },
          { userId: 2, readAt: 'x' },
        ],
        1,
      ).completes,
    ).toBe(true);
    expect(markScoredOutcome([{ userId: 1, readAt: 'x' }], 1)).toMatchObject({ alreadyRead: true, completes: false });
    expect(markScoredOutcome(readers, 3)).toMatchObject({ assigned: false, completes: false });
  });

  it('issue 30: primary readers mark a Processed case, only its adjudicator a case Pending Adjudication', () => {
    const readers = [
      { userId: 1, readAt: 'x', role: 'PRIMARY' as const },
      { userId: 2, readAt: null, role: 'PRIMARY' as const },
      { userId: 3, readAt: null, role: 'ADJUDICATOR' as const },
    ];
    // The adjudicator's open read does not hold up the primary reading.
    expect(markScoredOutcome(readers, 2)).toEqual({ assigned: true, alreadyRead: false, completes: true });
    expect(markScoredOutcome(readers, 3)).toMatchObject({ assigned: false, completes: false });
    expect(markScoredOutcome(readers, 3, 'PENDING_ADJUDICATION')).toEqual({
      assigned: true,
      alreadyRead: false,
      completes: true,
    });
    expect(markScoredOutcome(readers, 2, 'PENDING_ADJUDICATION')).toMatchObject({ assigned: false, completes: false });
    expect(forwardStepFrom('PENDING_ADJUDICATION')).toMatchObject({
      to: 'COMPLETED',
      permission: 'AP_CaseViewer_MarkCaseasScored',
      images: { from: 'READY_FOR_READING', to: 'COMPLETE' },
    });
    // Set back like a stage, never to it: only the rule sends a case there.
    const pending = {
      status: 'PENDING_ADJUDICATION' as const,
      prevWorkflowStatuses: ['PENDING_LAB_QC', 'PENDING_QC', 'PROCESSED'],
    };
    expect(revertChoices(pending, false)).toEqual(['PENDING_LAB_QC', 'PENDING_QC', 'PROCESSED']);
    expect(revertChoices(pending, true)).toEqual(['PENDING_LAB_QC', 'PENDING_QC', 'PROCESSED', 'COMPLETED']);
    expect(canTransitionCase('PROCESSED', 'PENDING_ADJUDICATION')).toBe(true);
    expect(canTransitionCase('PENDING_QC', 'PENDING_ADJUDICATION')).toBe(false);
    expect(CASE_FORWARD_PERMISSIONS).toEqual([
      'AP_ImageViewer_ViewButtonPassLabQC',
      'AP_CaseViewer_ViewButtonPassISCQC',
      'AP_CaseViewer_MarkCaseasScored',
    ]);
    // The reading statuses: those whose forward step is a reader's Mark as Scored.
    expect(CASE_STATUSES.filter(isReadingStatus)).toEqual(['PROCESSED', 'PENDING_ADJUDICATION']);
  });

  it('an image passes lab QC in a Pending Lab QC case and ISC QC in a Pending QC case', () => {
    expect(imageQcStepFrom('LAB_QC_PENDING')).toMatchObject({ to: 'ISC_QC_PENDING', caseStatus: 'PENDING_LAB_QC' });
    expect(imageQcStepFrom('ISC_QC_PENDING')).toMatchObject({ to: 'READY_FOR_READING', caseStatus: 'PENDING_QC' });
    for (const status of ['CASE_ASSIGNMENT_PENDING', 'READY_FOR_READING', 'COMPLETE', 'ARCHIVED'] as const)
      expect(imageQcStepFrom(status)).toBeNull();
  });
});

describe('case workflow (docs/WORKFLOW.md)', () => {
  it('forward: Pending Lab QC → Pending QC → Processed, and Processed → Completed by Mark as Scored', () => {
    expect(forwardStepFrom('PENDING_LAB_QC')).toMatchObject({
      to: 'PENDING_QC',
      permission: 'AP_ImageViewer_ViewButtonPassLabQC',
      images: { from: 'LAB_QC_PENDING', to: 'ISC_QC_PENDING' },
    });
    expect(forwardStepFrom('PENDING_QC')).toMatchObject({
      to: 'PROCESSED',
      permission: 'AP_CaseViewer_ViewButtonPassISCQC',
      images: { from: 'ISC_QC_PENDING', to: 'READY_FOR_READING' },
    });
    expect(forwardStepFrom('PROCESSED')).toMatchObject({
      to: 'COMPLETED',
      permission: 'AP_CaseViewer_MarkCaseasScored',
      images: { from: 'READY_FOR_READING', to: 'COMPLETE' },
    });
    for (const status of ['COMPLETED', 'ON_HOLD', 'INVALID', 'ARCHIVED'] as const)
      expect(forwardStepFrom(status), status).toBeNull();
    // Each step's images move to the stage status of the step's target.
    for (const step of CASE_FORWARD_STEPS) expect(step.images.to).toBe(IMAGE_STATUS_AT_STAGE[step.to]);
  });

  it.each<[CaseStatus, CaseStatus | null, string | null]>([
    ['PENDING_LAB_QC', null, 'LAB_QC_PENDING'],
    ['PENDING_QC', null, 'ISC_QC_PENDING'],
    ['ON_HOLD', 'PENDING_LAB_QC', 'LAB_QC_PENDING'],
    ['ON_HOLD', 'PENDING_QC', 'ISC_QC_PENDING'],
    ['ON_HOLD', 'PROCESSED', 'READY_FOR_READING'],
    ['PROCESSED', null, null],
    ['COMPLETED', null, null],
    ['ARCHIVED', null, null],
    ['INVALID', null, null],
  ])('an image assigned to a case in %s (held from %s) takes %s', (status, from, expected) => {
    expect(imageStatusOnAssign(status, from)).toBe(expected);
  });

  it('revert: on the study page only earlier statuses; in Image Management any stage; never the current one', () => {
    const processed = { status: 'PROCESSED' as const, prevWorkflowStatuses: ['PENDING_LAB_QC', 'PENDING_QC'] };
    expect(revertChoices(processed, false)).toEqual(['PENDING_LAB_QC', 'PENDING_QC']);
    expect(revertChoices(processed, true)).toEqual(['PENDING_LAB_QC', 'PENDING_QC', 'COMPLETED']);
    expect(revertChoices({ status: 'PENDING_LAB_QC', prevWorkflowStatuses: [] }, false)).toEqual([]);
    // A history with holds and a revert lists each earlier stage once, never ON_HOLD.
    const history = {
      status: 'PENDING_QC' as const,
      prevWorkflowStatuses: ['PENDING_LAB_QC', 'PENDING_QC', 'ON_HOLD', 'PROCESSED'],
    };
    expect(revertChoices(history, false)).toEqual(['PENDING_LAB_QC', 'PROCESSED']);
    // A held or archived case is not reverted.
    expect(revertChoices({ status: 'ON_HOLD', prevWorkflowStatuses: ['PENDING_LAB_QC'] }, true)).toEqual([]);
    expect(revertChoices({ status: 'ARCHIVED', prevWorkflowStatuses: ['PENDING_LAB_QC'] }, true)).toEqual([]);
  });

  it('the stage of a held case is the status the hold left', () => {
    expect(caseStage('ON_HOLD', 'PENDING_QC')).toBe('PENDING_QC');
    expect(caseStage('ON_HOLD', null)).toBeNull();
    expect(caseStage('INVALID', null)).toBeNull();
  });

  it('the transitions as data: archived is terminal, hold and remove hold pair up, nothing reaches INVALID', () => {
    for (const s of CASE_STATUSES) expect(canTransitionCase('ARCHIVED', s)).toBe(false);
    for (const s of ['PENDING_LAB_QC', 'PENDING_QC', 'PROCESSED'] as const) {
      expect(canTransitionCase(s, 'ON_HOLD')).toBe(true);
      expect(canTransitionCase('ON_HOLD', s)).toBe(true);
    }
    expect(canTransitionCase('COMPLETED', 'ON_HOLD')).toBe(false);
    expect(CASE_TRANSITIONS.some((t) => t.to === 'INVALID')).toBe(false);
    expect(canTransitionCase('PENDING_LAB_QC', 'PROCESSED')).toBe(true); // revert in Image Management (any stage)
  });

  it('messages', () => {
    expect(revertRefused('Pending QC')).toBe(
      'Unable to set status of case back to Pending QC. Must set new status and include reason for change.',
    );
    expect(revertConfirmation('ENDO-1', 'Pending Lab QC')).toBe(
      "Are you sure you want to set the status of case 'ENDO-1' back to 'Pending Lab QC'?",
    );
  });
});
