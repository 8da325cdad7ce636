import { Button, Callout, H2 } from '@blueprintjs/core';
import { hasAny } from '@lamina/domain';
import { Suspense, lazy, useEffect } from 'react';
import { Navigate, useNavigate, useParams } from 'react-router';
import { useUserInfo } from '../../api/users';
import { fullPageReplace } from '../../lib/browser';
import { NotFoundPage } from '../../components/NotFoundPage';
import { PageSpinner } from '../../components/PageSpinner';
import { RouteTabs, parseTab } from '../../components/RouteTabs';
import { usePageTitle } from '../../components/usePageTitle';
import { useStudy } from './api';
import { studyLoadFallback } from './StudyLoadFallback';
import { StudyImagesTab } from './images/StudyImagesTab';
import { StudyCasesTab } from '../cases/StudyCasesTab';
import { allowedStudyTabs, parseStudyId, resolveStudyTab, STUDY_TABS } from './studyTabs';

// The Reads tab (issue 30) brings its chart library: loaded only when the tab is opened.
const StudyReadsTab = lazy(async () => ({ default: (await import('../outcomes/StudyReadsTab')).StudyReadsTab }));

/**
 * /studies/:id and /studies/:id/:tab (doc 1 §2.5): name, hold banner, Edit Study, Cases and Images
 * tabs, and Reads (issue 30) on a study with endpoints for the roles that see read outcomes.
 */
export function StudyPage() {
  const { id: rawId, tab: rawTab } = useParams();
  const navigate = useNavigate();
  const requested = parseTab(rawTab, STUDY_TABS, 'cases');
  const studyId = parseStudyId(rawId);
  const actions = useUserInfo().data?.actions ?? [];
  const tab = requested === null ? null : resolveStudyTab(requested, actions);
  const study = useStudy(requested !== null && tab !== null ? studyId : null);
  usePageTitle(study.data?.name ?? 'Study');

  const noTabAllowed = requested !== null && tab === null;
  useEffect(() => {
    if (noTabAllowed) fullPageReplace('/accessDenied');
  }, [noTabAllowed]);

  if (requested === null) return <NotFoundPage />;
  if (tab === null) return <PageSpinner />;
  if (tab !== requested) return <Navigate to={`/studies/${rawId ?? ''}/${tab}`} replace />;

  const fallback = studyLoadFallback(studyId, study);
  if (fallback !== null || !study.data) return <section className="lamina-page">{fallback}</section>;

  const data = study.data;
  const hasEndpoints = data.endpoints.length > 0;
  // Reads asked for on a study without endpoints: the first tab the user may open instead.
  const shown = resolveStudyTab(tab, actions, hasEndpoints);
  if (shown !== tab) {
    return shown === null ? <NotFoundPage /> : <Navigate to={`/studies/${data.id}/${shown}`} replace />;
  }
  return (
    <section className="lamina-page" aria-labelledby="page-title">
      <header className="lamina-page-header">
        <H2 id="page-title">{data.name}</H2>
        {hasAny(actions, ['S_Main_EditStudy']) && (
          <Button
            icon="edit"
            text="Edit Study"
            onClick={() => void navigate(`/studies/${data.id}/configure/settings`)}
          />
        )}
      </header>
      {data.onHold && (
        <Callout intent="warning" icon="pause" className="lamina-hold-banner" role="status">
          {/* The spec's text 'On hold {reason}', the status set apart from the reason. */}
          <strong>On hold</strong>
          {data.onHoldReason ? ` ${data.onHoldReason}` : ''}
        </Callout>
      )}
      <RouteTabs
        id="study-tabs"
        tabs={allowedStudyTabs(actions, hasEndpoints)}
        selected={tab}
        pathFor={(t) => `/studies/${data.id}/${t}`}
      />
      <div role="tabpanel" aria-label={STUDY_TABS.find((t) => t.id === tab)?.label}>
        {tab === 'images' ? (
          <StudyImagesTab study={data} />
        ) : tab === 'reads' ? (
          <Suspense fallback={<PageSpinner />}>
            <StudyReadsTab study={data} />
          </Suspense>
        ) : (
          <StudyCasesTab study={data} />
        )}
      </div>
    </section>
  );
}
