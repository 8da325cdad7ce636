import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  QUERY_ACTIONS,
  QUERY_MESSAGES,
  ROLES,
  ROLE_PERMISSIONS,
  daysBetween,
  followUpDate,
  isCancelled,
  isOverdue,
  queryActionsFor,
  queryCommentError,
  queryDynamicStatus,
  queryGroup,
  queryHistory,
  queryRelation,
  queryVisibility,
  queryableRoles,
  showsDisclaimer,
  truncateReason,
  wizardFollowUpDays,
  wizardReasonOptions,
  type QueryAction,
  type QueryView,
  type RoleName,
} from '../src/index.js';

const NOW = new Date('2026-11-25T15:00:00Z');
const role = (name: RoleName) => ROLES.find((r) => r.name === name)!;
/** The acting user's id, and another user's (a second reader of the same case). */
const ME = 101;
const SOMEONE_ELSE = 102;
const actorOf = (name: RoleName, id = ME) => ({
  id,
  workAsRole: { id: role(name).id, name },
  actions: new Set<string>(ROLE_PERMISSIONS[name]),
});

type Situation = 'unanswered' | 'answered' | 'closed';
const situations: Record<Situation, { queryStatus: 'OPEN' | 'CLOSED'; resolution: 'RESOLVED' | null }> = {
  unanswered: { queryStatus: 'OPEN', resolution: null },
  answered: { queryStatus: 'OPEN', resolution: 'RESOLVED' },
  closed: { queryStatus: 'CLOSED', resolution: 'RESOLVED' },
};

/**
 * The oracle: doc 3 §6's table read literally, with the permission each action needs, written
 * independently of the domain's data (the test fails if either drifts).
 */
function expected(
  who: RoleName,
  situation: Situation,
  opener: boolean,
  target: boolean,
  objectType: 'CASE' | 'IMAGE',
): Set<QueryAction> {
  const has = (p: string) => (ROLE_PERMISSIONS[who] as readonly string[]).includes(p);
  const out = new Set<QueryAction>();
  const closeAny = has('Q_Close_CancelQueryunderassignedstudies');
  const closer = has('Q_Close_CancelQueryunderUserRoleOnly') || closeAny;
  if (situation === 'unanswered') {
    if (target && has('Q_MarkQueryasResolved')) out.add('resolve');
    if (target && has('Q_MarkQueryasUnresolvable')) out.add('unresolvable');
    if ((opener || closeAny) && closer) out.add('cancel');
    if (opener && has('Q_Flagforfollowup')) out.add('followUp');
    if (has('Q_Commentonassignedqueries')) out.add('comment');
    if (
      target &&
      objectType === 'IMAGE' &&
      has('S_ImageListTab_UploadImage') &&
      ['StudyAdmin', 'ISC', 'LabTech', 'UPLOADER'].includes(who)
    )
      out.add('replaceImage');
  }
  if (situation === 'answered') {
    if ((opener || closeAny) && closer) out.add('close');
    if (has('Q_Commentonassignedqueries')) out.add('comment');
  }
  return out;
}

