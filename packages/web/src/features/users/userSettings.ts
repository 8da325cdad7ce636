import { userUpdateSchema, type UserListRow, type UserUpdate } from '@lamina/domain';

/** The user settings form (doc 1 §2.8); the email is shown from the username and never sent. */
export interface UserSettingsValues {
  firstName: string;
  lastName: string;
  organizationId: number | null;
}

/** Form values as react-hook-form holds them (the schema's shape, every field optional). */
export function toSettingsValues(values: UserUpdate): UserSettingsValues {
  return {
    firstName: values.firstName ?? '',
    lastName: values.lastName ?? '',
    organizationId: values.organizationId ?? null,
  };
}

export function settingsFromUser(
  user: Pick<UserListRow, 'firstName' | 'lastName' | 'organizationId'>,
): UserSettingsValues {
  return { firstName: user.firstName ?? '', lastName: user.lastName ?? '', organizationId: user.organizationId };
}

/** PUT body: first name, last name and organization, each only when non-empty (doc 1 §5). */
export function buildUserUpdate(values: UserSettingsValues): UserUpdate {
  const update: UserUpdate = {};
  if (values.firstName.trim() !== '') update.firstName = values.firstName.trim();
  if (values.lastName.trim() !== '') update.lastName = values.lastName.trim();
  if (values.organizationId !== null) update.organizationId = values.organizationId;
  return update;
}

export function settingsChanged(initial: UserSettingsValues, values: UserSettingsValues): boolean {
  return (
    initial.firstName.trim() !== values.firstName.trim() ||
    initial.lastName.trim() !== values.lastName.trim() ||
    initial.organizationId !== values.organizationId
  );
}

/**
 * Save is enabled by a change to first or last name (doc 1 §4), and also by a change of
 * organization, which the form saves too. A user not registered yet can be saved unchanged, since
 * saving is what registers them. Never with a blank name, never without the register-user permission.
 */
export function canSaveSettings(args: {
  initial: UserSettingsValues;
  values: UserSettingsValues;
  registered: boolean;
  mayRegister: boolean;
}): boolean {
  const { initial, values, registered, mayRegister } = args;
  if (!mayRegister) return false;
  if (!userUpdateSchema.safeParse(values).success) return false;
  return settingsChanged(initial, values) || !registered;
}
