import { USER_MESSAGES, type StudyAccessChange } from '@lamina/domain';
import { useState, type ReactNode } from 'react';
import { errorMessage } from '../../api/ApiError';
import { showToast } from '../../components/appToaster';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { useAddStudyAccess, useRemoveStudyAccess } from './api';

/** A study-access change waiting for its confirmation, with the sentence the dialog asks. */
export interface PendingAccessChange {
  change: StudyAccessChange;
  text: string;
}

interface StudyAccessConfirmDialogsProps {
  adding: PendingAccessChange | null;
  removing: PendingAccessChange | null;
  /** Closes the add dialog (cancelled, or done: then `added` is true). */
  onAddClosed: (added: boolean) => void;
  onRemoveClosed: () => void;
}

/**
 * The two confirmations of study access (doc 1 §2.8): 'Confirm Study Access' before a grant and
 * 'Are you sure you want to remove study access?' before a removal. On success a toast with the
 * server's message; on failure the message in the dialog, which stays open. Used by the user's
 * Study Access tab and by the study's access screen.
 */
function StudyAccessConfirmDialogs({ adding, removing, onAddClosed, onRemoveClosed }: StudyAccessConfirmDialogsProps) {
  const add = useAddStudyAccess();
  const remove = useRemoveStudyAccess();

  function handleConfirmAdd() {
    if (!adding) return;
    add.mutate(adding.change, {
      onSuccess: (response) => {
        onAddClosed(true);
        void showToast(response.message);
      },
    });
  }

  function handleConfirmRemove() {
    if (!removing) return;
    remove.mutate(removing.change, {
      onSuccess: (response) => {
        onRemoveClosed();
        void showToast(response.message);
      },
    });
  }

  return (
    <>
      <ConfirmDialog
        isOpen={adding !== null}
        title={USER_MESSAGES.confirmStudyAccessTitle}
        confirmText="Confirm"
        isPending={add.isPending}
        error={add.isError ? errorMessage(add.error) : null}
        onConfirm={handleConfirmAdd}
        onClose={() => {
          onAddClosed(false);
          add.reset();
        }}
      >
        {adding && <p>{adding.text}</p>}
      </ConfirmDialog>
      <ConfirmDialog
        isOpen={removing !== null}
        title={USER_MESSAGES.removeStudyAccessQuestion}
        confirmText="Remove Access"
        intent="danger"
        isPending={remove.isPending}
        error={remove.isError ? errorMessage(remove.error) : null}
        onConfirm={handleConfirmRemove}
        onClose={() => {
          onRemoveClosed();
          remove.reset();
        }}
      >
        {removing && <p>{removing.text}</p>}
      </ConfirmDialog>
    </>
  );
}

/**
 * The confirmations of one study-access view: `confirmAdd` and `confirmRemove` open them, `dialogs`
 * renders them; `onAdded` runs after a grant went through (e.g. to clear the choices).
 */
export function useStudyAccessConfirmations(onAdded: () => void): {
  confirmAdd: (pending: PendingAccessChange) => void;
  confirmRemove: (pending: PendingAccessChange) => void;
  dialogs: ReactNode;
} {
  const [adding, setAdding] = useState<PendingAccessChange | null>(null);
  const [removing, setRemoving] = useState<PendingAccessChange | null>(null);
  return {
    confirmAdd: setAdding,
    confirmRemove: setRemoving,
    dialogs: (
      <StudyAccessConfirmDialogs
        adding={adding}
        removing={removing}
        onAddClosed={(added) => {
          setAdding(null);
          if (added) onAdded();
        }}
        onRemoveClosed={() => setRemoving(null)}
      />
    ),
  };
}