describe('the situation → actions table (doc 3 §6), every role × situation × relation × object type', () => {
  const others: RoleName[] = ['ISC', 'DM'];
  for (const who of ROLES.map((r) => r.name)) {
    for (const situation of Object.keys(situations) as Situation[]) {
      for (const [opener, target] of [
        [true, true],
        [true, false],
        [false, true],
        [false, false],
      ] as const) {
        for (const objectType of ['CASE', 'IMAGE'] as const) {
          it(`${who} ${situation} opener=${opener} target=${target} ${objectType}`, () => {
            const me = role(who).id;
            const other = role(others.find((o) => o !== who) ?? 'PM').id;
            const q = {
              objectType,
              ...situations[situation],
              openedByRoleId: opener ? me : other,
              openedBy: opener ? ME : SOMEONE_ELSE,
              withRoleId: target ? me : other,
              withUserId: target ? ME : null,
            };
            expect(new Set(queryActionsFor(q, actorOf(who)))).toEqual(
              expected(who, situation, opener, target, objectType),
            );
          });
        }
      }
    }
  }

  it('spells the spec rows for a role holding every query permission', () => {
    const isc = actorOf('ISC');
    const base = {
      objectType: 'IMAGE' as const,
      queryStatus: 'OPEN' as const,
      resolution: null,
      openedBy: SOMEONE_ELSE,
      withUserId: null,
    };
    const I = role('ISC').id;
    const D = role('DM').id;
    // Open; both opener and target: resolve, cancel, follow up, comment (+ replace for ISC).
    expect(queryActionsFor({ ...base, openedByRoleId: I, withRoleId: I }, isc)).toEqual([
      'resolve',
      'unresolvable',
      'cancel',
      'followUp',
      'comment',
      'replaceImage',
    ]);
    // Open; opener only: follow up, cancel, comment.
    expect(queryActionsFor({ ...base, openedByRoleId: I, withRoleId: D }, isc)).toEqual([
      'cancel',
      'followUp',
      'comment',
    ]);
    // Open; target only: resolve, comment, replace.
    expect(queryActionsFor({ ...base, openedByRoleId: D, withRoleId: I }, isc)).toEqual([
      'resolve',
      'unresolvable',
      'cancel', // ISC holds Q_Close_CancelQueryunderassignedstudies
      'comment',
      'replaceImage',
    ]);
    // Answered; opener: close and comment.
    expect(queryActionsFor({ ...base, resolution: 'RESOLVED', openedByRoleId: I, withRoleId: D }, isc)).toEqual([
      'close',
      'comment',
    ]);
  });

  it('a reader that opened an image query to LabTech may follow up, cancel, and close it once answered', () => {
    const cr = actorOf('CR');
    const q = {
      objectType: 'IMAGE' as const,
      queryStatus: 'OPEN' as const,
      resolution: null,
      openedByRoleId: role('CR').id,
      openedBy: ME,
      withRoleId: role('LabTech').id,
      withUserId: null,
    };
    expect(queryActionsFor(q, cr)).toEqual(['cancel', 'followUp', 'comment']);
    expect(queryActionsFor({ ...q, resolution: 'RESOLVED' }, cr)).toEqual(['close', 'comment']);
    expect(queryActionsFor(q, actorOf('LabTech'))).toEqual(['resolve', 'comment', 'replaceImage']);
    expect(queryActionsFor({ ...q, queryStatus: 'CLOSED' }, cr)).toEqual([]);
  });

  it('a user working as no role is always "other"', () => {
    const parties = { openedByRoleId: 3, openedBy: ME, withRoleId: 3, withUserId: ME };
    expect(queryRelation(parties, { id: ME, workAsRole: null })).toBe('other');
    expect(
      queryActionsFor(
        { ...parties, objectType: 'CASE', queryStatus: 'OPEN', resolution: null, withRoleId: 4 },
        { id: ME, workAsRole: null, actions: new Set(['Q_Commentonassignedqueries', 'Q_MarkQueryasResolved']) },
      ),
    ).toEqual(['comment']);
  });

  it('lists only known actions', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ROLES.map((r) => r.name)),
        fc.constantFrom('OPEN' as const, 'CLOSED' as const),
        fc.constantFrom('RESOLVED' as const, 'UNRESOLVABLE' as const, null),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 12 }),
        (who, queryStatus, resolution, openedByRoleId, withRoleId) => {
          const got = queryActionsFor(
            { objectType: 'CASE', queryStatus, resolution, openedByRoleId, openedBy: ME, withRoleId, withUserId: ME },
            actorOf(who),
          );
          expect(got.every((a) => QUERY_ACTIONS.includes(a))).toBe(true);
          if (queryStatus === 'CLOSED') expect(got).toEqual([]);
          expect(got).not.toContain('replaceImage'); // case queries never offer it
        },
      ),
    );
  });
});

