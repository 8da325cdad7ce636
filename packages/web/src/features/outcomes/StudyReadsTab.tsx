import { Button, Callout, HTMLSelect, InputGroup, NonIdealState, Spinner } from '@blueprintjs/core';
import {
  OUTCOME_ADJUDICATION_FILTERS,
  OUTCOME_MESSAGES,
  mayViewCaseField,
  type EndpointDefinition,
  type OutcomeAdjudicationFilter,
  type StudyView,
} from '@lamina/domain';
import { useMemo, useState } from 'react';
import { errorMessage } from '../../api/ApiError';
import { useUserInfo } from '../../api/users';
import { DataTable } from '../../components/DataTable';
import { useDebouncedValue } from '../../components/useDebouncedValue';
import { sortParam, useTableState } from '../../components/useTableState';
import { AgreementCharts } from './AgreementCharts';
import { AgreementPanel } from './AgreementPanel';
import { useOutcomePairs, useStudyAgreement, useStudyOutcomes } from './api';
import { readsColumns } from './readsColumns';
import './reads.css';

const ADJUDICATION_LABELS: Readonly<Record<OutcomeAdjudicationFilter, string>> = {
  yes: 'Adjudicated',
  pending: 'Pending adjudication',
  no: 'Not adjudicated',
};

/** The agreement panel and its charts for the chosen endpoint, each with its own loading and error state. */
function AgreementSection({ studyId, endpoint }: { studyId: number; endpoint: EndpointDefinition }) {
  const agreement = useStudyAgreement(studyId);
  const pairs = useOutcomePairs(studyId, endpoint.key);
  if (agreement.isPending) return <Spinner size={30} aria-label="Loading agreement" />;
  if (agreement.isError) {
    return (
      <Callout intent="danger" title="Error" role="alert">
        {errorMessage(agreement.error)}
      </Callout>
    );
  }
  const entry = agreement.data.find((e) => e.endpointKey === endpoint.key);
  if (!entry) return null;
  return (
    <div className="lamina-reads-agreement">
      <AgreementPanel agreement={entry} endpoint={endpoint} />
      {pairs.isPending ? (
        <Spinner size={30} aria-label="Loading charts" />
      ) : pairs.isError ? (
        <Callout intent="danger" title="Error" role="alert">
          {errorMessage(pairs.error)}
        </Callout>
      ) : pairs.data.length === 0 ? (
        <NonIdealState icon="scatter-plot" title={OUTCOME_MESSAGES.noPairs} />
      ) : (
        <AgreementCharts pairs={pairs.data} endpoint={endpoint} agreement={entry} />
      )}
    </div>
  );
}

/** The count of cases pending adjudication: the first page of that filter, whose total it is. */
export const PENDING_COUNT_QUERY = (studyId: number) =>
  ({ studyId, adjudicated: 'pending', pageIndex: 0, pageSize: 10, sort: '-scoredAt' }) as const;

/**
 * The study page's Reads tab (issue 30; docs/OUTCOMES.md, The Reads tab), for the roles that see
 * every reader's values (S_Main_ViewReadOutcomes) on a study with endpoints: per read case the
 * readers' values of the chosen endpoint side by side, the final value and the adjudication flag
 * (server-paged and sorted, latest read first), then the agreement panel with a scatter of reader A
 * against reader B and a Bland–Altman plot. Loaded on demand with its chart library.
 */
export function StudyReadsTab({ study }: { study: StudyView }) {
  const actions = useUserInfo().data?.actions;
  const actionSet = useMemo(() => new Set(actions ?? []), [actions]);
  const [endpointKey, setEndpointKey] = useState(study.endpoints[0]?.key ?? '');
  const endpoint = study.endpoints.find((e) => e.key === endpointKey) ?? study.endpoints[0];
  const [search, setSearch] = useState('');
  const [adjudicated, setAdjudicated] = useState<OutcomeAdjudicationFilter | ''>('');
  const procId = useDebouncedValue(search.trim());
  const table = useTableState('caseRowsPerPage', { id: 'scoredAt', desc: true }, `${procId}|${adjudicated}`);
  const outcomes = useStudyOutcomes({
    studyId: study.id,
    procId,
    adjudicated,
    pageIndex: table.pageIndex,
    pageSize: table.pageSize,
    sort: sortParam(table.sort),
  });
  // The study's cases waiting for an adjudicator or for their adjudicator's read (issue 30: counted
  // on the study page): the pending filter's own total. This tab is never a reader's: a count that
  // moved when their read was marked would tell them it disagreed.
  const pending = useStudyOutcomes(PENDING_COUNT_QUERY(study.id));
  const pendingCount = pending.data?.total ?? 0;
  if (!endpoint) return null;

  const columns = readsColumns(study.id, endpoint, {
    subjectId: mayViewCaseField(actionSet, 'subjectId'),
    visitId: mayViewCaseField(actionSet, 'visitId'),
  });
  const filtered = Boolean(procId) || adjudicated !== '';
  return (
    <div className="lamina-study-reads">
      <div className="lamina-toolbar">
        {study.endpoints.length > 1 && (
          <label className="lamina-reads-endpoint">
            Endpoint
            <HTMLSelect
              aria-label="Endpoint"
              value={endpoint.key}
              onChange={(event) => setEndpointKey(event.currentTarget.value)}
              options={study.endpoints.map((e) => ({ value: e.key, label: e.label }))}
            />
          </label>
        )}
        <InputGroup
          type="search"
          leftIcon="search"
          placeholder="Search by Procedure ID"
          aria-label="Search by Procedure ID"
          value={search}
          onValueChange={setSearch}
          className="lamina-search"
        />
        <HTMLSelect
          aria-label="Adjudication"
          value={adjudicated}
          onChange={(event) => setAdjudicated(event.currentTarget.value as OutcomeAdjudicationFilter | '')}
          options={[
            { value: '', label: 'Any adjudication' },
            ...OUTCOME_ADJUDICATION_FILTERS.map((f) => ({ value: f, label: ADJUDICATION_LABELS[f] })),
          ]}
        />
        {pendingCount > 0 && (
          <Button
            size="small"
            intent="warning"
            variant="outlined"
            text={`${pendingCount} pending adjudication`}
            aria-label={`${pendingCount} cases pending adjudication: show them`}
            onClick={() => setAdjudicated('pending')}
          />
        )}
      </div>
      <DataTable
        label="Reads"
        columns={columns}
        rows={outcomes.data?.cases}
        total={outcomes.data?.total ?? 0}
        getRowId={(row) => String(row.caseId)}
        state={table}
        isLoading={outcomes.isPending}
        isFetching={outcomes.isFetching && outcomes.isPlaceholderData}
        error={outcomes.isError ? errorMessage(outcomes.error) : null}
        emptyMessage={filtered ? OUTCOME_MESSAGES.noReadsMatch : OUTCOME_MESSAGES.noReads}
      />
      <AgreementSection studyId={study.id} endpoint={endpoint} />
    </div>
  );
}
