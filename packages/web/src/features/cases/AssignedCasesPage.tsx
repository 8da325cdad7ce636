import { Callout, H2, HTMLTable, NonIdealState, Spinner, Tag } from '@blueprintjs/core';
import { CASE_MESSAGES, assignedCasesResponseSchema, type AssignedCase } from '@lamina/domain';
import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { errorMessage, withFallbackMessage } from '../../api/ApiError';
import { apiFetch } from '../../api/client';
import { CaseStatusTag } from '../../components/CaseStatusTag';
import { usePageTitle } from '../../components/usePageTitle';
import { formatLongDate } from '../../util/formatDate';
import { scoredLabel } from './CaseReads';
import './cases.css';

function useAssignedCases() {
  return useQuery({
    queryKey: ['cases', 'assigned'],
    queryFn: async ({ signal }): Promise<AssignedCase[]> =>
      (
        await withFallbackMessage(
          apiFetch('/api/cases/assigned', { schema: assignedCasesResponseSchema, signal }),
          CASE_MESSAGES.unableToFetchCases,
        )
      ).cases,
  });
}

/**
 * /assigned (issue 20): where a reader without the studies page lands — NOTO users, who work inside
 * the embedding platform. It says so, and lists the cases assigned to them, each opening the case
 * viewer in embedded mode.
 */
export function AssignedCasesPage() {
  usePageTitle('Assigned cases');
  const cases = useAssignedCases();
  return (
    <section className="lamina-page" aria-labelledby="assigned-title">
      <header className="lamina-page-header">
        <H2 id="assigned-title">Your assigned cases</H2>
      </header>
      <Callout intent="primary" icon="info-sign" className="lamina-assigned-intro">
        You read cases from within your reading platform (NOTO), which opens them here for you. The cases assigned to
        you are listed below; each opens in the case viewer as your platform shows it.
      </Callout>
      {cases.isPending ? (
        <Spinner aria-label="Loading" />
      ) : cases.isError ? (
        <Callout intent="danger" title="Error" role="alert">
          {errorMessage(cases.error)}
        </Callout>
      ) : cases.data.length === 0 ? (
        <NonIdealState icon="inbox" title="No cases are assigned to you yet" />
      ) : (
        <HTMLTable className="lamina-table" aria-label="Assigned cases" interactive>
          <thead>
            <tr>
              <th scope="col">Endo Procedure ID</th>
              <th scope="col">Study</th>
              <th scope="col">Status</th>
              <th scope="col">Images</th>
              <th scope="col">Assigned</th>
            </tr>
          </thead>
          <tbody>
            {cases.data.map((c) => (
              <tr key={c.id}>
                <td>
                  <Link to={`/studies/${c.studyId}/cases/${c.id}?embeddedBy=NOTO`}>{c.procId ?? `Case ${c.id}`}</Link>
                </td>
                <td>{c.studyName}</td>
                <td>
                  <span className="lamina-case-status-cell">
                    <CaseStatusTag status={c.status} />
                    {c.myReadAt && (
                      <Tag minimal intent="success" title={new Date(c.myReadAt).toLocaleString()}>
                        {scoredLabel(c.myReadAt)}
                      </Tag>
                    )}
                  </span>
                </td>
                <td>{c.numberOfImages}</td>
                <td>{formatLongDate(c.assignedAt).date}</td>
              </tr>
            ))}
          </tbody>
        </HTMLTable>
      )}
    </section>
  );
}
