import { Button, Callout, Dialog, DialogBody, DialogFooter, Radio, RadioGroup, Spinner } from '@blueprintjs/core';
import { MESSAGES, type AvailableRole, type RoleRef } from '@lamina/domain';
import { useState, type ChangeEvent } from 'react';
import { errorMessage } from '../api/ApiError';
import { useAvailableRoles, useWorkAs } from '../api/users';

interface WorkAsDialogProps {
  isOpen: boolean;
  onClose: () => void;
  /** The role the user works as now; it is not offered. */
  currentRole: RoleRef | null;
}

/** The Work As dialog of doc 1 §2.3. Saving switches role and reloads the page. */
export function WorkAsDialog({ isOpen, onClose, currentRole }: WorkAsDialogProps) {
  const roles = useAvailableRoles(isOpen);
  const workAs = useWorkAs();
  const [selectedId, setSelectedId] = useState<number | null>(null);

  const available: readonly AvailableRole[] = roles.data ?? [];
  const otherRoles = available.filter((role) => role.id !== currentRole?.id);
  const chosen = otherRoles.some((role) => role.id === selectedId) ? selectedId : null;
  const canSave = available.length > 1 && chosen !== null && !workAs.isPending && !workAs.isSuccess;

  function handleClose() {
    setSelectedId(null);
    workAs.reset();
    onClose();
  }

  function handleChange(event: ChangeEvent<HTMLInputElement>) {
    setSelectedId(Number(event.currentTarget.value));
  }

  function handleSave() {
    if (chosen !== null) workAs.mutate(chosen);
  }

  return (
    <Dialog
      isOpen={isOpen}
      onClose={handleClose}
      title="Work As..."
      icon="swap-horizontal"
      className="lamina-work-as-dialog"
    >
      <DialogBody>
        {roles.isPending ? (
          <Spinner size={30} aria-label="Loading roles" />
        ) : roles.isError ? (
          <Callout intent="danger">{errorMessage(roles.error)}</Callout>
        ) : otherRoles.length === 0 ? (
          <p>{MESSAGES.noOtherRoles}</p>
        ) : (
          <RadioGroup
            label="Choose the role to work as"
            name="workAsRole"
            onChange={handleChange}
            selectedValue={chosen ?? undefined}
          >
            {otherRoles.map((role, index) => (
              // The first choice has the focus when the dialog opens (issue 20).
              <Radio key={role.id} value={role.id} label={role.displayName} autoFocus={index === 0} />
            ))}
          </RadioGroup>
        )}
        {workAs.isError && (
          <Callout intent="danger" className="lamina-dialog-error" role="alert">
            {MESSAGES.errorSwitchingRoles}
          </Callout>
        )}
      </DialogBody>
      <DialogFooter
        actions={
          <>
            <Button text="Cancel" onClick={handleClose} variant="minimal" />
            <Button text="Save" intent="primary" disabled={!canSave} loading={workAs.isPending} onClick={handleSave} />
          </>
        }
      />
    </Dialog>
  );
}
