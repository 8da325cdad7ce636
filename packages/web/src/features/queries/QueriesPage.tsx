import { H2, NonIdealState } from '@blueprintjs/core';
import { QUERY_LIST_PERMISSION, type QueryObjectType } from '@lamina/domain';
import { Navigate, useParams } from 'react-router';
import { NotFoundPage } from '../../components/NotFoundPage';
import { useUserInfo } from '../../api/users';
import { RouteTabs, parseTab, type RouteTab } from '../../components/RouteTabs';
import { usePageTitle } from '../../components/usePageTitle';
import { QueryListTab } from './QueryListTab';
import './queries.css';

type QueriesTab = 'cases' | 'images';
const TABS: readonly (RouteTab<QueriesTab> & { objectType: QueryObjectType })[] = [
  { id: 'cases', label: 'Cases', objectType: 'CASE' },
  { id: 'images', label: 'Images', objectType: 'IMAGE' },
];

/**
 * /queries/:tab? (doc 1 route /queries, doc 3 §2): the Cases and Images lists of queries, each tab
 * shown with its permission (Q_ViewQueriesCases, Q_ViewQueriesImages).
 */
export function QueriesPage() {
  usePageTitle('Queries');
  const raw = useParams().tab;
  const actions = useUserInfo().data?.actions ?? [];
  const tabs = TABS.filter((t) => actions.includes(QUERY_LIST_PERMISSION[t.objectType]));
  const tab = parseTab(raw, TABS, tabs[0]?.id ?? 'cases');
  if (tab === null) return <NotFoundPage />;
  const shown = tabs.find((t) => t.id === tab);
  // A tab the user may not see: the one they may, if any.
  if (!shown && tabs[0]) return <Navigate to={`/queries/${tabs[0].id}`} replace />;
  return (
    <section className="lamina-page" aria-labelledby="queries-title">
      <header className="lamina-page-header">
        <H2 id="queries-title">Queries</H2>
      </header>
      {shown ? (
        <>
          <RouteTabs id="queries-tabs" tabs={tabs} selected={shown.id} pathFor={(t) => `/queries/${t}`} />
          <div className="lamina-route-tab-panel">
            <QueryListTab key={shown.id} objectType={shown.objectType} />
          </div>
        </>
      ) : (
        <NonIdealState icon="chat" title="No query lists" description="Your role may not view the queries lists." />
      )}
    </section>
  );
}
