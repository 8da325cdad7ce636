import { Button, Tag } from '@blueprintjs/core';
import { READ_REOPENABLE, REVERT_STATUS_PERMISSIONS, hasAny, type CaseReader, type CaseView } from '@lamina/domain';
import { useState } from 'react';
import { errorMessage } from '../../api/ApiError';
import { showToast } from '../../components/appToaster';
import { formatDate } from '../../util/formatDate';
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
 * The case's reads for staff (issue 29, item 9): each assigned reader with "Scored {date}" or "Not
 * scored", and for the roles that may revert status a Reopen read action per scored reader — with
 * a reason — that unlocks that reader's annotations only.
 */
export function CaseReads({ c, actions }: { c: CaseView; actions: readonly string[] }) {
  const [target, setTarget] = useState<CaseReader | null>(null);
  const reopen = useReopenRead();
  const offered = reopenReadOffered(actions, c);
  if (c.readers.length === 0) return null;
  return (
    <>
      <ul className="lamina-case-reads" aria-label="Reads">
        {c.readers.map((r) => (
          <li key={r.id}>
            <span className="lamina-case-reads-name">{r.displayName}</span>
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
            {c.status === 'COMPLETED' && ' The case returns to Processed.'}
          </p>
        </ReasonDialog>
      )}
    </>
  );
}
