import { Callout, Icon, NonIdealState, ProgressBar, Spinner } from '@blueprintjs/core';
import {
  EDIT_IMAGE_PERMISSIONS,
  hasAny,
  IMAGE_MESSAGES,
  imageQcStepFrom,
  readsAssignedCasesOnly,
  viewerTabs,
  type ImageView,
} from '@lamina/domain';
import { useMemo, useState } from 'react';
import { Link, useNavigate, useParams, useSearchParams } from 'react-router';
import { errorMessage, isApiError } from '../../api/ApiError';
import { useUserInfo } from '../../api/users';
import { usePageTitle } from '../../components/usePageTitle';
import { CaseStatusTag } from '../../components/CaseStatusTag';
import { useCase } from '../cases/api';
import { EditImageDialog } from '../cases/ImageActionDialogs';
import { imageQcOffered, PassQcButton, PassQcDialog } from '../cases/PassQc';
import { useStudy } from '../../api/studies';
import { EditImageButton, ImageDetails } from './ImageDetails';
import { isFailed, isProcessing, parseImageId, useImage, useTileErrorRecheck } from '../../api/imageQuery';
import { AnnotationProvider } from '../annotations/AnnotationSession';
import { AnnotationsTab } from '../annotations/AnnotationsTab';
import { QueriesTab, useQueriesAttention } from '../queries/QueriesTab';
import { isViewable, SlideView } from './SlideView';
import type { CarriedView } from './ViewerEngine';
import { ViewerFrame } from './ViewerFrame';
import { useAfterFirstFrame } from './useAfterFirstFrame';
import { markStartup } from '../../lib/startupTiming';

markStartup('viewer-module');

/** Where the close button goes: the study's images, or image management for an image without a study. */
export function closeTarget(studyId: number | null): string {
  return studyId === null ? '/image-management/images' : `/studies/${studyId}/images`;
}

/** /studies/:studyId/images/:id: the image viewer (doc 3 §2). */
export function ImageViewerPage() {
  const params = useParams();
  const [search] = useSearchParams();
  const imageId = parseImageId(params.id);
  const image = useImage(imageId);
  const navigate = useNavigate();
  const user = useUserInfo().data;
  const actions = useMemo(() => user?.actions ?? [], [user]);
  const routeStudy = parseImageId(params.studyId);
  const studyId = image.data ? image.data.studyId : routeStudy;
  const title = image.data?.name ?? `Image ${params.id ?? ''}`;
  usePageTitle(title);
  // 'An uploader' (doc 3 §2) is the image's uploader or a user who uploads to the study (Uploader,
  // Site): a query goes to a role, so a colleague's image's queries are theirs to answer (issue 29).
  const uploader = !!user && (image.data?.uploaderId === user.id || actions.includes('S_ImageListTab_UploadImage'));
  const tabs = image.data ? viewerTabs(actions, uploader) : [];

  const shown = image.data && isViewable(image.data) ? image.data : null;
  // The sidebar's data (queries, annotations, AI layers, study, case) once the slide's first frame is drawn.
  const afterFrame = useAfterFirstFrame({ imageId, image });
  const queriesAttention = useQueriesAttention(
    null,
    image.data?.id ?? null,
    tabs.includes('queries') && afterFrame.ready,
  );
  const failed = image.data && !shown && image.data.processingStatus === 'FAIL';
  return (
    <AnnotationProvider
      imageId={failed ? null : imageId}
      studyId={studyId}
      mpp={shown?.physicalResolution ?? null}
      load={afterFrame.ready}
    >
      <ViewerFrame
        title={title}
        image={image.data}
        sidebarReady={afterFrame.ready}
        onClose={() => void navigate(closeTarget(studyId))}
        initialTab={search.get('queryId') ? 'queries' : undefined}
        sidebar={
          image.data && tabs.length > 0
            ? {
                overview: <ImageOverview image={image.data} />,
                annotations: tabs.includes('annotations') ? <AnnotationsTab /> : null,
                queries:
                  tabs.includes('queries') && image.data.studyId !== null ? (
                    <QueriesTab
                      studyId={image.data.studyId}
                      caseId={null}
                      image={{ id: image.data.id, name: image.data.name, caseId: image.data.caseId }}
                      onImageReplaced={(newId, queryId) =>
                        void navigate(`/studies/${studyId ?? ''}/images/${newId}?queryId=${queryId}`)
                      }
                    />
                  ) : null,
                queriesAttention,
              }
            : null
        }
      >
        {imageId === null ? (
          <NoImage />
        ) : (
          <ImageViewerBody imageId={imageId} query={image} onFirstFrame={afterFrame.onFirstFrame} />
        )}
      </ViewerFrame>
    </AnnotationProvider>
  );
}