describe('the lifecycle (doc 3 §4)', () => {
  it('groups open, answered and closed', () => {
    expect(queryGroup({ queryStatus: 'OPEN', resolution: null })).toBe('open');
    expect(queryGroup({ queryStatus: 'OPEN', resolution: 'RESOLVED' })).toBe('answered');
    expect(queryGroup({ queryStatus: 'CLOSED', resolution: 'RESOLVED' })).toBe('closed');
    expect(queryGroup({ queryStatus: 'CLOSED', resolution: 'UNRESOLVABLE' })).toBe('closed');
  });

  it('a query closed without an answer was cancelled', () => {
    expect(isCancelled({ queryStatus: 'CLOSED', resolution: null })).toBe(true);
    expect(isCancelled({ queryStatus: 'CLOSED', resolution: 'RESOLVED' })).toBe(false);
    expect(isCancelled({ queryStatus: 'OPEN', resolution: null })).toBe(false);
  });

  it('computes the dynamic status from the follow-up date', () => {
    const open = { queryStatus: 'OPEN' as const, resolution: null, followUps: 0 };
    expect(queryDynamicStatus({ ...open, latestFollowUpOnDt: '2026-11-24' }, NOW)).toBe('FOLLOWUPREQUIRED');
    expect(queryDynamicStatus({ ...open, latestFollowUpOnDt: '2026-11-25' }, NOW)).toBe('UPCOMINGDUEDATE');
    expect(queryDynamicStatus({ ...open, latestFollowUpOnDt: '2026-11-28' }, NOW)).toBe('UPCOMINGDUEDATE');
    expect(queryDynamicStatus({ ...open, latestFollowUpOnDt: '2026-11-29' }, NOW)).toBeNull();
    expect(queryDynamicStatus({ ...open, followUps: 1, latestFollowUpOnDt: '2026-12-09' }, NOW)).toBe('FOLLOWEDUP');
    expect(queryDynamicStatus({ ...open, resolution: 'RESOLVED', latestFollowUpOnDt: '2026-11-01' }, NOW)).toBe(
      'ANSWERED',
    );
    expect(
      queryDynamicStatus({ ...open, queryStatus: 'CLOSED', resolution: 'RESOLVED', latestFollowUpOnDt: null }, NOW),
    ).toBeNull();
  });

  it('is overdue only while open and unanswered past the follow-up date', () => {
    const q = { queryStatus: 'OPEN' as const, resolution: null, latestFollowUpOnDt: '2026-11-24' };
    expect(isOverdue(q, NOW)).toBe(true);
    expect(isOverdue({ ...q, latestFollowUpOnDt: '2026-11-25' }, NOW)).toBe(false);
    expect(isOverdue({ ...q, resolution: 'RESOLVED' }, NOW)).toBe(false);
    expect(isOverdue({ ...q, queryStatus: 'CLOSED' }, NOW)).toBe(false);
  });

  it('counts follow-up days in whole UTC days', () => {
    expect(followUpDate(NOW, 14)).toBe('2026-12-09');
    expect(followUpDate(new Date('2026-12-31T23:59:59Z'), 1)).toBe('2027-01-01');
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 365 }),
        fc.date({ min: new Date(2020, 0, 1), max: new Date(2040, 0, 1), noInvalidDate: true }),
        (days, now) => {
          expect(daysBetween(now, followUpDate(now, days))).toBe(days);
        },
      ),
    );
  });
});

