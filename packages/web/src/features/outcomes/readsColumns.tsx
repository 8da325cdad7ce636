import { Tag, Tooltip } from '@blueprintjs/core';
import {
  OUTCOME_MESSAGES,
  type EndpointDefinition,
  type StudyOutcomeCase,
  type StudyOutcomeReader,
} from '@lamina/domain';
import { Link } from 'react-router';
import { CaseStatusTag } from '../../components/CaseStatusTag';
import type { DataColumn } from '../../components/DataTable';
import { formatLongDate } from '../../util/formatDate';
import { NO_VALUE, formatOutcome } from './formatOutcome';

/** '—' with why there is no value: a tooltip, and focusable so a keyboard user can read it too. */
export function Missing({ why }: { why: string }) {
  return (
    <Tooltip content={why} placement="top">
      <span className="lamina-read-missing" tabIndex={0} aria-label={`${NO_VALUE} ${why}`}>
        {NO_VALUE}
      </span>
    </Tooltip>
  );
}

function PositiveTag({ positive }: { positive: boolean | null }) {
  if (positive === null) return null;
  return (
    <Tag minimal intent={positive ? 'danger' : 'none'} className="lamina-read-positive">
      {positive ? 'Positive' : 'Negative'}
    </Tag>
  );
}

/** One reader's value of the endpoint: rounded for display; '—' with the reason when null. */
function ReaderValue({ reader, endpointKey }: { reader: StudyOutcomeReader; endpointKey: string }) {
  if (reader.values.length === 0) return <span className="bp6-text-muted">{OUTCOME_MESSAGES.notScored}</span>;
  const value = reader.values.find((v) => v.endpointKey === endpointKey);
  if (!value) return <Missing why={OUTCOME_MESSAGES.noValueForEndpoint} />;
  if (value.value === null) return <Missing why={value.reason ?? OUTCOME_MESSAGES.finalNoValue} />;
  return <span title={String(value.value)}>{formatOutcome(value.value)}</span>;
}

/** The case's reads side by side: the primary readers (by id), then the adjudicator. */
function ReadersCell({ row, endpointKey }: { row: StudyOutcomeCase; endpointKey: string }) {
  if (row.readers.length === 0) return <span className="bp6-text-muted">-</span>;
  return (
    <ul className="lamina-read-values">
      {row.readers.map((reader) => (
        <li key={`${reader.readerRole}-${reader.readerId}`}>
          <span className="lamina-read-name">
            {reader.readerName}
            {reader.readerRole === 'ADJUDICATOR' ? ' (adjudicator)' : ''}
          </span>
          <ReaderValue reader={reader} endpointKey={endpointKey} />
        </li>
      ))}
    </ul>
  );
}

function FinalCell({ row, endpointKey }: { row: StudyOutcomeCase; endpointKey: string }) {
  if (row.final === null) {
    return (
      <Missing
        why={
          row.adjudicationPending ? OUTCOME_MESSAGES.finalWaitsForAdjudication : OUTCOME_MESSAGES.finalWaitsForReaders
        }
      />
    );
  }
  const final = row.final.find((f) => f.endpointKey === endpointKey);
  if (!final || final.value === null) return <Missing why={OUTCOME_MESSAGES.finalNoValue} />;
  return (
    <span className="lamina-read-final">
      <strong title={String(final.value)}>{formatOutcome(final.value)}</strong>
      <PositiveTag positive={final.positive} />
    </span>
  );
}

/** Adjudicated (the adjudicator's values are final) or Pending (the case waits for its adjudicator). */
export function AdjudicationFlag({ row }: { row: StudyOutcomeCase }) {
  if (row.final?.some((f) => f.adjudicated)) {
    return (
      <Tag minimal intent="primary" icon="take-action">
        Adjudicated
      </Tag>
    );
  }
  if (row.adjudicationPending) {
    return (
      <Tag minimal intent="warning" icon="time">
        Pending
      </Tag>
    );
  }
  return <span className="bp6-text-muted">-</span>;
}

function LastScored({ row }: { row: StudyOutcomeCase }) {
  const times = row.readers.flatMap((r) => r.values.map((v) => v.scoredAt)).sort();
  const { date, time } = formatLongDate(times.at(-1));
  return (
    <Tooltip content={time} placement="top" disabled={time === ''}>
      <span>{date}</span>
    </Tooltip>
  );
}

/**
 * The Reads tab's columns (issue 30) for the chosen endpoint: the case (its Endo Procedure ID links to
 * the case viewer), subject and visit where the user may see them, status, each read's value, the
 * final value and the adjudication flag. The sortable ones are the server's sort keys.
 */
export function readsColumns(
  studyId: number,
  endpoint: EndpointDefinition,
  show: { subjectId: boolean; visitId: boolean },
): DataColumn<StudyOutcomeCase>[] {
  return [
    {
      id: 'procId',
      header: 'Endo Procedure ID',
      sortable: true,
      cell: (row) => <Link to={`/studies/${studyId}/cases/${row.caseId}`}>{row.procId ?? `Case ${row.caseId}`}</Link>,
    },
    {
      id: 'histoProcedureId',
      header: 'Histo Procedure ID',
      sortable: true,
      cell: (row) => row.histoProcedureId ?? '-',
    },
    ...(show.subjectId
      ? [
          {
            id: 'subjectId',
            header: 'Subject ID',
            sortable: true,
            cell: (row: StudyOutcomeCase) => row.subjectId ?? '-',
          },
        ]
      : []),
    ...(show.visitId
      ? [{ id: 'visitId', header: 'Visit ID', sortable: true, cell: (row: StudyOutcomeCase) => row.visitId ?? '-' }]
      : []),
    {
      id: 'status',
      header: 'Status',
      sortable: true,
      width: '11rem',
      // The app's one status colour map (Pending Adjudication its own orange).
      cell: (row) => <CaseStatusTag status={row.status} />,
    },
    {
      id: 'readers',
      header: `Readers: ${endpoint.label}`,
      cell: (row) => <ReadersCell row={row} endpointKey={endpoint.key} />,
    },
    {
      id: 'final',
      header: 'Final',
      width: '9rem',
      cell: (row) => <FinalCell row={row} endpointKey={endpoint.key} />,
    },
    { id: 'adjudication', header: 'Adjudication', width: '9rem', cell: (row) => <AdjudicationFlag row={row} /> },
    { id: 'scoredAt', header: 'Last scored', sortable: true, width: '10rem', cell: (row) => <LastScored row={row} /> },
  ];
}
