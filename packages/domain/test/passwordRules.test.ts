import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  changePasswordRequestSchema,
  installZodMessages,
  MESSAGES,
  PASSWORD_RULES,
  passwordRuleError,
  passwordRuleErrors,
  userInfoSchema,
  usernameLocalPart,
} from '../src/index.js';

installZodMessages();

const username = 'Ada.Lovelace@example.org';
const rules = (newPassword: string, currentPassword = 'the old one', user = username) =>
  passwordRuleErrors({ newPassword, currentPassword, username: user });

describe('password rules', () => {
  it('accepts a long password unrelated to the username and the current password', () => {
    expect(rules('correct horse battery staple')).toEqual([]);
    expect(
      passwordRuleError({ newPassword: 'correct horse battery staple', currentPassword: 'x', username }),
    ).toBeNull();
  });

  it('needs at least 12 characters, counted as a person counts them', () => {
    expect(rules('elevenchars')).toEqual([MESSAGES.passwordTooShort]);
    expect(rules('twelve chars')).toEqual([]);
    expect(rules('')).toEqual([MESSAGES.passwordTooShort]);
    // Six emoji are twelve UTF-16 code units but six characters.
    expect(rules('🦊🦊🦊🦊🦊🦊')).toEqual([MESSAGES.passwordTooShort]);
    expect(rules('🦊🦊🦊🦊🦊🦊🦊🦊🦊🦊🦊🦊')).toEqual([]);
  });

  it('allows at most 1024 characters', () => {
    expect(rules('x'.repeat(PASSWORD_RULES.maxLength))).toEqual([]);
    expect(rules('x'.repeat(PASSWORD_RULES.maxLength + 1))).toEqual([MESSAGES.passwordTooLong]);
  });

  it('refuses the current password', () => {
    expect(rules('the same password', 'the same password')).toEqual([MESSAGES.passwordUnchanged]);
    expect(rules('The same password', 'the same password')).toEqual([]);
  });

  it("refuses a password containing the username's local part, in any letter case", () => {
    expect(rules('my name is ada.lovelace!')).toEqual([MESSAGES.passwordContainsUsername]);
    expect(rules('xxADA.LOVELACExx')).toEqual([MESSAGES.passwordContainsUsername]);
    // The domain is not part of the rule; a username without '@' counts whole.
    expect(rules('example.org is long enough')).toEqual([]);
    expect(rules('I am sysadmin, trust me', 'x', 'sysadmin')).toEqual([MESSAGES.passwordContainsUsername]);
    // A very short local part is not looked for.
    expect(rules('banana bread recipe', 'x', 'a@x.org')).toEqual([]);
  });

  it('lists every broken rule, in a fixed order; the first is the answer', () => {
    expect(rules('ada.lovelace', 'ada.lovelace')).toEqual([
      MESSAGES.passwordUnchanged,
      MESSAGES.passwordContainsUsername,
    ]);
    expect(rules('sam', 'sam', 'sam')).toEqual([
      MESSAGES.passwordTooShort,
      MESSAGES.passwordUnchanged,
      MESSAGES.passwordContainsUsername,
    ]);
    expect(passwordRuleError({ newPassword: 'sam', currentPassword: 'sam', username: 'sam' })).toBe(
      MESSAGES.passwordTooShort,
    );
  });

  it('takes the local part before the last @', () => {
    expect(usernameLocalPart('ada@example.org')).toBe('ada');
    expect(usernameLocalPart('"a@b"@example.org')).toBe('"a@b"');
    expect(usernameLocalPart('sysadmin')).toBe('sysadmin');
    expect(usernameLocalPart('@example.org')).toBe('@example.org');
  });

  it('never accepts a password that contains the local part (property)', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 3, maxLength: 20 }).filter((s) => s.trim() === s && !s.includes('@')),
        fc.string(),
        fc.string(),
        fc.boolean(),
        (local, before, after, upper) => {
          // Letter case of the password's copy differs when that round-trips (it does not for 'ß').
          const copy = upper && local.toUpperCase().toLowerCase() === local.toLowerCase() ? local.toUpperCase() : local;
          const errors = passwordRuleErrors({
            newPassword: `${before}${copy}${after}`,
            currentPassword: '',
            username: `${local}@example.org`,
          });
          expect(errors).toContain(MESSAGES.passwordContainsUsername);
        },
      ),
    );
  });

  it('state their limits in their messages', () => {
    expect(MESSAGES.passwordTooShort).toContain(String(PASSWORD_RULES.minLength));
    expect(MESSAGES.passwordTooLong).toContain(String(PASSWORD_RULES.maxLength));
  });
});

describe('changePasswordRequestSchema', () => {
  it('needs the current password and caps both sizes', () => {
    expect(changePasswordRequestSchema.safeParse({ currentPassword: 'a', newPassword: 'b' }).success).toBe(true);
    expect(
      changePasswordRequestSchema.safeParse({ currentPassword: '', newPassword: 'b' }).error?.issues[0]?.message,
    ).toBe(MESSAGES.currentPasswordRequired);
    expect(changePasswordRequestSchema.safeParse({ newPassword: 'b' }).error?.issues[0]?.message).toBe(
      'currentPassword is required',
    );
    expect(
      changePasswordRequestSchema.safeParse({ currentPassword: 'a', newPassword: 'x'.repeat(1025) }).error?.issues[0]
        ?.message,
    ).toBe(MESSAGES.passwordTooLong);
  });

  it('user info carries mustChangePassword', () => {
    expect(userInfoSchema.shape.mustChangePassword.safeParse(true).success).toBe(true);
    expect(userInfoSchema.shape.mustChangePassword.safeParse(undefined).success).toBe(false);
  });
});
