import { Button, Callout, H2, NonIdealState, ProgressBar, Spinner, Tag } from '@blueprintjs/core';
import { IMAGE_MESSAGES, type ImageView } from '@lamina/domain';
import { useNavigate, useParams } from 'react-router';
import { errorMessage, isApiError } from '../../api/ApiError';
import { usePageTitle } from '../../components/usePageTitle';
import { isFailed, isProcessing, parseImageId, useImage, useTileErrorRecheck } from './imageQuery';
import { isViewable, SlideView } from './SlideView';
import type { CarriedView } from './ViewerEngine';
import { isCalibrated } from './viewerGeometry';
import './viewer.css';

/** Where the close button goes: the study's images, or image management for an image without a study. */
export function closeTarget(studyId: number | null): string {
  return studyId === null ? '/image-management/images' : `/studies/${studyId}/images`;
}

/** /studies/:studyId/images/:id: the image viewer (doc 3 §2). */
export function ImageViewerPage() {
  const params = useParams();
  const imageId = parseImageId(params.id);
  const image = useImage(imageId);
  const navigate = useNavigate();
  const routeStudy = parseImageId(params.studyId);
  const studyId = image.data ? image.data.studyId : routeStudy;
  const title = image.data?.name ?? `Image ${params.id ?? ''}`;
  usePageTitle(title);

  return (
    <div className="lamina-viewer">
      <div className="lamina-viewer-topbar">
        <H2 className="lamina-viewer-title" title={title}>
          {title}
        </H2>
        {image.data && image.data.processingStatus === 'SUCCESS' && (
          <span className="lamina-viewer-pixel-size" data-testid="pixel-size">
            {isCalibrated(image.data.physicalResolution) ? (
              `${image.data.physicalResolution} µm/px`
            ) : (
              <Tag
                minimal
                intent="warning"
                htmlTitle="This slide records no pixel size: lengths assume 0.2 µm per pixel and are estimates"
              >
                Uncalibrated: no pixel size
              </Tag>
            )}
          </span>
        )}
        <Button
          variant="minimal"
          icon="cross"
          aria-label="Close"
          title="Close"
          onClick={() => void navigate(closeTarget(studyId))}
        />
      </div>
      <div className="lamina-viewer-body">
        {imageId === null ? <NoImage /> : <ImageViewerBody imageId={imageId} query={image} />}
      </div>
    </div>
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
}

/**
 * What the viewer shows for one image: loading, errors, processing, or the slide. The image viewer
 * and the case page (one image of the case at a time) both use it.
 */
export function ImageViewerBody({ imageId, query, initialView, onView }: ViewerBodyProps) {
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
  return <SlideView key={image.id} image={image} onTileError={recheck} initialView={initialView} onView={onView} />;
}
