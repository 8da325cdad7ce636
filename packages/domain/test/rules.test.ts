import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  installZodMessages,
  isEmptyValue,
  loginRequestSchema,
  reasonForChangeError,
  valuesDiffer,
  workAsRequestSchema,
  cannotDecode,
  hasAny,
} from '../src/index.js';

installZodMessages();

describe('reason for change', () => {
  const cases: [unknown, unknown, string | undefined, string | null][] = [
    ['A', 'B', undefined, 'Reason for change is required'],
    ['A', 'B', '   ', 'Reason for change is required'],
    ['A', 'B', 'typo', null],
    [null, 'B', undefined, null],
    ['', 'B', undefined, null],
    [[], ['x'], undefined, null],
    [['x'], ['x', 'y'], undefined, 'Reason for change is required'],
    ['A', 'A', undefined, null],
    [3, 4, '', 'Reason for change is required'],
    [false, true, undefined, 'Reason for change is required'],
  ];
  it.each(cases)('%j → %j with reason %j', (before, after, reason, expected) => {
    expect(reasonForChangeError(before, after, reason)).toBe(expected);
  });

  it('treats null, undefined, blank strings and empty lists as empty', () => {
    expect([null, undefined, '', '  ', []].every(isEmptyValue)).toBe(true);
    expect([0, false, 'x', ['a']].some(isEmptyValue)).toBe(false);
    expect(valuesDiffer(['a', 'b'], ['b', 'a'])).toBe(true);
  });
});

describe('request schemas and messages', () => {
  it('name the field in default messages', () => {
    const r = loginRequestSchema.safeParse({ username: 'a' });
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.message).toBe('password is required');
    expect(loginRequestSchema.safeParse({ username: '  ', password: 'x' }).error?.issues[0]?.message).toBe(
      'username is required',
    );
    expect(workAsRequestSchema.safeParse({ roleId: 'x' }).error?.issues[0]?.message).toBe('roleId must be number');
  });

  it("reject unknown enumeration values with 'Cannot decode … from {value}'", () => {
    const schema = z.object({ indication: z.enum(['NASH', 'CELIAC_DISEASE']) });
    expect(schema.safeParse({ indication: 'FLU' }).error?.issues[0]?.message).toBe('Cannot decode indication from FLU');
    expect(cannotDecode('role', 7)).toBe('Cannot decode role from 7');
  });

  it('passes a check when any listed permission is held', () => {
    expect(hasAny(['A', 'B'], ['S_Main_ViewStudyPage', 'UM_ViewUsersPage'])).toBe(false);
    expect(hasAny(['UM_ViewUsersPage'], ['S_Main_ViewStudyPage', 'UM_ViewUsersPage'])).toBe(true);
    expect(hasAny([], [])).toBe(true);
  });
});
