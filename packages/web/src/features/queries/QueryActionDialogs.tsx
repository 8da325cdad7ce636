import { Callout, Dialog, DialogBody, FormGroup, InputGroup, Radio, RadioGroup, TextArea } from '@blueprintjs/core';
import {
  followUpDate,
  QUERY_FOLLOW_UP_DEFAULT_DAYS,
  QUERY_FOLLOW_UP_MAX_DAYS,
  QUERY_MESSAGES,
  QUERY_TEXT_MAX,
  wizardFollowUpDays,
  type QueryView,
} from '@lamina/domain';
import { useId, useState, type SyntheticEvent, type ReactNode } from 'react';
import { errorMessage } from '../../api/ApiError';
import { showToast } from '../../components/appToaster';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { DialogError, FormDialogFooter } from '../../components/FormDialogParts';
import { useQueryCall, type QueryCall } from './api';

/** The query dialogs of doc 3 §2 (and Mark Unresolvable, doc 3 §4). */
export type QueryDialogKind = 'resolve' | 'unresolvable' | 'close' | 'cancel' | 'comment' | 'followUp';

interface QueryActionDialogProps {
  query: QueryView;
  kind: QueryDialogKind;
  /** Mark as Resolved's options for the query's object type (the metadata's). */
  resolutionOptions: readonly string[];
  onClose: () => void;
}

/**
 * One action on a query in its dialog: on success the server's message as a toast and the dialog
 * closes; on failure the server's message (or doc 3 §8's) in a red callout and it stays open.
 */
export function QueryActionDialog({ query, kind, resolutionOptions, onClose }: QueryActionDialogProps) {
  const call = useQueryCall(query.id, query.caseId);
  const error = call.isError ? errorMessage(call.error) : null;
  const send = (request: QueryCall) =>
    call.mutate(request, {
      onSuccess: (response) => {
        void showToast(response.message);
        onClose();
      },
    });
  const common = { pending: call.isPending, error, onClose };
  switch (kind) {
    case 'cancel':
      return (
        <ConfirmDialog
          isOpen
          title="Cancel Query"
          confirmText="Cancel Query"
          intent="danger"
          isPending={call.isPending}
          error={error}
          onConfirm={() => send({ kind: 'close', detailedResolutionText: '' })}
          onClose={onClose}
        >
          <p>The query closes without an answer and shows as &lsquo;{QUERY_MESSAGES.cancelled}&rsquo;.</p>
        </ConfirmDialog>
      );
    case 'comment':
      return (
        <TextDialog
          {...common}
          title="Add Comment"
          label="Comment"
          required
          submitText="Add Comment"
          notice={
            query.showDisclaimer && (
              <Callout intent="warning" icon="info-sign" className="lamina-query-disclaimer">
                {QUERY_MESSAGES.disclaimer}
              </Callout>
            )
          }
          onSubmit={(text) => send({ kind: 'comment', commentText: text })}
        />
      );
    case 'unresolvable':
      return (
        <TextDialog
          {...common}
          title="Mark Unresolvable"
          label="Reason"
          required
          submitText="Mark Unresolvable"
          onSubmit={(text) => send({ kind: 'unresolvable', unresolvableReasonText: text })}
        />
      );
    case 'close':
      return (
        <TextDialog
          {...common}
          title="Close Query"
          label="Details (optional)"
          required={false}
          submitText="Close Query"
          onSubmit={(text) => send({ kind: 'close', detailedResolutionText: text })}
        />
      );
    case 'resolve':
      return (
        <ResolveDialog
          {...common}
          options={resolutionOptions}
          onSubmit={(option, details) => send({ kind: 'resolve', resolutionOption: option, commentText: details })}
        />
      );
    case 'followUp':
      return (
        <FollowUpDialog
          {...common}
          query={query}
          onSubmit={(days) =>
            query.lastQueryReminderId !== null &&
            send({ kind: 'reminder', queryReminderId: query.lastQueryReminderId, followUpInDays: days })
          }
        />
      );
  }
}

interface DialogCommon {
  pending: boolean;
  error: string | null;
  onClose: () => void;
}

