import { Dialog, DialogBody, FormGroup, HTMLSelect, InputGroup } from '@blueprintjs/core';
import {
  QUERY_REASON_TEXT_MAX,
  TEXT_LIMITS,
  type QueryObjectType,
  type QueryReasonAdminRow,
  type UpdateQueryReasonRequest,
} from '@lamina/domain';
import { useId, useState, type SyntheticEvent } from 'react';
import { errorMessage } from '../../api/ApiError';
import { showToast } from '../../components/appToaster';
import { DialogError, FormDialogFooter } from '../../components/FormDialogParts';
import { useSaveQueryReason } from './api';

/** What the dialog does: add a reason (top level or under `parent`), rename, move, (de)activate. */
export type ReasonEdit =
  | { kind: 'add'; parent: QueryReasonAdminRow | null }
  | { kind: 'rename'; reason: QueryReasonAdminRow }
  | { kind: 'move'; reason: QueryReasonAdminRow }
  | { kind: 'toggle'; reason: QueryReasonAdminRow };

interface QueryReasonDialogProps {
  edit: ReasonEdit;
  objectType: QueryObjectType;
  withRoleId: number;
  /** The top-level reasons of the same role and object type (the parents a reason may move under). */
  topLevel: readonly QueryReasonAdminRow[];
  onClose: () => void;
}

function titleOf(edit: ReasonEdit): string {
  switch (edit.kind) {
    case 'add':
      return edit.parent ? `Add a sub-reason to ${edit.parent.reasonText}` : 'Add a reason';
    case 'rename':
      return 'Rename reason';
    case 'move':
      return 'Move reason';
    case 'toggle':
      return edit.reason.active ? 'Deactivate reason' : 'Activate reason';
  }
}

/**
 * One change to the reason catalogue (issue 15), with an optional reason for change on existing
 * reasons (audited). The server's refusal (a duplicate, nesting deeper than one level …) shows in
 * a red callout and the dialog stays open.
 */
export function QueryReasonDialog({ edit, objectType, withRoleId, topLevel, onClose }: QueryReasonDialogProps) {
  const save = useSaveQueryReason();
  const existing = edit.kind === 'add' ? null : edit.reason;
  const [text, setText] = useState(edit.kind === 'rename' ? edit.reason.reasonText : '');
  const [parentId, setParentId] = useState<number | null>(existing?.parentId ?? null);
  const [why, setWhy] = useState('');
  const ids = { text: useId(), parent: useId(), why: useId() };
  const parents = topLevel.filter((r) => r.id !== existing?.id);

  const ready =
    edit.kind === 'add' || edit.kind === 'rename'
      ? text.trim() !== '' && (edit.kind === 'add' || text.trim() !== edit.reason.reasonText)
      : edit.kind === 'move'
        ? parentId !== edit.reason.parentId
        : true;

  const handleSubmit = (event: SyntheticEvent) => {
    event.preventDefault();
    if (!ready || save.isPending) return;
    const reasonForChange = why.trim() === '' ? {} : { reasonForChange: why.trim() };
    const done = {
      onSuccess: (response: { message: string }) => {
        void showToast(response.message);
        onClose();
      },
    };
    const update = (body: UpdateQueryReasonRequest) =>
      existing && save.mutate({ kind: 'update', id: existing.id, body: { ...body, ...reasonForChange } }, done);
    switch (edit.kind) {
      case 'add':
        return save.mutate(
          {
            kind: 'create',
            body: { objectType, withRoleId, parentId: edit.parent?.id ?? null, reasonText: text.trim() },
          },
          done,
        );
      case 'rename':
        return update({ reasonText: text.trim() });
      case 'move':
        return update({ parentId });
      case 'toggle':
        return update({ active: !edit.reason.active });
    }
  };

  return (
    <Dialog isOpen title={titleOf(edit)} onClose={save.isPending ? undefined : onClose} style={{ width: 480 }}>
      <form onSubmit={handleSubmit} aria-label={titleOf(edit)}>
        <DialogBody>
          {(edit.kind === 'add' || edit.kind === 'rename') && (
            <FormGroup label="Reason text" labelFor={ids.text} helperText={`${text.length} / ${QUERY_REASON_TEXT_MAX}`}>
              <InputGroup
                id={ids.text}
                autoFocus
                maxLength={QUERY_REASON_TEXT_MAX}
                value={text}
                onValueChange={setText}
              />
            </FormGroup>
          )}
          {edit.kind === 'move' && (
            <FormGroup label="Parent" labelFor={ids.parent} helperText="Reasons nest one level only.">
              <HTMLSelect
                id={ids.parent}
                fill
                value={parentId ?? ''}
                onChange={(e) => setParentId(e.currentTarget.value === '' ? null : Number(e.currentTarget.value))}
                options={[
                  { value: '', label: 'None (a top-level reason)' },
                  ...parents.map((r) => ({ value: r.id, label: r.reasonText })),
                ]}
              />
            </FormGroup>
          )}
          {edit.kind === 'toggle' && (
            <p>
              {edit.reason.active
                ? `'${edit.reason.reasonText}' will no longer be offered for new queries; the queries that name it keep it.`
                : `'${edit.reason.reasonText}' will be offered again for new queries.`}
            </p>
          )}
          {existing && (
            <FormGroup label="Reason for change (optional)" labelFor={ids.why}>
              <InputGroup id={ids.why} maxLength={TEXT_LIMITS.reason} value={why} onValueChange={setWhy} />
            </FormGroup>
          )}
          <DialogError error={save.isError ? errorMessage(save.error) : null} />
        </DialogBody>
        <FormDialogFooter
          submitText={
            edit.kind === 'add'
              ? 'Add'
              : edit.kind === 'toggle'
                ? edit.reason.active
                  ? 'Deactivate'
                  : 'Activate'
                : 'Save'
          }
          pending={save.isPending}
          disabled={!ready}
          onCancel={onClose}
        />
      </form>
    </Dialog>
  );
}
