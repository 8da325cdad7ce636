import { Button, Callout, FormGroup, HTMLSelect, InputGroup } from '@blueprintjs/core';
import { zodResolver } from '@hookform/resolvers/zod';
import {
  hasAny,
  mayChangeAccount,
  userUpdateSchema,
  USER_MESSAGES,
  type UserListRow,
  type UserUpdate,
  TEXT_LIMITS,
} from '@lamina/domain';
import { useId, useState } from 'react';
import { Controller, useForm, useWatch } from 'react-hook-form';
import { errorMessage } from '../../api/ApiError';
import { useUserInfo } from '../../api/users';
import { showToast } from '../../components/appToaster';
import { useOrganizations, useUpdateUser } from './api';
import { buildUserUpdate, canSaveSettings, settingsFromUser, toSettingsValues } from './userSettings';

/**
 * The User Settings tab (doc 1 §2.8): names and organization; saving registers the user. A system
 * admin's settings are changed only by a system admin (issue 26): others see them read-only.
 */
export function UserSettingsForm({ user }: { user: UserListRow }) {
  const ids = { first: useId(), last: useId(), email: useId(), org: useId() };
  const me = useUserInfo().data;
  const registers = hasAny(me?.actions ?? [], ['UM_RegisterUser']);
  const mayRegister = registers && mayChangeAccount(user, me);
  const organizations = useOrganizations();
  const update = useUpdateUser(user.id);
  const [initial, setInitial] = useState(() => settingsFromUser(user));
  const [registered, setRegistered] = useState(user.registered);
  const form = useForm<UserUpdate>({
    defaultValues: initial,
    resolver: zodResolver(userUpdateSchema),
    mode: 'onChange',
  });
  const values = toSettingsValues({ ...initial, ...useWatch({ control: form.control }) });
  const { errors } = form.formState;
  const canSave = canSaveSettings({ initial, values, registered, mayRegister }) && !update.isPending;

  const submit = form.handleSubmit((parsed) => {
    update.mutate(buildUserUpdate(toSettingsValues(parsed)), {
      onSuccess: (response) => {
        const saved = settingsFromUser(response.user);
        setInitial(saved);
        setRegistered(response.user.registered);
        form.reset(saved);
        void showToast(response.message);
      },
    });
  });

  const organizationOptions = [
    { value: '', label: 'No organization' },
    ...(organizations.data ?? []).map((o) => ({ value: o.id, label: o.name })),
  ];

  return (
    <form
      className="lamina-user-settings"
      onSubmit={(event) => void submit(event)}
      noValidate
      aria-label="User settings"
    >
      {registers && !mayRegister && <Callout intent="primary">{USER_MESSAGES.systemAdminAccount}</Callout>}
      <FormGroup
        label="First Name"
        labelFor={ids.first}
        intent={errors.firstName ? 'danger' : 'none'}
        helperText={errors.firstName?.message}
      >
        <Controller
          control={form.control}
          name="firstName"
          render={({ field }) => (
            <InputGroup
              id={ids.first}
              value={field.value ?? ''}
              onValueChange={field.onChange}
              onBlur={field.onBlur}
              readOnly={!mayRegister}
              maxLength={TEXT_LIMITS.personName}
            />
          )}
        />
      </FormGroup>
      <FormGroup
        label="Last Name"
        labelFor={ids.last}
        intent={errors.lastName ? 'danger' : 'none'}
        helperText={errors.lastName?.message}
      >
        <Controller
          control={form.control}
          name="lastName"
          render={({ field }) => (
            <InputGroup
              id={ids.last}
              value={field.value ?? ''}
              onValueChange={field.onChange}
              onBlur={field.onBlur}
              readOnly={!mayRegister}
              maxLength={TEXT_LIMITS.personName}
            />
          )}
        />
      </FormGroup>
      <FormGroup label="Email Address" labelFor={ids.email}>
        <InputGroup id={ids.email} value={user.username} readOnly className="lamina-readonly-input" />
      </FormGroup>
      <FormGroup
        label="Organization"
        labelFor={ids.org}
        intent={organizations.isError ? 'danger' : 'none'}
        helperText={organizations.isError ? errorMessage(organizations.error) : undefined}
      >
        <Controller
          control={form.control}
          name="organizationId"
          render={({ field }) => (
            <HTMLSelect
              id={ids.org}
              value={field.value ?? ''}
              onChange={(event) =>
                field.onChange(event.currentTarget.value === '' ? null : Number(event.currentTarget.value))
              }
              onBlur={field.onBlur}
              options={organizationOptions}
              disabled={!mayRegister}
              fill
            />
          )}
        />
      </FormGroup>
      {update.isError && (
        <Callout intent="danger" title="Error" role="alert" className="lamina-form-error">
          {errorMessage(update.error)}
        </Callout>
      )}
      {mayRegister && (
        <div className="lamina-form-actions">
          <Button type="submit" intent="primary" text="Save" disabled={!canSave} loading={update.isPending} />
        </div>
      )}
    </form>
  );
}
