import type { Intent } from '@blueprintjs/core';
import {
  QUERY_DYNAMIC_STATUS_LABELS,
  QUERY_MESSAGES,
  type QueryHistoryKind,
  type QueryListRow,
  type QueryView,
} from '@lamina/domain';

type StatusFields = Pick<QueryListRow, 'group' | 'dynamicStatus' | 'cancelled' | 'resolution' | 'overdue'>;

/**
 * How a query's status reads (doc 3 §4, §9): a closed query is Closed, 'Cancelled' or Unresolvable;
 * an open one its dynamic status (Answered green, Follow-up required red) or Open.
 */
export function queryStatusLabel(q: StatusFields): { label: string; intent: Intent } {
  if (q.resolution === 'UNRESOLVABLE') return { label: 'Unresolvable', intent: 'warning' };
  if (q.group === 'closed')
    return q.cancelled ? { label: QUERY_MESSAGES.cancelled, intent: 'none' } : { label: 'Closed', intent: 'none' };
  if (q.group === 'answered') return { label: QUERY_DYNAMIC_STATUS_LABELS.ANSWERED, intent: 'success' };
  if (q.dynamicStatus === 'FOLLOWUPREQUIRED' || q.overdue)
    return { label: QUERY_DYNAMIC_STATUS_LABELS.FOLLOWUPREQUIRED, intent: 'danger' };
  if (q.dynamicStatus === 'UPCOMINGDUEDATE')
    return { label: QUERY_DYNAMIC_STATUS_LABELS.UPCOMINGDUEDATE, intent: 'warning' };
  if (q.dynamicStatus === 'FOLLOWEDUP') return { label: QUERY_DYNAMIC_STATUS_LABELS.FOLLOWEDUP, intent: 'primary' };
  return { label: 'Open', intent: 'primary' };
}

/**
 * A query needs the user's attention (the red dot on the Queries tab, doc 3 §2): it waits for the
 * user's answer (resolve), for the user to close it (answered, the opener), or it is overdue and
 * the user may follow it up.
 */
export function needsAttention(q: Pick<QueryView, 'queryStatus' | 'overdue' | 'actions'>): boolean {
  if (q.queryStatus !== 'OPEN') return false;
  const may = (action: QueryView['actions'][number]) => q.actions.includes(action);
  return may('resolve') || may('unresolvable') || may('close') || (q.overdue && may('followUp'));
}

export const HISTORY_LABELS: Record<QueryHistoryKind, string> = {
  opened: 'Opened',
  comment: 'Comment',
  followUp: 'Follow-up date changed',
  reminderSent: 'Reminder sent',
  resolved: 'Resolved',
  unresolvable: 'Marked unresolvable',
  closed: 'Closed',
  cancelled: QUERY_MESSAGES.cancelled,
};