describe('the wizard (doc 3 §4, §5)', () => {
  it('shows only active reasons, alphabetically, Other last', () => {
    const v = (reasonText: string, active = true) => ({
      reasonOptionId: reasonText.length,
      reasonText,
      reasonOptionIsActive: active,
      children: [],
    });
    expect(
      wizardReasonOptions([v('Other'), v('wrong stain'), v('Blurry'), v('Gone', false), v('incomplete')]).map(
        (x) => x.reasonText,
      ),
    ).toEqual(['Blurry', 'incomplete', 'wrong stain', 'Other']);
  });

  it('makes comments mandatory', () => {
    expect(queryCommentError('')).toBe('Comments are mandatory.');
    expect(queryCommentError('   ')).toBe(QUERY_MESSAGES.commentsMandatory);
    expect(queryCommentError(null)).toBe(QUERY_MESSAGES.commentsMandatory);
    expect(queryCommentError('Please rescan')).toBeNull();
  });

  it('defaults the follow-up to 14 days and replaces a past date by today', () => {
    expect(wizardFollowUpDays(null, NOW)).toBe(14);
    expect(wizardFollowUpDays('2026-11-20', NOW)).toBe(0);
    expect(wizardFollowUpDays('2026-11-30', NOW)).toBe(5);
    expect(wizardFollowUpDays('2030-01-01', NOW)).toBe(365);
  });

  it('truncates the list reason at 34 characters plus ...', () => {
    expect(truncateReason('Blurry / out of focus')).toBe('Blurry / out of focus');
    expect(truncateReason('x'.repeat(34))).toBe('x'.repeat(34));
    expect(truncateReason('x'.repeat(35))).toBe(`${'x'.repeat(34)}...`);
    expect(truncateReason(null)).toBe('');
  });
});

describe('who sees and who may be queried', () => {
  it('derives the queryable roles from the QP_* permissions', () => {
    expect(queryableRoles(new Set(ROLE_PERMISSIONS.CR)).map((r) => r.name)).toEqual(['ISC', 'DM', 'PM', 'LabTech']);
    expect(queryableRoles(new Set(ROLE_PERMISSIONS.LabTech))).toEqual([]);
    expect(queryableRoles(new Set(ROLE_PERMISSIONS.ISC)).map((r) => r.name)).toContain('DM');
  });

  it('derives the visibility from the Q_View* permissions', () => {
    expect(queryVisibility(new Set(ROLE_PERMISSIONS.StudyAdmin))).toBe('all');
    expect(queryVisibility(new Set(ROLE_PERMISSIONS.ISC))).toBe('all');
    expect(queryVisibility(new Set(ROLE_PERMISSIONS.CR))).toBe('role');
    expect(queryVisibility(new Set(ROLE_PERMISSIONS.LabTech))).toBe('role');
    expect(queryVisibility(new Set(ROLE_PERMISSIONS.LIS))).toBe('none');
  });

  it('shows the disclaimer to non-issuers of an open unresolved query', () => {
    const q = {
      queryStatus: 'OPEN' as const,
      resolution: null,
      openedByRoleId: role('DM').id,
      openedBy: ME,
      withRoleId: role('ISC').id,
      withUserId: null,
    };
    expect(showsDisclaimer(q, actorOf('ISC'))).toBe(true);
    expect(showsDisclaimer(q, actorOf('DM'))).toBe(false);
    expect(showsDisclaimer(q, actorOf('DM', SOMEONE_ELSE))).toBe(false); // roles act as one
    expect(showsDisclaimer({ ...q, resolution: 'RESOLVED' }, actorOf('ISC'))).toBe(false);
  });

  it('a blinded reader sees only the queries they opened or that were sent to them (issue 26)', () => {
    expect(queryVisibility(new Set(ROLE_PERMISSIONS.CR), { name: 'CR' })).toBe('person');
    expect(queryVisibility(new Set(ROLE_PERMISSIONS.CR), { name: 'ISC' })).toBe('role');
    // Even a reading role holding a see-all permission sees by person.
    expect(queryVisibility(new Set(['Q_ViewAllQueries']), { name: 'NOTO' })).toBe('person');
    expect(queryVisibility(new Set(ROLE_PERMISSIONS.NOTO), { name: 'NOTO' })).toBe('none');
  });
});

