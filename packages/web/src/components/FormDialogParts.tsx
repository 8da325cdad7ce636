import { Button, Callout, DialogFooter, type Intent } from '@blueprintjs/core';

/** A dialog's failure message: a red callout (doc 2 §2.7); nothing without one. */
export function DialogError({ error }: { error: string | null }) {
  if (!error) return null;
  return (
    <Callout intent="danger" role="alert" className="lamina-dialog-error">
      {error}
    </Callout>
  );
}

/** The footer of a form dialog: Cancel, and the submit button (disabled until the form is ready). */
export function FormDialogFooter(props: {
  submitText: string;
  pending: boolean;
  disabled: boolean;
  onCancel: () => void;
  intent?: Intent;
}) {
  return (
    <DialogFooter
      actions={
        <>
          <Button text="Cancel" variant="minimal" onClick={props.onCancel} disabled={props.pending} />
          <Button
            type="submit"
            intent={props.intent ?? 'primary'}
            text={props.submitText}
            loading={props.pending}
            disabled={props.disabled}
          />
        </>
      }
    />
  );
}
