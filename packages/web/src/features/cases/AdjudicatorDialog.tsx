import { Dialog, DialogBody, FormGroup, InputGroup, Menu, MenuItem, Tag, TextArea } from '@blueprintjs/core';
import { TEXT_LIMITS, type CaseReader, type CaseView } from '@lamina/domain';
import { useId, useState } from 'react';
import { errorMessage } from '../../api/ApiError';
import { showToast } from '../../components/appToaster';
import { DialogError, FormDialogFooter } from '../../components/FormDialogParts';
import { useDebouncedValue } from '../../components/useDebouncedValue';
import { useAssignAdjudicator, useStudyReaders } from './api';

/** The readers listed to choose from (the search narrows them), as the case dialog's reader picker. */
const SHOWN_READERS = 6;

/** The case's adjudicator, if one is assigned (issue 30). */
export function adjudicatorOf(c: Pick<CaseView, 'readers'>) {
  return c.readers.find((r) => r.role === 'ADJUDICATOR') ?? null;
}

/**
 * Assign adjudicator / Change adjudicator (issue 30): one of the study's readers, found by name —
 * the case's primary readers and its current adjudicator are not offered (the server refuses them
 * too) — with a reason for change, required when an adjudicator is replaced. The server's refusal
 * shows in the dialog, which stays open; success: a toast, the case read again, the dialog closes.
 */
export function AdjudicatorDialog({ c, onClose }: { c: CaseView; onClose: () => void }) {
  const current = adjudicatorOf(c);
  const [search, setSearch] = useState('');
  const [chosen, setChosen] = useState<CaseReader | null>(null);
  const [reason, setReason] = useState('');
  const name = useDebouncedValue(search.trim());
  const readers = useStudyReaders(c.studyId, name);
  const assign = useAssignAdjudicator();
  const searchId = useId();
  const reasonId = useId();
  const choices = (readers.data ?? []).filter((r) => !c.readers.some((x) => x.id === r.id));
  const ready = chosen !== null && (current === null || reason.trim() !== '');
  const title = current ? 'Change adjudicator' : 'Assign adjudicator';

  const submit = () => {
    if (!chosen || !ready || assign.isPending) return;
    assign.mutate(
      { id: c.id, readerId: chosen.id, reason: reason.trim() },
      {
        onSuccess: (response) => {
          void showToast(response.message);
          onClose();
        },
      },
    );
  };

  return (
    <Dialog
      isOpen
      title={title}
      onClose={assign.isPending ? undefined : onClose}
      style={{ width: 500 }}
      className="lamina-adjudicator-dialog"
    >
      <form
        onSubmit={(event) => {
          event.preventDefault();
          submit();
        }}
      >
        <DialogBody>
          <p>
            {current
              ? `${current.displayName} is the case’s adjudicator. The reader you choose instead reads the case blinded to the other reads, and ${current.displayName} no longer sees it.`
              : 'The adjudicator reads the case blinded to the other reads; their read completes it.'}
          </p>
          <FormGroup label="Adjudicator" labelFor={searchId}>
            <div className="lamina-chips" aria-label="Chosen adjudicator">
              {chosen ? (
                <Tag onRemove={() => setChosen(null)} aria-label={chosen.displayName}>
                  {chosen.displayName}
                </Tag>
              ) : (
                <span className="bp6-text-muted">No reader chosen</span>
              )}
            </div>
            <InputGroup
              id={searchId}
              type="search"
              leftIcon="search"
              placeholder="Search the study’s readers"
              value={search}
              onValueChange={setSearch}
            />
            <Menu className="lamina-pick-list" aria-label="Readers of the study">
              {readers.isFetching && <MenuItem disabled text="Loading ..." />}
              {choices.slice(0, SHOWN_READERS).map((r) => (
                <MenuItem
                  key={r.id}
                  icon={chosen?.id === r.id ? 'tick' : 'person'}
                  text={r.displayName}
                  label={`${r.numReadCases}/${r.numTotalCases} read`}
                  active={chosen?.id === r.id}
                  onClick={() => {
                    assign.reset();
                    setChosen(r);
                  }}
                />
              ))}
              {!readers.isFetching && choices.length === 0 && <MenuItem disabled text="No results" />}
            </Menu>
          </FormGroup>
          <FormGroup label="Reason for change" labelFor={reasonId} labelInfo={current ? '(required)' : '(optional)'}>
            <TextArea
              id={reasonId}
              fill
              value={reason}
              maxLength={TEXT_LIMITS.reason}
              onChange={(event) => setReason(event.currentTarget.value)}
            />
          </FormGroup>
          <DialogError error={assign.isError ? errorMessage(assign.error) : null} />
        </DialogBody>
        <FormDialogFooter submitText={title} pending={assign.isPending} disabled={!ready} onCancel={onClose} />
      </form>
    </Dialog>
  );
}
