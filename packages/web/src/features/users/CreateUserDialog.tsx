import {
  Button,
  Callout,
  ControlGroup,
  Dialog,
  DialogBody,
  DialogFooter,
  FormGroup,
  HTMLSelect,
  InputGroup,
} from '@blueprintjs/core';
import { zodResolver } from '@hookform/resolvers/zod';
import { USER_MESSAGES, type UserCreate, type UserCreateResponse, userCreateSchema } from '@lamina/domain';
import { useId, useState } from 'react';
import { Controller, useForm, type UseFormRegisterReturn } from 'react-hook-form';
import { errorMessage } from '../../api/ApiError';
import { useCreateUser, useOrganizations } from './api';

const EMPTY: UserCreate = { username: '', firstName: '', lastName: '', organizationId: null };

interface CreateUserDialogProps {
  isOpen: boolean;
  onClose: () => void;
}

/**
 * Create user (system admins; the spec has no such screen): email as username, names, organization.
 * On success the one-time initial password is shown once, with a copy button, and never again.
 */
export function CreateUserDialog({ isOpen, onClose }: CreateUserDialogProps) {
  const ids = { email: useId(), first: useId(), last: useId(), org: useId() };
  const organizations = useOrganizations();
  const create = useCreateUser();
  const [created, setCreated] = useState<UserCreateResponse | null>(null);
  const form = useForm<UserCreate>({
    defaultValues: EMPTY,
    resolver: zodResolver(userCreateSchema),
    mode: 'onTouched',
  });
  const { errors } = form.formState;

  function handleClose() {
    form.reset(EMPTY);
    create.reset();
    setCreated(null);
    onClose();
  }

  const submit = form.handleSubmit((input) => create.mutate(input, { onSuccess: setCreated }));

  return (
    <Dialog
      isOpen={isOpen}
      onClose={handleClose}
      title="Create user"
      icon="new-person"
      className="lamina-create-user-dialog"
    >
      {created ? (
        <InitialPassword response={created} onDone={handleClose} />
      ) : (
        <form onSubmit={(event) => void submit(event)} noValidate>
          <DialogBody>
            <FormGroup
              label="Email"
              labelFor={ids.email}
              intent={errors.username ? 'danger' : 'none'}
              helperText={errors.username?.message}
            >
              <InputGroup
                id={ids.email}
                type="email"
                autoComplete="off"
                // The first field has the focus when the dialog opens (issue 20).
                autoFocus
                {...inputProps(form.register('username'))}
              />
            </FormGroup>
            <FormGroup
              label="First Name"
              labelFor={ids.first}
              intent={errors.firstName ? 'danger' : 'none'}
              helperText={errors.firstName?.message}
            >
              <InputGroup id={ids.first} {...inputProps(form.register('firstName'))} />
            </FormGroup>
            <FormGroup
              label="Last Name"
              labelFor={ids.last}
              intent={errors.lastName ? 'danger' : 'none'}
              helperText={errors.lastName?.message}
            >
              <InputGroup id={ids.last} {...inputProps(form.register('lastName'))} />
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
                    fill
                    value={field.value ?? ''}
                    onChange={(event) =>
                      field.onChange(event.currentTarget.value === '' ? null : Number(event.currentTarget.value))
                    }
                    onBlur={field.onBlur}
                    options={[
                      { value: '', label: 'No organization' },
                      ...(organizations.data ?? []).map((o) => ({ value: o.id, label: o.name })),
                    ]}
                  />
                )}
              />
            </FormGroup>
            {create.isError && (
              <Callout intent="danger" className="lamina-dialog-error" role="alert">
                {errorMessage(create.error)}
              </Callout>
            )}
          </DialogBody>
          <DialogFooter
            actions={
              <>
                <Button text="Cancel" variant="minimal" onClick={handleClose} disabled={create.isPending} />
                <Button type="submit" intent="primary" text="Create" loading={create.isPending} />
              </>
            }
          />
        </form>
      )}
    </Dialog>
  );
}

/** react-hook-form's `register` for a Blueprint InputGroup (which takes the ref as `inputRef`). */
function inputProps(registration: UseFormRegisterReturn) {
  const { ref, ...rest } = registration;
  return { ...rest, inputRef: ref };
}

function InitialPassword({ response, onDone }: { response: UserCreateResponse; onDone: () => void }) {
  const passwordId = useId();
  const [copied, setCopied] = useState<boolean | null>(null);

  function handleCopy() {
    navigator.clipboard.writeText(response.initialPassword).then(
      () => setCopied(true),
      () => setCopied(false),
    );
  }

  return (
    <>
      <DialogBody>
        <Callout intent="success" icon="tick" className="lamina-dialog-note">
          {response.message}
        </Callout>
        <Callout intent="warning" title="Initial password" className="lamina-dialog-note">
          {USER_MESSAGES.initialPasswordWarning}
        </Callout>
        <FormGroup label={`Initial password for ${response.user.username}`} labelFor={passwordId}>
          <ControlGroup fill>
            <InputGroup
              id={passwordId}
              value={response.initialPassword}
              readOnly
              className="lamina-password"
              onFocus={(e) => e.currentTarget.select()}
            />
            <Button icon="duplicate" text={copied ? 'Copied' : 'Copy'} onClick={handleCopy} />
          </ControlGroup>
        </FormGroup>
        {copied === false && (
          <p className="lamina-field-errors">Copy failed; select the password and copy it by hand.</p>
        )}
      </DialogBody>
      <DialogFooter actions={<Button intent="primary" text="Done" onClick={onDone} />} />
    </>
  );
}