function FormDialog(
  props: DialogCommon & {
    title: string;
    submitText: string;
    ready: boolean;
    onSubmit: () => void;
    children: ReactNode;
  },
) {
  const handleSubmit = (event: SyntheticEvent) => {
    event.preventDefault();
    if (props.ready && !props.pending) props.onSubmit();
  };
  return (
    <Dialog isOpen title={props.title} onClose={props.pending ? undefined : props.onClose} style={{ width: 480 }}>
      <form onSubmit={handleSubmit} aria-label={props.title}>
        <DialogBody>
          {props.children}
          <DialogError error={props.error} />
        </DialogBody>
        <FormDialogFooter
          submitText={props.submitText}
          pending={props.pending}
          disabled={!props.ready}
          onCancel={props.onClose}
        />
      </form>
    </Dialog>
  );
}

function TextDialog(
  props: DialogCommon & {
    title: string;
    label: string;
    required: boolean;
    submitText: string;
    notice?: ReactNode;
    onSubmit: (text: string) => void;
  },
) {
  const [text, setText] = useState('');
  const id = useId();
  return (
    <FormDialog {...props} ready={!props.required || text.trim() !== ''} onSubmit={() => props.onSubmit(text.trim())}>
      {props.notice}
      <FormGroup label={props.label} labelFor={id} helperText={`${text.length} / ${QUERY_TEXT_MAX}`}>
        <TextArea
          id={id}
          fill
          autoFocus
          rows={4}
          maxLength={QUERY_TEXT_MAX}
          required={props.required}
          value={text}
          onChange={(event) => setText(event.currentTarget.value)}
        />
      </FormGroup>
    </FormDialog>
  );
}

function ResolveDialog(
  props: DialogCommon & { options: readonly string[]; onSubmit: (option: string, details: string | null) => void },
) {
  const [option, setOption] = useState<string | null>(null);
  const [details, setDetails] = useState('');
  const id = useId();
  return (
    <FormDialog
      {...props}
      title="Mark as Resolved"
      submitText="Submit"
      ready={option !== null}
      onSubmit={() => option !== null && props.onSubmit(option, details.trim() === '' ? null : details.trim())}
    >
      <RadioGroup
        label="Resolution (required)"
        selectedValue={option ?? undefined}
        onChange={(event) => setOption(event.currentTarget.value)}
      >
        {props.options.map((o) => (
          <Radio key={o} value={o} label={o} />
        ))}
      </RadioGroup>
      <FormGroup label="Details (optional)" labelFor={id}>
        <TextArea
          id={id}
          fill
          rows={3}
          maxLength={QUERY_TEXT_MAX}
          value={details}
          onChange={(event) => setDetails(event.currentTarget.value)}
        />
      </FormGroup>
    </FormDialog>
  );
}

/** The date a follow-up dialog starts at: the current follow-up when still ahead, else 14 days out. */
export function initialFollowUp(latest: string | null, now: Date): string {
  const today = followUpDate(now, 0);
  return latest !== null && latest.slice(0, 10) >= today
    ? latest.slice(0, 10)
    : followUpDate(now, QUERY_FOLLOW_UP_DEFAULT_DAYS);
}

function FollowUpDialog(props: DialogCommon & { query: QueryView; onSubmit: (days: number) => void }) {
  const now = new Date();
  const today = followUpDate(now, 0);
  const [date, setDate] = useState(() => initialFollowUp(props.query.latestFollowUpOnDt, now));
  const id = useId();
  const noReminder = props.query.lastQueryReminderId === null;
  return (
    <FormDialog
      {...props}
      title="Follow-up date"
      submitText="Submit"
      ready={!noReminder && date !== ''}
      onSubmit={() => props.onSubmit(wizardFollowUpDays(date, now))}
    >
      <FormGroup
        label="Follow up on"
        labelFor={id}
        helperText="The target role is reminded by e-mail on this date. A past date becomes today."
      >
        <InputGroup
          id={id}
          type="date"
          autoFocus
          min={today}
          max={followUpDate(now, QUERY_FOLLOW_UP_MAX_DAYS)}
          value={date}
          onValueChange={(value) => setDate(value !== '' && value < today ? today : value)}
        />
      </FormGroup>
      {noReminder && <Callout intent="warning">This query has no follow-up date to change.</Callout>}
    </FormDialog>
  );
}
