import { Button, Callout, Tag } from '@blueprintjs/core';
import {
  ADJUDICATION_TEXT,
  ASSIGN_ADJUDICATOR_PERMISSION,
  READ_REOPENABLE,
  REVERT_STATUS_PERMISSIONS,
  hasAny,
  type CaseAssignment,
  type CaseView,
} from '@lamina/domain';
import { useState } from 'react';
import { errorMessage } from '../../api/ApiError';
import { showToast } from '../../components/appToaster';
import { formatDate } from '../../util/formatDate';
import { AdjudicatorDialog, adjudicatorOf } from './AdjudicatorDialog';
import { useReopenRead } from './api';
import { ReasonDialog } from './ReasonDialog';
import './cases.css';

/** "Scored {date}" (issue 29): a reader's read time in the lists' date format (doc 3 §9). */
export function scoredLabel(readAt: string): string {
  return `Scored ${formatDate(readAt)}`;
}

/** Whether Reopen read is offered: the roles that may revert status, a case being read or read. */
export function reopenReadOffered(actions: readonly string[], c: Pick<CaseView, 'status'>): boolean {
  return hasAny(actions, REVERT_STATUS_PERMISSIONS) && READ_REOPENABLE.includes(c.status);
}

/**
 * What reopening `read` does to the case's status (issue 30), or null when it stays: the
 * adjudicator's read sends it back to Pending Adjudication; a primary read takes it out of
 * adjudication, back to Processed, without its adjudicator.
 */
export function reopenConsequence(c: Pick<CaseView, 'status' | 'readers'>, read: CaseAssignment): string | null {
  if (read.role === 'ADJUDICATOR') return ADJUDICATION_TEXT.reopenAdjudicatorRead;
  if (adjudicatorOf(c)) return ADJUDICATION_TEXT.reopenPrimaryRead;
  return c.status === 'COMPLETED' || c.status === 'PENDING_ADJUDICATION' ? 'The case returns to Processed.' : null;
}

/**
 * The case's reads for staff (issue 29, item 9): each assigned reader with "Scored {date}" or "Not
 * scored" (the adjudicator's row tagged so, issue 30), and for the roles that may revert status a
 * Reopen read action per scored reader — with a reason — that unlocks that reader's annotations only.
 */
export function CaseReads({ c, actions }: { c: CaseView; actions: readonly string[] }) {
  const [target, setTarget] = useState<CaseAssignment | null>(null);
  const reopen = useReopenRead();
  const offered = reopenReadOffered(actions, c);
  if (c.readers.length === 0) return null;
  return (
    <>
      <ul className="lamina-case-reads" aria-label="Reads">
        {c.readers.map((r) => (
          <li key={r.id}>
            <span className="lamina-case-reads-name">{r.displayName}</span>
            {r.role === 'ADJUDICATOR' && (
              <Tag minimal intent="warning" icon="take-action">
                Adjudicator
              </Tag>
            )}
            {r.readAt ? (
              <Tag minimal intent="success" title={new Date(r.readAt).toLocaleString()}>
                {scoredLabel(r.readAt)}
              </Tag>
            ) : (
              <Tag minimal>Not scored</Tag>
            )}
            {offered && r.readAt && (
              <Button
                size="small"
                variant="minimal"
                icon="unlock"
                text="Reopen read"
                aria-label={`Reopen ${r.displayName}’s read`}
                onClick={() => {
                  reopen.reset();
                  setTarget(r);
                }}
              />
            )}
          </li>
        ))}
      </ul>
      {target && (
        <ReasonDialog
          title="Reopen read"
          confirmText="Reopen read"
          intent="warning"
          isPending={reopen.isPending}
          error={reopen.isError ? errorMessage(reopen.error) : null}
          onClose={() => setTarget(null)}
          onConfirm={(reason) =>
            reopen.mutate(
              { id: c.id, readerId: target.id, reason },
              {
                onSuccess: (response) => {
                  setTarget(null);
                  void showToast(response.message);
                },
              },
            )
          }
        >
          <p>
            {target.displayName}’s read is reopened: their annotations on this case unlock and they mark the case as
            scored again. The other readers’ reads stay as they are.
            {reopenConsequence(c, target) !== null && ` ${reopenConsequence(c, target)}`}
          </p>
        </ReasonDialog>
      )}
    </>
  );
}

/**
 * The case pending adjudication, for staff (issue 30): why it waits — for an adjudicator to be
 * assigned, or for the one assigned — and, with the permission, Assign adjudicator (Change
 * adjudicator once one is) opening the dialog. Nothing in any other status.
 */
export function AdjudicationCallout({ c, actions }: { c: CaseView; actions: readonly string[] }) {
  const [open, setOpen] = useState(false);
  if (c.status !== 'PENDING_ADJUDICATION') return null;
  const adjudicator = adjudicatorOf(c);
  const mayAssign = actions.includes(ASSIGN_ADJUDICATOR_PERMISSION);
  return (
    <Callout intent="warning" icon="take-action" role="status" className="lamina-adjudication-callout">
      <p>
        {adjudicator
          ? ADJUDICATION_TEXT.waitingFor(adjudicator.displayName)
          : mayAssign
            ? ADJUDICATION_TEXT.assignNeeded
            : ADJUDICATION_TEXT.awaitingAssignment}
      </p>
      {mayAssign && (
        <Button
          size="small"
          icon="person"
          text={adjudicator ? 'Change adjudicator' : 'Assign adjudicator'}
          onClick={() => setOpen(true)}
        />
      )}
      {open && <AdjudicatorDialog c={c} onClose={() => setOpen(false)} />}
    </Callout>
  );
}
