import {
  Button,
  Callout,
  Dialog,
  DialogBody,
  DialogFooter,
  FormGroup,
  HTMLSelect,
  InputGroup,
  Menu,
  MenuItem,
  ProgressBar,
} from '@blueprintjs/core';
import { CASE_ASSIGNABLE, CASE_MESSAGES, CASE_STATUS_LABELS, TEXT_LIMITS, type StudyView } from '@lamina/domain';
import { useId, useState } from 'react';
import { errorMessage } from '../../api/ApiError';
import { useStudyList } from '../../api/studies';
import { useDebouncedValue } from '../../components/useDebouncedValue';
import { imageAction, useCaseSearch, useRefreshStudy, type ImageAction } from './api';

export type BulkKind = 'assign' | 'moveStudy' | 'archive';

const TITLES: Record<BulkKind, string> = {
  assign: 'Assign images to a case',
  moveStudy: 'Move images to another study',
  archive: 'Archive images',
};

interface Outcome {
  done: number;
  failures: { name: string; message: string }[];
}

/**
 * Bulk actions of the Images tab (beyond the spec: labs handle hundreds of slides): assign the
 * selected images to one case, move them to one study, or archive them, with one reason. Each image
 * is its own call — its own audit row, its own rules — so a partial failure lists which images
 * failed and why, and the rest stay done.
 */
export function BulkImageDialog({
  kind,
  study,
  images,
  onClose,
}: {
  kind: BulkKind;
  study: StudyView;
  images: readonly { id: number; name: string }[];
  onClose: (changed: boolean) => void;
}) {
  const refresh = useRefreshStudy();
  const [reason, setReason] = useState('');
  const [target, setTarget] = useState<number | null>(null);
  const [search, setSearch] = useState('');
  const [running, setRunning] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const text = useDebouncedValue(search.trim());
  const cases = useCaseSearch(study.id, text, 'assign', kind === 'assign');
  const studies = useStudyList({ pageIndex: 0, pageSize: 100, sort: 'name' }, kind === 'moveStudy');
  const ids = { reason: useId(), target: useId() };
  const ready = reason.trim() !== '' && (kind === 'archive' || target !== null) && !running && outcome === null;

  async function run() {
    if (!ready) return;
    setRunning(true);
    const result: Outcome = { done: 0, failures: [] };
    for (const image of images) {
      const action: ImageAction =
        kind === 'archive'
          ? { kind: 'archive', imageId: image.id, reason: reason.trim() }
          : kind === 'assign'
            ? { kind: 'assign', imageId: image.id, caseId: target ?? 0, reason: reason.trim() }
            : { kind: 'moveStudy', imageId: image.id, target: target ?? 0, reason: reason.trim() };
      try {
        await imageAction(action);
      } catch (error) {
        result.failures.push({ name: image.name, message: errorMessage(error) });
      }
      result.done += 1;
      setOutcome({ ...result, failures: [...result.failures] });
    }
    setRunning(false);
    await refresh(study.id, kind === 'assign' ? [target] : []);
  }

  const finished = outcome !== null && !running;
  return (
    <Dialog
      isOpen
      title={TITLES[kind]}
      onClose={running ? undefined : () => onClose(outcome !== null)}
      style={{ width: 600 }}
    >
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void run();
        }}
      >
        <DialogBody>
          <p>
            {images.length} image{images.length === 1 ? '' : 's'} selected. Each is changed and recorded on its own.
          </p>
          {kind === 'assign' && (
            <FormGroup label="Case" labelFor={ids.target}>
              <InputGroup
                id={ids.target}
                type="search"
                leftIcon="search"
                placeholder="Search by Procedure ID"
                value={search}
                onValueChange={setSearch}
                disabled={outcome !== null}
              />
              <Menu className="lamina-pick-list" aria-label="Cases">
                {cases.isFetching && <MenuItem disabled text="Loading ..." />}
                {(cases.data ?? []).map((c) => (
                  <MenuItem
                    key={c.caseId}
                    text={c.procId ?? `Case ${c.caseId}`}
                    label={CASE_STATUS_LABELS[c.caseStatus]}
                    icon={target === c.caseId ? 'tick' : 'blank'}
                    active={target === c.caseId}
                    disabled={!CASE_ASSIGNABLE.includes(c.caseStatus) || outcome !== null}
                    htmlTitle={CASE_ASSIGNABLE.includes(c.caseStatus) ? undefined : CASE_MESSAGES.notAssignableStatus}
                    onClick={() => setTarget(c.caseId)}
                  />
                ))}
                {!cases.isFetching && (cases.data ?? []).length === 0 && <MenuItem disabled text="No results" />}
              </Menu>
            </FormGroup>
          )}
          {kind === 'moveStudy' && (
            <FormGroup label="Study" labelFor={ids.target}>
              <HTMLSelect
                id={ids.target}
                fill
                disabled={outcome !== null}
                value={target === null ? '' : String(target)}
                onChange={(event) => setTarget(event.currentTarget.value ? Number(event.currentTarget.value) : null)}
                options={[
                  { value: '', label: 'Choose a study' },
                  ...(studies.data?.studies ?? []).map((s) => ({
                    value: String(s.id),
                    label: s.name,
                    disabled: s.id === study.id,
                  })),
                ]}
              />
            </FormGroup>
          )}
          <FormGroup label="Reason for change" labelFor={ids.reason} labelInfo="(required)">
            <InputGroup
              id={ids.reason}
              value={reason}
              onValueChange={setReason}
              maxLength={TEXT_LIMITS.reason}
              disabled={outcome !== null}
            />
          </FormGroup>
          {outcome && (
            <div role="status" aria-live="polite">
              <ProgressBar value={outcome.done / images.length} intent="primary" stripes={running} animate={running} />
              <p>
                {outcome.done} of {images.length} processed
                {finished && `: ${outcome.done - outcome.failures.length} done, ${outcome.failures.length} failed`}
              </p>
            </div>
          )}
          {finished && outcome.failures.length > 0 && (
            <Callout intent="danger" title="Not changed" role="alert">
              <ul className="lamina-bulk-failures">
                {outcome.failures.map((f) => (
                  <li key={f.name}>
                    <strong>{f.name}</strong>: {f.message}
                  </li>
                ))}
              </ul>
            </Callout>
          )}
        </DialogBody>
        <DialogFooter
          actions={
            finished ? (
              <Button intent="primary" text="Close" onClick={() => onClose(true)} />
            ) : (
              <>
                <Button text="Cancel" variant="minimal" onClick={() => onClose(false)} disabled={running} />
                <Button
                  type="submit"
                  intent={kind === 'archive' ? 'danger' : 'primary'}
                  text={kind === 'archive' ? 'Archive' : kind === 'assign' ? 'Assign' : 'Move'}
                  loading={running}
                  disabled={!ready}
                />
              </>
            )
          }
        />
      </form>
    </Dialog>
  );
}
