import { Button, Tag } from '@blueprintjs/core';
import { queryHistory, queryReasonText, type QueryAction, type QueryView } from '@lamina/domain';
import { useEffect, useId, useRef, useState } from 'react';
import { formatDate, formatDay } from '../../util/formatDate';
import { QueryActionDialog, type QueryDialogKind } from './QueryActionDialogs';
import { HISTORY_LABELS, needsAttention, queryStatusLabel } from './queryStatus';

/** The buttons of the actions the server allows (query.actions), in the table's order. */
const ACTION_BUTTONS: readonly { action: QueryAction; dialog: QueryDialogKind | 'replaceImage'; text: string }[] = [
  { action: 'resolve', dialog: 'resolve', text: 'Mark as Resolved' },
  { action: 'unresolvable', dialog: 'unresolvable', text: 'Mark Unresolvable' },
  { action: 'replaceImage', dialog: 'replaceImage', text: 'Replace image' },
  { action: 'close', dialog: 'close', text: 'Close Query' },
  { action: 'followUp', dialog: 'followUp', text: 'Follow-up date' },
  { action: 'cancel', dialog: 'cancel', text: 'Cancel Query' },
  { action: 'comment', dialog: 'comment', text: 'Add Comment' },
];

interface QueryCardProps {
  query: QueryView;
  /** Named in the URL (?queryId=): open, scrolled to and highlighted. */
  focused: boolean;
  resolutionOptions: readonly string[];
  onReplaceImage: (query: QueryView) => void;
}

/**
 * One query of the Queries tab (doc 3 §2, §3): status, what it is about, reason and sub-reason,
 * who it is with, who opened it and when, the follow-up date (red when overdue), the history on
 * demand, and a button per action the server allows.
 */
export function QueryCard({ query: q, focused, resolutionOptions, onReplaceImage }: QueryCardProps) {
  const [open, setOpen] = useState(focused);
  const [dialog, setDialog] = useState<QueryDialogKind | null>(null);
  const ref = useRef<HTMLElement>(null);
  const historyId = useId();
  const status = queryStatusLabel(q);
  const attention = needsAttention(q);

  useEffect(() => {
    if (focused) ref.current?.scrollIntoView?.({ block: 'nearest' });
  }, [focused]);

  const about = q.objectType === 'CASE' ? 'Case' : `Image ${q.imageName ?? q.objectId}`;
  return (
    <article
      ref={ref}
      className={`lamina-query-card${focused ? ' lamina-query-card-focused' : ''}`}
      aria-label={`Query ${q.id}`}
      data-query-id={q.id}
    >
      <header className="lamina-query-card-head">
        <Tag intent={status.intent} minimal={status.intent === 'none'} data-testid="query-status">
          {status.label}
        </Tag>
        <span className="lamina-query-about">{about}</span>
        {attention && <span className="lamina-attention-dot" aria-label="needs your attention" />}
        <span className="lamina-query-id">#{q.id}</span>
      </header>
      <p className="lamina-query-reason">{queryReasonText(q) ?? '-'}</p>
      <dl className="lamina-query-facts">
        <dt>With</dt>
        <dd>
          {q.withRoleName ?? '-'}
          {q.withUserName && ` · ${q.withUserName}`}
        </dd>
        <dt>Opened</dt>
        <dd>
          {formatDate(q.openedAt)} by {q.createdBy ?? '-'}
          {q.openedByRoleName && ` (${q.openedByRoleName})`}
        </dd>
        {q.latestFollowUpOnDt && q.group === 'open' && (
          <>
            <dt>Follow-up</dt>
            <dd className={q.overdue ? 'lamina-overdue' : undefined}>
              {formatDay(q.latestFollowUpOnDt)}
              {q.overdue && ' (overdue)'}
            </dd>
          </>
        )}
      </dl>
      <Button
        size="small"
        variant="minimal"
        icon={open ? 'chevron-up' : 'chevron-down'}
        text={open ? 'Hide history' : `History (${queryHistory(q).length})`}
        aria-expanded={open}
        aria-controls={historyId}
        onClick={() => setOpen(!open)}
      />
      {open && (
        <ol className="lamina-query-history" id={historyId} aria-label="History">
          {queryHistory(q).map((entry, i) => (
            <li key={i}>
              <span className="lamina-query-history-head">
                <strong>{HISTORY_LABELS[entry.kind]}</strong> {entry.by && `by ${entry.by} `}
                <span className="bp6-text-muted">{formatDate(entry.at)}</span>
              </span>
              {entry.text && (
                <span className="lamina-query-history-text">
                  {entry.kind === 'followUp' || entry.kind === 'reminderSent' ? formatDay(entry.text) : entry.text}
                </span>
              )}
            </li>
          ))}
        </ol>
      )}
      {q.actions.length > 0 && (
        <div className="lamina-viewer-box-actions">
          {ACTION_BUTTONS.filter((b) => q.actions.includes(b.action)).map((b) => (
            <Button
              key={b.action}
              size="small"
              text={b.text}
              intent={b.action === 'resolve' ? 'primary' : 'none'}
              onClick={() => (b.dialog === 'replaceImage' ? onReplaceImage(q) : setDialog(b.dialog))}
            />
          ))}
        </div>
      )}
      {dialog && (
        <QueryActionDialog
          query={q}
          kind={dialog}
          resolutionOptions={resolutionOptions}
          onClose={() => setDialog(null)}
        />
      )}
    </article>
  );
}
