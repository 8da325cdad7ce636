import { Callout, Dialog, DialogBody, FormGroup, HTMLSelect, InputGroup, TextArea } from '@blueprintjs/core';
import {
  IM_EDIT_MESSAGES,
  IM_QA_COMMENTS_MAX,
  TEXT_LIMITS,
  imColumnValueError,
  isEmptyValue,
  type ImColumn,
  type ImEditTab,
} from '@lamina/domain';
import { useId, useState } from 'react';
import { errorMessage } from '../../api/ApiError';
import { showToast } from '../../components/appToaster';
import { DialogError, FormDialogFooter } from '../../components/FormDialogParts';
import { useDebouncedValue } from '../../components/useDebouncedValue';
import { useStudy, useStudyList } from '../../api/studies';
import { useEditColumn } from './api';

export interface ColumnEdit {
  tab: ImEditTab;
  column: ImColumn<string>;
  /** The image's id (images tab) or the case's (cases tab). */
  id: number;
  studyId: number | null;
  /** The value as the table holds it ('' or null when empty). */
  current: string | null;
}

/**
 * Edit Column (doc 2 §2.7, §5): one value of one row. When the row already has a value, a reason is
 * required and Confirm waits for it and for a different value; when it is empty, Confirm waits for a
 * value and no reason is asked. Visit and Lab Visit IDs are chosen from the study configuration's
 * options ('No options configured' without any), the Anatomical Segment from the study's segments.
 * The server's message shows in a red callout.
 */
export function EditColumnDialog({ edit, onClose }: { edit: ColumnEdit; onClose: () => void }) {
  const { column, current } = edit;
  const kind = column.edit?.kind ?? 'text';
  const id = useId();
  const mutation = useEditColumn();
  const [value, setValue] = useState(current ?? '');
  const [reason, setReason] = useState('');
  const hadValue = !isEmptyValue(current);
  const trimmed = value.trim();
  const changed = trimmed !== (current ?? '').trim();
  const formatError = changed ? imColumnValueError(edit.tab, column, trimmed === '' ? null : trimmed) : null;
  const options = useColumnOptions(edit, kind, trimmed);
  const ready =
    changed &&
    !formatError &&
    (hadValue ? reason.trim() !== '' : trimmed !== '') &&
    !(options.kind === 'options' && options.choices.length === 0) &&
    !mutation.isPending;

  function confirm() {
    if (!ready) return;
    mutation.mutate(
      {
        id: edit.id,
        body: {
          tabName: edit.tab,
          columnName: column.key,
          columnValue: trimmed === '' ? null : trimmed,
          reasonForChange: hadValue ? reason.trim() : null,
        },
      },
      {
        onSuccess: (response) => {
          void showToast(response.message);
          onClose();
        },
      },
    );
  }

  return (
    <Dialog
      isOpen
      title={`Edit ${column.label}`}
      onClose={mutation.isPending ? undefined : onClose}
      style={{ width: 480 }}
    >
      <form
        onSubmit={(event) => {
          event.preventDefault();
          confirm();
        }}
      >
        <DialogBody>
          <p>
            Current value: <strong>{hadValue ? current : '-'}</strong>
          </p>
          <FormGroup
            label={`New ${column.label}`}
            labelFor={`${id}-value`}
            intent={formatError ? 'danger' : 'none'}
            helperText={formatError ?? undefined}
          >
            {options.kind === 'loading' && <InputGroup id={`${id}-value`} disabled placeholder="Loading ..." />}
            {options.kind === 'error' && (
              <Callout intent="danger" role="alert">
                {IM_EDIT_MESSAGES.unableToLoadLabVisitIds}
              </Callout>
            )}
            {options.kind === 'options' &&
              (options.choices.length === 0 ? (
                <p className="bp6-text-muted" id={`${id}-value`}>
                  {IM_EDIT_MESSAGES.noOptionsConfigured}
                </p>
              ) : (
                <HTMLSelect
                  id={`${id}-value`}
                  fill
                  autoFocus
                  value={value}
                  onChange={(event) => setValue(event.currentTarget.value)}
                  options={[{ value: '', label: 'Choose …' }, ...options.choices]}
                />
              ))}
            {options.kind === 'free' && (
              <>
                <InputGroup
                  id={`${id}-value`}
                  autoFocus
                  type={kind === 'date' ? 'date' : kind === 'count' ? 'number' : 'text'}
                  value={value}
                  maxLength={column.key === 'qaComments' ? IM_QA_COMMENTS_MAX : TEXT_LIMITS.studyName}
                  list={options.suggestions.length > 0 ? `${id}-suggestions` : undefined}
                  onValueChange={setValue}
                />
                {options.suggestions.length > 0 && (
                  <datalist id={`${id}-suggestions`}>
                    {options.suggestions.map((s) => (
                      <option key={s} value={s} />
                    ))}
                  </datalist>
                )}
              </>
            )}
          </FormGroup>
          {hadValue && (
            <FormGroup label="Reason for change" labelFor={`${id}-reason`} labelInfo="(required)">
              <TextArea
                id={`${id}-reason`}
                fill
                value={reason}
                maxLength={TEXT_LIMITS.reason}
                onChange={(event) => setReason(event.currentTarget.value)}
              />
            </FormGroup>
          )}
          <DialogError error={mutation.isError ? errorMessage(mutation.error) : null} />
        </DialogBody>
        <FormDialogFooter submitText="Confirm" pending={mutation.isPending} disabled={!ready} onCancel={onClose} />
      </form>
    </Dialog>
  );
}

type Options =
  | { kind: 'loading' }
  | { kind: 'error' }
  | { kind: 'options'; choices: { value: string; label: string }[] }
  | { kind: 'free'; suggestions: string[] };

/** What the value is chosen from: the study's visit options, study names to suggest, or free input. */
function useColumnOptions(edit: ColumnEdit, kind: string, typed: string): Options {
  // The anatomical segment is one of the study's (issue 29 item 13), as the server requires.
  const segment = edit.column.key === 'anatomicalSegment' && edit.studyId !== null;
  const fromStudy = kind === 'visitOption' || kind === 'labVisitOption' || segment;
  const study = useStudy(fromStudy ? edit.studyId : null);
  // Study names like the one being typed (the studies the user may see).
  const search = useDebouncedValue(kind === 'study' ? typed : '');
  const studies = useStudyList({ name: search, pageIndex: 0, pageSize: 100, sort: 'name' }, kind === 'study');
  if (fromStudy) {
    if (edit.studyId === null) return { kind: 'options', choices: [] };
    if (study.isPending) return { kind: 'loading' };
    if (study.isError) return { kind: 'error' };
    const { visitIds, labVisitIds, anatomicalSegments } = study.data;
    if (segment)
      // A study that names no segments takes any (the server checks only named ones).
      return anatomicalSegments.length === 0
        ? { kind: 'free', suggestions: [] }
        : { kind: 'options', choices: anatomicalSegments.map((v) => ({ value: v, label: v })) };
    if (kind === 'labVisitOption')
      return {
        kind: 'options',
        choices: labVisitIds.filter((v) => v !== '').map((v) => ({ value: v, label: v })),
      };
    // Visit ID options show key → value: the visit and, when paired, its lab visit (doc 2 §5).
    return {
      kind: 'options',
      choices: visitIds.map((v, i) => ({ value: v, label: labVisitIds[i] ? `${v} → ${labVisitIds[i]}` : v })),
    };
  }
  if (kind === 'study') return { kind: 'free', suggestions: (studies.data?.studies ?? []).map((s) => s.name) };
  return { kind: 'free', suggestions: [] };
}
