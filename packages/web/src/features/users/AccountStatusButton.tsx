import { USER_MESSAGES, deactivateAccountText, TEXT_LIMITS } from '@lamina/domain';
import { Button, Callout, FormGroup, TextArea } from '@blueprintjs/core';
import type { UserListRow } from '@lamina/domain';
import { useId, useState } from 'react';
import { errorMessage } from '../../api/ApiError';
import { showToast } from '../../components/appToaster';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { useSetUserActive } from './api';

/** Deactivate (after a confirmation, with an optional reason for the audit trail) or Activate. */
export function AccountStatusButton({ user }: { user: UserListRow }) {
  const reasonId = useId();
  const setActive = useSetUserActive(user.id);
  const [confirming, setConfirming] = useState(false);
  const [reason, setReason] = useState('');

  function handleDone(response: { message: string }) {
    setConfirming(false);
    setReason('');
    void showToast(response.message);
  }

  if (!user.active) {
    return (
      <div className="lamina-header-actions">
        {setActive.isError && (
          <Callout intent="danger" role="alert" compact>
            {errorMessage(setActive.error)}
          </Callout>
        )}
        <Button
          icon="unlock"
          text="Activate"
          loading={setActive.isPending}
          onClick={() => setActive.mutate({ active: true }, { onSuccess: handleDone })}
        />
      </div>
    );
  }
  return (
    <>
      <Button icon="disable" intent="danger" variant="outlined" text="Deactivate" onClick={() => setConfirming(true)} />
      <ConfirmDialog
        isOpen={confirming}
        title={USER_MESSAGES.deactivateQuestion}
        confirmText="Deactivate"
        intent="danger"
        isPending={setActive.isPending}
        error={setActive.isError ? errorMessage(setActive.error) : null}
        onConfirm={() => setActive.mutate({ active: false, reason }, { onSuccess: handleDone })}
        onClose={() => {
          setConfirming(false);
          setActive.reset();
        }}
      >
        <p>{deactivateAccountText(user.username)}</p>
        <FormGroup label="Reason (optional)" labelFor={reasonId}>
          <TextArea
            id={reasonId}
            fill
            maxLength={TEXT_LIMITS.reason}
            value={reason}
            onChange={(event) => setReason(event.currentTarget.value)}
          />
        </FormGroup>
      </ConfirmDialog>
    </>
  );
}
