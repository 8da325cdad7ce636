import { Button, Callout, H2, HTMLSelect, NonIdealState, Spinner, Tag } from '@blueprintjs/core';
import { QUERY_TARGET_ROLES, type QueryObjectType, type QueryReasonAdminRow } from '@lamina/domain';
import { useState } from 'react';
import { errorMessage } from '../../api/ApiError';
import { usePageTitle } from '../../components/usePageTitle';
import { useQueryReasons } from './api';
import { QueryReasonDialog, type ReasonEdit } from './QueryReasonDialog';
import './queries.css';

const OBJECT_TYPES: readonly { value: QueryObjectType; label: string }[] = [
  { value: 'IMAGE', label: 'Image queries' },
  { value: 'CASE', label: 'Case queries' },
];

const byOrder = (a: QueryReasonAdminRow, b: QueryReasonAdminRow) =>
  a.sortOrder - b.sortOrder || a.reasonText.localeCompare(b.reasonText);

/** The reasons of one object type and target role as a tree: top-level reasons and their children. */
export function reasonTree(
  reasons: readonly QueryReasonAdminRow[],
  objectType: QueryObjectType,
  withRoleId: number,
): { reason: QueryReasonAdminRow; children: QueryReasonAdminRow[] }[] {
  const mine = reasons.filter((r) => r.objectType === objectType && r.withRoleId === withRoleId);
  return mine
    .filter((r) => r.parentId === null)
    .sort(byOrder)
    .map((reason) => ({ reason, children: mine.filter((c) => c.parentId === reason.id).sort(byOrder) }));
}

/**
 * /admin/query-reasons (system admins; issue 15): the query reason catalogue per object type and
 * target role — add a reason or a sub-reason, rename, move under another parent, (de)activate.
 * Nothing is deleted: a deactivated reason stays on the queries that name it.
 */
export function QueryReasonsPage() {
  usePageTitle('Query reasons');
  const [objectType, setObjectType] = useState<QueryObjectType>('IMAGE');
  const [withRoleId, setWithRoleId] = useState<number>(QUERY_TARGET_ROLES[0]?.id ?? 0);
  const [edit, setEdit] = useState<ReasonEdit | null>(null);
  const reasons = useQueryReasons();
  const tree = reasons.data ? reasonTree(reasons.data, objectType, withRoleId) : [];

  return (
    <section className="lamina-page" aria-labelledby="reasons-title">
      <header className="lamina-page-header">
        <H2 id="reasons-title">Query reasons</H2>
      </header>
      <p className="bp6-text-muted">
        The reasons the create-query wizard offers, per kind of query and the role queried. A deactivated reason is no
        longer offered; the queries that name it keep it.
      </p>
      <div className="lamina-toolbar">
        <HTMLSelect
          aria-label="Kind of query"
          value={objectType}
          onChange={(e) => setObjectType(e.currentTarget.value as QueryObjectType)}
          options={OBJECT_TYPES}
        />
        <HTMLSelect
          aria-label="Role queried"
          value={withRoleId}
          onChange={(e) => setWithRoleId(Number(e.currentTarget.value))}
          options={QUERY_TARGET_ROLES.map((r) => ({ value: r.id, label: r.displayName }))}
        />
        <Button icon="add" intent="primary" text="Add reason" onClick={() => setEdit({ kind: 'add', parent: null })} />
      </div>
      {reasons.isPending && <Spinner size={30} aria-label="Loading reasons" />}
      {reasons.isError && (
        <Callout intent="danger" role="alert">
          {errorMessage(reasons.error)}
        </Callout>
      )}
      {reasons.data && tree.length === 0 && <NonIdealState icon="list" title="No reasons for this role" />}
      {tree.length > 0 && (
        <ul className="lamina-reason-tree" aria-label="Reasons">
          {tree.map(({ reason, children }) => (
            <li key={reason.id}>
              <ReasonRow reason={reason} onEdit={setEdit} />
              {children.length > 0 && (
                <ul aria-label={`Sub-reasons of ${reason.reasonText}`}>
                  {children.map((child) => (
                    <li key={child.id}>
                      <ReasonRow reason={child} onEdit={setEdit} />
                    </li>
                  ))}
                </ul>
              )}
            </li>
          ))}
        </ul>
      )}
      {edit && (
        <QueryReasonDialog
          edit={edit}
          objectType={objectType}
          withRoleId={withRoleId}
          topLevel={tree.map((t) => t.reason)}
          onClose={() => setEdit(null)}
        />
      )}
    </section>
  );
}

function ReasonRow({ reason, onEdit }: { reason: QueryReasonAdminRow; onEdit: (edit: ReasonEdit) => void }) {
  const name = reason.reasonText;
  return (
    <div className={`lamina-reason-row${reason.active ? '' : ' lamina-reason-inactive'}`}>
      <span className="lamina-reason-text">{name}</span>
      {!reason.active && <Tag minimal>Inactive</Tag>}
      {reason.usedBy > 0 && (
        <Tag minimal intent="primary" title="Queries that name this reason">
          {reason.usedBy} {reason.usedBy === 1 ? 'query' : 'queries'}
        </Tag>
      )}
      <span className="lamina-reason-actions">
        {reason.parentId === null && (
          <Button
            size="small"
            variant="minimal"
            icon="add"
            text="Sub-reason"
            aria-label={`Add a sub-reason to ${name}`}
            onClick={() => onEdit({ kind: 'add', parent: reason })}
          />
        )}
        <Button
          size="small"
          variant="minimal"
          icon="edit"
          aria-label={`Rename ${name}`}
          title="Rename"
          onClick={() => onEdit({ kind: 'rename', reason })}
        />
        <Button
          size="small"
          variant="minimal"
          icon="move"
          aria-label={`Move ${name}`}
          title="Move"
          onClick={() => onEdit({ kind: 'move', reason })}
        />
        <Button
          size="small"
          variant="minimal"
          text={reason.active ? 'Deactivate' : 'Activate'}
          aria-label={`${reason.active ? 'Deactivate' : 'Activate'} ${name}`}
          onClick={() => onEdit({ kind: 'toggle', reason })}
        />
      </span>
    </div>
  );
}
