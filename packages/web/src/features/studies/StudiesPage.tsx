import { Button, H2, InputGroup } from '@blueprintjs/core';
import { hasAny, studyListKind, type StudyListRow } from '@lamina/domain';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { errorMessage } from '../../api/ApiError';
import { useUserInfo } from '../../api/users';
import { clearSavedFilters } from '../../lib/storage';
import { DataTable } from '../../components/DataTable';
import { useDebouncedValue } from '../../components/useDebouncedValue';
import { usePageTitle } from '../../components/usePageTitle';
import { sortParam, useTableState } from '../../components/useTableState';
import { useStudyList } from './api';
import { studyColumns } from './studyColumns';
import { NEW_STUDY_ID } from './studyTabs';

/** /studies (doc 1 §2.4): the studies the user may see, paged and sorted on the server. */
export function StudiesPage() {
  usePageTitle('Studies');
  const navigate = useNavigate();
  const user = useUserInfo().data;
  const [search, setSearch] = useState('');
  const name = useDebouncedValue(search.trim());
  // A new search starts on the first page.
  const table = useTableState('studyRowsPerPage', { id: 'createdAt', desc: true }, name);

  const kind = studyListKind(user?.workAsRole?.name);
  const columns = studyColumns(kind);
  // The date column follows the kind of user; keep the sort on a column that exists.
  const sort =
    table.sort.id === 'createdAt' && kind === 'uploader' ? { ...table.sort, id: 'mostRecentUploadAt' } : table.sort;
  const studies = useStudyList({ name, pageIndex: table.pageIndex, pageSize: table.pageSize, sort: sortParam(sort) });
  const canCreate = hasAny(user?.actions ?? [], ['S_Main_CreateStudy']);

  function handleOpen(study: StudyListRow) {
    clearSavedFilters();
    void navigate(`/studies/${study.id}/cases`);
  }

  return (
    <section className="lamina-page" aria-labelledby="page-title">
      <header className="lamina-page-header">
        <H2 id="page-title">Studies</H2>
        {canCreate && (
          <Button
            intent="primary"
            icon="add"
            text="Create Study"
            onClick={() => void navigate(`/studies/${NEW_STUDY_ID}/configure/settings`)}
          />
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
        label="Studies"
        columns={columns}
        rows={studies.data?.studies}
        total={studies.data?.total ?? 0}
        getRowId={(s) => String(s.id)}
        state={{ ...table, sort }}
        isLoading={studies.isPending}
        isFetching={studies.isFetching}
        error={studies.isError ? errorMessage(studies.error) : null}
        emptyMessage="No studies"
        onRowClick={handleOpen}
      />
    </section>
  );
}
