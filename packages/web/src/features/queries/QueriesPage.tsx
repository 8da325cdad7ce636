import { useParams } from 'react-router';
import { NotFoundPage } from '../../app/NotFoundPage';
import { PlaceholderPage } from '../../components/PlaceholderPage';
import { RouteTabs, parseTab, type RouteTab } from '../../components/RouteTabs';

type QueriesTab = 'cases' | 'images';
const TABS: readonly RouteTab<QueriesTab>[] = [
  { id: 'cases', label: 'Cases' },
  { id: 'images', label: 'Images' },
];

/** /queries/:tab? (cases, images). */
export function QueriesPage() {
  const tab = parseTab(useParams().tab, TABS, 'cases');
  if (tab === null) return <NotFoundPage />;
  return (
    <PlaceholderPage
      title="Queries"
      icon="chat"
      description={
        tab === 'cases'
          ? 'Queries raised about cases, and their answers.'
          : 'Queries raised about images, and their answers.'
      }
    >
      <RouteTabs id="queries-tabs" tabs={TABS} selected={tab} pathFor={(t) => `/queries/${t}`} />
    </PlaceholderPage>
  );
}
