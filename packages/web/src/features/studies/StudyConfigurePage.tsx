import { useParams } from 'react-router';
import { NotFoundPage } from '../../app/NotFoundPage';
import { PlaceholderPage } from '../../components/PlaceholderPage';
import { RouteTabs, parseTab } from '../../components/RouteTabs';
import { NEW_STUDY_ID, STUDY_CONFIGURE_TABS } from './studyTabs';

/** /studies/:id/configure/:tab? (settings | users); id 'new' creates a study and has no users tab. */
export function StudyConfigurePage() {
  const { id = '', tab: rawTab } = useParams();
  const isNew = id === NEW_STUDY_ID;
  const tabs = isNew ? STUDY_CONFIGURE_TABS.filter((t) => t.id !== 'users') : STUDY_CONFIGURE_TABS;
  const tab = parseTab(rawTab, tabs, 'settings');
  if (tab === null) return <NotFoundPage />;
  return (
    <PlaceholderPage
      title={isNew ? 'Create Study' : `Configure Study ${id}`}
      icon={tab === 'settings' ? 'cog' : 'people'}
      description={
        tab === 'settings'
          ? 'Study settings: name, sponsor, protocol and visit IDs, indications, segments, modality, hold status and annotation classes, each change with its reason.'
          : 'The uploaders, readers and read-only users of this study.'
      }
    >
      {!isNew && (
        <RouteTabs
          id="study-configure-tabs"
          tabs={tabs}
          selected={tab}
          pathFor={(t) => `/studies/${encodeURIComponent(id)}/configure/${t}`}
        />
      )}
    </PlaceholderPage>
  );
}