/**
 * The image viewer's Overview: the image details with Edit Image (any of the edit permissions) and
 * Pass QC when the image's case waits for this user's QC step; a link to the case viewer.
 */
function ImageOverview({ image }: { image: ImageView }) {
  const user = useUserInfo().data;
  const actions = useMemo(() => user?.actions ?? [], [user]);
  const reader = readsAssignedCasesOnly(user?.workAsRole ?? null);
  const study = useStudy(image.studyId);
  const qcStep = imageQcStepFrom(image.status);
  const mayPassQc = qcStep !== null && actions.includes(qcStep.permission);
  const theCase = useCase(mayPassQc || !reader ? image.caseId : null);
  const [editing, setEditing] = useState(false);
  const [passing, setPassing] = useState(false);
  return (
    <>
      {theCase.data && (
        <p>
          <Link to={`/studies/${theCase.data.studyId}/cases/${theCase.data.id}`}>
            <Icon icon="folder-open" size={12} /> Case {theCase.data.procId ?? theCase.data.id}
          </Link>{' '}
          <CaseStatusTag status={theCase.data.status} />
        </p>
      )}
      <ImageDetails
        image={image}
        reader={reader}
        actions={
          <>
            {hasAny(actions, EDIT_IMAGE_PERMISSIONS) && study.data && image.status !== 'ARCHIVED' && (
              <EditImageButton onClick={() => setEditing(true)} />
            )}
            {theCase.data && imageQcOffered(image.status, theCase.data.status, actions) && (
              <PassQcButton status={image.status} name={image.name} onClick={() => setPassing(true)} />
            )}
          </>
        }
      />
      {editing && study.data && <EditImageDialog study={study.data} image={image} onClose={() => setEditing(false)} />}
      {passing && theCase.data && (
        <PassQcDialog
          image={image}
          caseId={theCase.data.id}
          studyId={theCase.data.studyId}
          onClose={() => setPassing(false)}
        />
      )}
    </>
  );
}

function NoImage() {
  return <NonIdealState icon="media" title={IMAGE_MESSAGES.noImagesFound} />;
}

interface ViewerBodyProps {
  imageId: number;
  query: ReturnType<typeof useImage>;
  /** The case viewer: open at the view of the image shown before, and keep telling it. */
  initialView?: CarriedView | undefined;
  onView?: ((view: CarriedView) => void) | undefined;
  /** Told once the slide's first frame is drawn (useAfterFirstFrame). */
  onFirstFrame?: ((imageId: number) => void) | undefined;
}

/**
 * What the viewer shows for one image: loading, errors, processing, or the slide. The image viewer
 * and the case page (one image of the case at a time) both use it.
 */
export function ImageViewerBody({ imageId, query, initialView, onView, onFirstFrame }: ViewerBodyProps) {
  const recheck = useTileErrorRecheck(imageId);
  if (query.isPending) return <Spinner className="lamina-viewer-spinner" aria-label="Loading image" />;
  if (query.isError) {
    if (isApiError(query.error, 404)) return <NoImage />;
    return (
      <Callout intent="danger" className="lamina-viewer-message" title={IMAGE_MESSAGES.unableToFetchImage}>
        {errorMessage(query.error)}
      </Callout>
    );
  }
  const image: ImageView = query.data;
  if (isFailed(image)) {
    return (
      <Callout intent="danger" className="lamina-viewer-message" title={IMAGE_MESSAGES.imageProcessingFailed}>
        {image.statusMessage}
      </Callout>
    );
  }
  if (isProcessing(image)) {
    return (
      <NonIdealState
        icon="time"
        title={IMAGE_MESSAGES.imageProcessing}
        description={
          <div className="lamina-viewer-progress">
            <ProgressBar intent="primary" value={Math.min(100, Math.max(0, image.processingProgress)) / 100} />
            <span>{Math.round(image.processingProgress)}%</span>
          </div>
        }
      />
    );
  }
  if (!isViewable(image)) return <NoImage />;
  return (
    <SlideView
      key={image.id}
      image={image}
      onTileError={recheck}
      initialView={initialView}
      onView={onView}
      onFirstFrame={onFirstFrame}
    />
  );
}