describe('readers relate to queries by person, not by role (issue 26)', () => {
  const CR = role('CR').id;
  const unanswered = { objectType: 'IMAGE' as const, queryStatus: 'OPEN' as const, resolution: null };
  const byReader1 = {
    ...unanswered,
    openedByRoleId: CR,
    openedBy: ME,
    withRoleId: role('LabTech').id,
    withUserId: null,
  };
  const toReader1 = { ...unanswered, openedByRoleId: role('ISC').id, openedBy: 7, withRoleId: CR, withUserId: ME };

  it('the reader who opened a query is its opener; a second reader of the case is not', () => {
    expect(queryRelation(byReader1, actorOf('CR'))).toBe('opener');
    expect(queryRelation(byReader1, actorOf('CR', SOMEONE_ELSE))).toBe('other');
    expect(queryActionsFor(byReader1, actorOf('CR'))).toEqual(['cancel', 'followUp', 'comment']);
    // Nothing but comment (and they never see it: the server's visibility rule).
    expect(queryActionsFor(byReader1, actorOf('CR', SOMEONE_ELSE))).toEqual(['comment']);
    expect(queryActionsFor({ ...byReader1, resolution: 'RESOLVED' }, actorOf('CR', SOMEONE_ELSE))).not.toContain(
      'close',
    );
  });

  it('the reader a query was sent to is its target; another reader is not', () => {
    expect(queryRelation(toReader1, actorOf('CR'))).toBe('target');
    expect(queryRelation(toReader1, actorOf('CR', SOMEONE_ELSE))).toBe('other');
    expect(queryRelation({ ...toReader1, withUserId: null }, actorOf('CR'))).toBe('other');
    expect(queryActionsFor(toReader1, actorOf('CR'))).toContain('resolve');
    expect(queryActionsFor(toReader1, actorOf('CR', SOMEONE_ELSE))).not.toContain('resolve');
  });

  it('roles that are not blinded keep the role rule', () => {
    expect(queryRelation(byReader1, actorOf('LabTech', SOMEONE_ELSE))).toBe('target');
    expect(queryRelation(toReader1, actorOf('ISC', SOMEONE_ELSE))).toBe('opener');
  });
});

describe('history', () => {
  it('orders opened, comments, follow-ups, reminders, resolution and close', () => {
    const q = {
      openedAt: '2026-11-01T10:00:00.000Z',
      createdBy: 'reader1',
      reasonText: 'Blurry / out of focus',
      childReasonText: 'Whole slide',
      comments: [
        {
          id: 1,
          queryId: 1,
          username: 'reader1',
          firstName: null,
          lastName: null,
          commentText: 'Please rescan',
          commentBy: 1,
          createdAt: '2026-11-01T10:00:00.000Z',
        },
        {
          id: 2,
          queryId: 1,
          username: 'labtech',
          firstName: null,
          lastName: null,
          commentText: 'On it',
          commentBy: 2,
          createdAt: '2026-11-03T10:00:00.000Z',
        },
      ],
      reminders: [
        {
          id: 1,
          queryId: 1,
          followUpOnDt: '2026-11-02',
          remindedOnDt: '2026-11-02T06:00:00.000Z',
          remindedBy: 'reader1',
          createdAt: '2026-11-01T10:00:00.000Z',
        },
        {
          id: 2,
          queryId: 1,
          followUpOnDt: '2026-11-10',
          remindedOnDt: null,
          remindedBy: 'reader1',
          createdAt: '2026-11-02T12:00:00.000Z',
        },
      ],
      resolution: 'RESOLVED',
      resolvedAt: '2026-11-04T10:00:00.000Z',
      resolvedBy: 'labtech',
      resolutionOption: 'Image replaced',
      resolutionText: null,
      queryStatus: 'CLOSED',
      closedAt: '2026-11-05T10:00:00.000Z',
      closedBy: 'reader1',
      closeText: 'Thanks',
      cancelled: false,
    } as unknown as QueryView;
    expect(queryHistory(q).map((e) => [e.kind, e.by, e.text])).toEqual([
      ['opened', 'reader1', 'Blurry / out of focus – Whole slide'],
      ['comment', 'reader1', 'Please rescan'],
      ['reminderSent', null, '2026-11-02'],
      ['followUp', 'reader1', '2026-11-10'],
      ['comment', 'labtech', 'On it'],
      ['resolved', 'labtech', 'Image replaced'],
      ['closed', 'reader1', 'Thanks'],
    ]);
  });
});
