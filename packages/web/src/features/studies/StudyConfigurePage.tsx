import { H2 } from '@blueprintjs/core';
import { useParams } from 'react-router';
import { NotFoundPage } from '../../components/NotFoundPage';
import { RouteTabs, parseTab } from '../../components/RouteTabs';
import { usePageTitle } from '../../components/usePageTitle';
import { studyLoadFallback } from './StudyLoadFallback';
import { useStudy } from './api';
import { StudySettingsForm } from './config/StudySettingsForm';
import { StudyUsersTab } from './config/StudyUsersTab';
import { NEW_STUDY_ID, parseStudyId, STUDY_CONFIGURE_TABS } from './studyTabs';

/** /studies/:id/configure/:tab? (settings | users); id 'new' creates a study and has no users tab (doc 1 §2.6). */
export function StudyConfigurePage() {
  const { id = '', tab: rawTab } = useParams();
  const isNew = id === NEW_STUDY_ID;
  const tabs = isNew ? STUDY_CONFIGURE_TABS.filter((t) => t.id !== 'users') : STUDY_CONFIGURE_TABS;
  const tab = parseTab(rawTab, tabs, 'settings');
  const studyId = isNew ? null : parseStudyId(id);
  const study = useStudy(tab === null ? null : studyId);
  const title = isNew ? 'Create Study' : `Edit Study${study.data ? `: ${study.data.name}` : ''}`;
  usePageTitle(title);

  if (tab === null) return <NotFoundPage />;

  const fallback = isNew ? null : studyLoadFallback(studyId, study);
  let content;
  if (isNew) {
    content = <StudySettingsForm />;
  } else if (fallback !== null || !study.data) {
    content = fallback;
  } else {
    // The form stays mounted on the Users tab, so unsaved edits survive a look at the users.
    content = (
      <>
        <div hidden={tab !== 'settings'}>
          <StudySettingsForm key={study.data.id} study={study.data} />
        </div>
        {tab === 'users' && <StudyUsersTab study={study.data} />}
      </>
    );
  }

  return (
    <section className="lamina-page lamina-config-page" aria-labelledby="page-title">
      <header className="lamina-page-header">
        <H2 id="page-title">{title}</H2>
      </header>
      {!isNew && (
        <RouteTabs
          id="study-configure-tabs"
          tabs={tabs}
          selected={tab}
          pathFor={(t) => `/studies/${encodeURIComponent(id)}/configure/${t}`}
        />
      )}
      {content}
    </section>
  );
}
