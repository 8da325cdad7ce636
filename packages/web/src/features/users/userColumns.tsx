import { Button, Icon, Tag } from '@blueprintjs/core';
import type { UserListRow } from '@lamina/domain';
import type { DataColumn } from '../../components/DataTable';
import { formatDate } from '../../util/formatDate';

/** Columns of the users list (doc 1 §2.7); `onEdit` opens /users/{id}/settings. */
export function userColumns(onEdit: (user: UserListRow) => void): DataColumn<UserListRow>[] {
  return [
    {
      id: 'username',
      header: 'Username',
      sortable: true,
      width: '24%',
      cell: (u) => (
        <span className="lamina-username">
          {u.username}
          {!u.active && (
            <Tag minimal intent="danger" className="lamina-inline-tag">
              Deactivated
            </Tag>
          )}
        </span>
      ),
    },
    { id: 'firstName', header: 'First Name', sortable: true, cell: (u) => u.firstName ?? '-' },
    { id: 'lastName', header: 'Last Name', sortable: true, cell: (u) => u.lastName ?? '-' },
    { id: 'lastLoginDt', header: 'Last Login', sortable: true, width: '11rem', cell: (u) => formatDate(u.lastLoginDt) },
    { id: 'organizationName', header: 'Organization', sortable: true, cell: (u) => u.organizationName ?? '-' },
    { id: 'studyCount', header: 'Studies', sortable: true, align: 'right', width: '8rem', cell: (u) => u.studyCount },
    {
      id: 'registered',
      header: 'Registered',
      align: 'center',
      width: '10rem',
      cell: (u) =>
        u.registered ? (
          <Icon icon="tick" intent="success" title="Registered" />
        ) : (
          <Icon icon="cross" intent="danger" title="Not registered" />
        ),
    },
    {
      id: 'edit',
      header: 'Edit',
      align: 'center',
      width: '7rem',
      cell: (u) => <Button variant="minimal" icon="edit" aria-label={`Edit ${u.username}`} onClick={() => onEdit(u)} />,
    },
  ];
}
