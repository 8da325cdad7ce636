import { isWorkingAsSystemAdmin } from '@lamina/domain';
import { Button, H2, InputGroup } from '@blueprintjs/core';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { errorMessage } from '../../api/ApiError';
import { useUserInfo } from '../../api/users';
import { DataTable } from '../../components/DataTable';
import { useDebouncedValue } from '../../components/useDebouncedValue';
import { usePageTitle } from '../../components/usePageTitle';
import { sortParam, useTableState } from '../../components/useTableState';
import { useUserList } from './api';
import { CreateUserDialog } from './CreateUserDialog';
import { userColumns } from './userColumns';

/** /users (doc 1 §2.7): every user, sorted by username, paged on the server. */
export function UsersPage() {
  usePageTitle('Users');
  const navigate = useNavigate();
  const me = useUserInfo().data;
  const [search, setSearch] = useState('');
  const [createOpen, setCreateOpen] = useState(false);
  const name = useDebouncedValue(search.trim());
  // A new search starts on the first page.
  const table = useTableState('userRowsPerPage', { id: 'username', desc: false }, name);
  const users = useUserList({
    name,
    pageIndex: table.pageIndex,
    pageSize: table.pageSize,
    sort: sortParam(table.sort),
  });
  const columns = userColumns((u) => void navigate(`/users/${u.id}/settings`));

  return (
    <section className="lamina-page" aria-labelledby="page-title">
      <header className="lamina-page-header">
        <H2 id="page-title">Users</H2>
        {isWorkingAsSystemAdmin(me) && (
          <Button intent="primary" icon="new-person" text="Create user" onClick={() => setCreateOpen(true)} />
        )}
      </header>
      <div className="lamina-toolbar">
        <InputGroup
          type="search"
          leftIcon="search"
          placeholder="Search by name"
          aria-label="Search by name"
          value={search}
          onValueChange={setSearch}
          className="lamina-search"
        />
      </div>
      <DataTable
        label="Users"
        columns={columns}
        rows={users.data?.users}
        total={users.data?.total ?? 0}
        getRowId={(u) => String(u.id)}
        state={table}
        isLoading={users.isPending}
        isFetching={users.isFetching}
        error={users.isError ? errorMessage(users.error) : null}
        emptyMessage="No users"
      />
      <CreateUserDialog isOpen={createOpen} onClose={() => setCreateOpen(false)} />
    </section>
  );
}
