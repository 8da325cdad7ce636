import { Button, Callout, Dialog, DialogBody, DialogFooter, type Intent } from '@blueprintjs/core';
import type { ReactNode } from 'react';

interface ConfirmDialogProps {
  isOpen: boolean;
  title: string;
  children: ReactNode;
  confirmText: string;
  intent?: Intent;
  isPending?: boolean;
  /** The action cannot be confirmed yet (e.g. a signature's password still empty). */
  confirmDisabled?: boolean;
  /** Shown in a red callout; the dialog stays open (doc 1 §4, §8). */
  error?: string | null;
  onConfirm: () => void;
  onClose: () => void;
}

/** A yes/no question before an action. On failure it shows the message and stays open. */
export function ConfirmDialog(props: ConfirmDialogProps) {
  const {
    isOpen,
    title,
    children,
    confirmText,
    intent = 'primary',
    isPending = false,
    confirmDisabled = false,
    error,
    onConfirm,
    onClose,
  } = props;
  return (
    <Dialog isOpen={isOpen} onClose={isPending ? undefined : onClose} title={title} className="lamina-confirm-dialog">
      <DialogBody>
        {children}
        {error && (
          <Callout intent="danger" className="lamina-dialog-error" role="alert">
            {error}
          </Callout>
        )}
      </DialogBody>
      <DialogFooter
        actions={
          <>
            <Button text="Cancel" variant="minimal" onClick={onClose} disabled={isPending} />
            {/* A confirmation opens with its action focused (issue 20): Enter confirms, Escape cancels. */}
            <Button
              text={confirmText}
              intent={intent}
              loading={isPending}
              disabled={confirmDisabled}
              onClick={onConfirm}
              autoFocus
            />
          </>
        }
      />
    </Dialog>
  );
}
