import { describe, expect, it } from 'vitest';
import { buildUserUpdate, canSaveSettings } from './userSettings';

const initial = { firstName: 'Rita', lastName: 'Reader', organizationId: 1 };

describe('user settings rules (doc 1 §4, §5)', () => {
  it.each([
    [{ ...initial }, true, false],
    [{ ...initial, firstName: 'Ritta' }, true, true],
    [{ ...initial, lastName: 'Reads' }, true, true],
    [{ ...initial, organizationId: 2 }, true, true],
    [{ ...initial, firstName: ' Rita ' }, true, false],
    [{ ...initial, firstName: ' ' }, true, false],
    [{ ...initial, lastName: '' }, true, false],
    [{ ...initial }, false, true],
  ])('%j (registered %s) → Save %s', (values, registered, expected) => {
    expect(canSaveSettings({ initial, values, registered, mayRegister: true })).toBe(expected);
  });

  it('never saves without the register-user permission', () => {
    expect(
      canSaveSettings({ initial, values: { ...initial, firstName: 'X' }, registered: true, mayRegister: false }),
    ).toBe(false);
  });

  it('sends each field only when it is not empty', () => {
    expect(buildUserUpdate({ firstName: ' Rita ', lastName: 'Reader', organizationId: null })).toEqual({
      firstName: 'Rita',
      lastName: 'Reader',
    });
    expect(buildUserUpdate({ firstName: '', lastName: '', organizationId: 4 })).toEqual({ organizationId: 4 });
  });
});
