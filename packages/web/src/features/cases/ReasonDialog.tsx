import { Dialog, DialogBody, FormGroup, TextArea, type Intent } from '@blueprintjs/core';
import { TEXT_LIMITS } from '@lamina/domain';
import { useId, useState, type ReactNode } from 'react';
import { DialogError, FormDialogFooter } from '../../components/FormDialogParts';

interface ReasonDialogProps {
  title: string;
  /** The question or explanation above the reason. */
  children?: ReactNode;
  confirmText: string;
  intent?: Intent;
  isPending: boolean;
  /** The server's message, in a red callout; the dialog stays open. */
  error: string | null;
  onConfirm: (reason: string) => void;
  onClose: () => void;
  /** Extra fields above the reason (a status choice); confirming also waits for `ready`. */
  ready?: boolean;
  width?: number;
}

/**
 * A dialog whose action needs a reason for change (doc 2 §5: archive, hold, remove hold, revert,
 * assign, move): Confirm stays disabled until a reason is typed; a failure shows in red and keeps
 * the dialog open.
 */
export function ReasonDialog(props: ReasonDialogProps) {
  const { title, children, confirmText, intent = 'primary', isPending, error, onConfirm, onClose } = props;
  const [reason, setReason] = useState('');
  const id = useId();
  const ready = (props.ready ?? true) && reason.trim() !== '';
  return (
    <Dialog
      isOpen
      title={title}
      onClose={isPending ? undefined : onClose}
      style={{ width: props.width ?? 500 }}
      className="lamina-reason-dialog"
    >
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (ready && !isPending) onConfirm(reason.trim());
        }}
      >
        <DialogBody>
          {children}
          <FormGroup label="Reason for change" labelFor={id} labelInfo="(required)">
            <TextArea
              id={id}
              fill
              autoFocus
              value={reason}
              maxLength={TEXT_LIMITS.reason}
              onChange={(event) => setReason(event.currentTarget.value)}
            />
          </FormGroup>
          <DialogError error={error} />
        </DialogBody>
        <FormDialogFooter
          submitText={confirmText}
          intent={intent}
          pending={isPending}
          disabled={!ready}
          onCancel={onClose}
        />
      </form>
    </Dialog>
  );
}
