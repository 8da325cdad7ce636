import { useParams } from 'react-router';
import { NotFoundPage } from '../../app/NotFoundPage';
import { PlaceholderPage } from '../../components/PlaceholderPage';
import { RouteTabs, parseTab } from '../../components/RouteTabs';
import { STUDY_TABS } from './studyTabs';

/** /studies/:id and /studies/:id/:tab (cases | images). */
export function StudyPage() {
  const { id = '', tab: rawTab } = useParams();
  const tab = parseTab(rawTab, STUDY_TABS, 'cases');
  if (tab === null) return <NotFoundPage />;
  return (
    <PlaceholderPage
      title={`Study ${id}`}
      icon={tab === 'cases' ? 'folder-open' : 'media'}
      description={
        tab === 'cases'
          ? 'The cases of this study, with their status, subject, visit and images.'
          : 'The images of this study, with their status and case.'
      }
    >
      <RouteTabs
        id="study-tabs"
        tabs={STUDY_TABS}
        selected={tab}
        pathFor={(t) => `/studies/${encodeURIComponent(id)}/${t}`}
      />
    </PlaceholderPage>
  );
}
