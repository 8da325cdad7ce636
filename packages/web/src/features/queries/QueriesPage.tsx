import { H2, NonIdealState, Spinner } from '@blueprintjs/core';
import { QUERY_LIST_PERMISSION, type QueryObjectType, type QueryStats } from '@lamina/domain';
import { Navigate, useParams } from 'react-router';
import { NotFoundPage } from '../../components/NotFoundPage';
import { useUserInfo } from '../../api/users';
import { RouteTabs, parseTab, type RouteTab } from '../../components/RouteTabs';
import { usePageTitle } from '../../components/usePageTitle';
import { useQueryStats } from './api';
import { QueryListTab } from './QueryListTab';
import './queries.css';

type QueriesTab = 'cases' | 'images';
const TABS: readonly (RouteTab<QueriesTab> & { objectType: QueryObjectType })[] = [
  { id: 'cases', label: 'Cases', objectType: 'CASE' },
  { id: 'images', label: 'Images', objectType: 'IMAGE' },
];

/** Open queries (waiting for an answer or for closing) in a tab's stats. */
const hasWork = (stats: QueryStats | undefined) => (stats ? stats.numOpen + stats.numAnswered > 0 : false);

/**
 * The tab /queries opens on (issue 29 item 14): the first with open queries for the user, so a lab
 * tech's image query is not hidden behind an empty Cases tab; the first tab (the spec's default)
 * when none has work, or when the stats cannot be read.
 */
export function openingTab<T extends string>(tabs: readonly { id: T; stats: QueryStats | undefined }[]): T | undefined {
  return (tabs.find((t) => hasWork(t.stats)) ?? tabs[0])?.id;
}

/** /queries without a tab: waits for both tabs' stats, then goes to the tab holding the user's work. */
function QueriesLanding({ tabs }: { tabs: readonly QueriesTab[] }) {
  const cases = useQueryStats('CASE');
  const images = useQueryStats('IMAGE');
  const stats = { cases, images };
  if (tabs.some((t) => stats[t].isPending)) return <Spinner aria-label="Loading queries" />;
  const tab = openingTab(tabs.map((id) => ({ id, stats: stats[id].data })));
  return <Navigate to={`/queries/${tab ?? 'cases'}`} replace />;
}

/**
 * /queries/:tab? (doc 1 route /queries, doc 3 §2): the Cases and Images lists of queries, each tab
 * shown with its permission (Q_ViewQueriesCases, Q_ViewQueriesImages). Without a tab it opens on
 * the tab with the user's open queries (QueriesLanding).
 */
export function QueriesPage() {
  usePageTitle('Queries');
  const raw = useParams().tab;
  const actions = useUserInfo().data?.actions ?? [];
  const tabs = TABS.filter((t) => actions.includes(QUERY_LIST_PERMISSION[t.objectType]));
  if ((raw === undefined || raw === '') && tabs.length > 1)
    return (
      <section className="lamina-page" aria-labelledby="queries-title">
        <header className="lamina-page-header">
          <H2 id="queries-title">Queries</H2>
        </header>
        <QueriesLanding tabs={tabs.map((t) => t.id)} />
      </section>
    );
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
