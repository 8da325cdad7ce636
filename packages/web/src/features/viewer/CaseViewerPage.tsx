import { Button, Callout, NonIdealState, Radio, Spinner, Tag } from '@blueprintjs/core';
import {
  CASE_FIELD_RULES,
  CASE_STATUS_LABELS,
  EDIT_CASE_PERMISSION,
  EDIT_IMAGE_PERMISSIONS,
  hasAny,
  IMAGE_STATUS_LABELS,
  mayViewCaseField,
  readsAssignedCasesOnly,
  viewerTabs,
  type CaseView,
  type StudyView,
} from '@lamina/domain';
import { useCallback, useId, useMemo, useRef, useState } from 'react';
import { useNavigate, useParams, useSearchParams } from 'react-router';
import { errorMessage } from '../../api/ApiError';
import { useUserInfo } from '../../api/users';
import { useEmbeddedMode } from '../../components/embedded';
import { CaseStatusTag } from '../../components/CaseStatusTag';
import { usePageTitle } from '../../components/usePageTitle';
import { parsePositiveId } from '../../lib/ids';
import { formatDate } from '../../util/formatDate';
import { useCase } from '../cases/api';
import { CaseActionDialog, caseActionOffered, forwardLabel, type CaseActionKind } from '../cases/CaseActionDialog';
import { CaseDialog } from '../cases/CaseDialog';
import { AdjudicationCallout, CaseReads } from '../cases/CaseReads';
import { EditImageDialog } from '../cases/ImageActionDialogs';
import { imageQcOffered, PassQcButton, PassQcDialog } from '../cases/PassQc';
import { useStudy } from '../../api/studies';
import { downloadImage } from '../studies/images/downloadImage';
import {
  AddCaseComment,
  caseCommentOffered,
  ReaderVisibilityButton,
  readerVisibilityOffered,
} from './CaseOverviewActions';
import { Detail, EditImageButton, ImageDetails } from './ImageDetails';
import { ImageViewerBody } from './ImageViewerPage';
import { useImage } from '../../api/imageQuery';
import { isViewable } from './SlideView';
import { AnnotationProvider } from '../annotations/AnnotationSession';
import { AnnotationsTab } from '../annotations/AnnotationsTab';
import { QueriesTab, useQueriesAttention } from '../queries/QueriesTab';
import type { CarriedView } from './ViewerEngine';
import { ViewerFrame } from './ViewerFrame';
import { useAfterFirstFrame } from './useAfterFirstFrame';
import { readCaseImage, shownCaseImage, writeCaseImage } from './viewerPreferences';

/** Readers shown in the case details before the ellipsis (doc 3 §2). */
export const PANEL_READERS = 5;

/** Where the case viewer's close button goes: the study page's tab it came from (doc 3 §2). */
export function caseCloseTarget(studyId: number, tab: string | null): string {
  return `/studies/${studyId}/${tab && /^[a-z-]{1,30}$/.test(tab) ? tab : 'cases'}`;
}

/** 'A, B, C, D, E, …': up to five readers, then an ellipsis. */
export function readerList(names: readonly string[]): string | null {
  if (names.length === 0) return null;
  return names.slice(0, PANEL_READERS).join(', ') + (names.length > PANEL_READERS ? ', …' : '');
}

type CaseDialogKind = CaseActionKind | 'edit';

/**
 * /studies/{studyId}/cases/{id}: the case viewer (doc 3 §2). One image of the case in the viewer —
 * the one chosen in the Overview's radio list, kept per case — with the case's actions in the top
 * bar (Pass Lab/ISC QC, Mark as Scored, Revert, Hold, Archive) and the sidebar: Overview (case and
 * image details, blinded for central readers), Annotations, Queries. Switching images keeps the view.
 */
export function CaseViewerPage() {
  const params = useParams();
  const [search] = useSearchParams();
  const navigate = useNavigate();
  const embedded = useEmbeddedMode();
  const studyId = parsePositiveId(params.studyId);
  const caseId = parsePositiveId(params.id);
  const user = useUserInfo().data;
  const actions = useMemo(() => user?.actions ?? [], [user]);
  const reader = readsAssignedCasesOnly(user?.workAsRole ?? null);
  const loaded = useCase(caseId);
  const [dialog, setDialog] = useState<CaseDialogKind | null>(null);
  const [chosenImage, setChosenImage] = useState<number | null>(() =>
    caseId === null ? null : (readCaseImage(caseId) ?? null),
  );
  /** The view of the image shown: the next image opens at it (doc 3 §2, keep the viewer state). */
  const lastView = useRef<CarriedView | undefined>(undefined);
  const keepView = useCallback((view: CarriedView) => {
    lastView.current = view;
  }, []);
  const [carried, setCarried] = useState<CarriedView | undefined>(undefined);
  const c = loaded.data && loaded.data.studyId === studyId ? loaded.data : undefined;
  const shown = c ? shownCaseImage(c.images, chosenImage) : null;
  const imageQuery = useImage(shown?.id ?? null);
  // The sidebar's data (the study, queries, annotations, AI layers) once the slide's first frame is drawn.
  const afterFrame = useAfterFirstFrame({
    imageId: shown?.id ?? null,
    image: imageQuery,
    known: c !== undefined || loaded.isError,
  });
  const study = useStudy(afterFrame.ready ? studyId : null);
  usePageTitle(c ? `Case ${c.procId ?? c.id}` : 'Case');

  const chooseImage = (imageId: number) => {
    setCarried(lastView.current);
    setChosenImage(imageId);
    if (caseId !== null) writeCaseImage(caseId, imageId);
  };
  // An embedded central reader has no close button: blank space (doc 3 §2).
  const onClose = embedded && reader ? null : () => void navigate(caseCloseTarget(studyId ?? 0, search.get('tab')));
  const tabs = viewerTabs(actions, !!user && imageQuery.data?.uploaderId === user.id);
  const queriesAttention = useQueriesAttention(
    c?.id ?? null,
    shown?.id ?? null,
    tabs.includes('queries') && afterFrame.ready,
  );

  if (caseId === null || studyId === null || loaded.isError || (loaded.data && !c)) {
    return (
      <ViewerFrame title="Case" image={undefined} onClose={onClose} sidebar={null}>
        {caseId === null || studyId === null || (loaded.data && !c) ? (
          <NonIdealState icon="search" title="Case not found" />
        ) : (
          <Callout intent="danger" className="lamina-viewer-message" title="Unable to fetch case" role="alert">
            {errorMessage(loaded.error)}
          </Callout>
        )}
      </ViewerFrame>
    );
  }

  const offered = (kind: CaseActionKind) => (c ? caseActionOffered(kind, c, actions, user?.id) : false);
  const aiImage = imageQuery.data?.mldFile ? imageQuery.data : undefined;

  const viewable = imageQuery.data && isViewable(imageQuery.data) ? imageQuery.data : null;
  return (
    <AnnotationProvider
      imageId={viewable?.id ?? null}
      studyId={c?.studyId ?? null}
      mpp={viewable?.physicalResolution ?? null}
      load={afterFrame.ready}
    >
      <ViewerFrame
        sidebarReady={afterFrame.ready}
        title={c ? `Case ${c.procId ?? c.id}` : 'Case'}
        badge={c && <CaseStatusTag status={c.status} testId="case-status" />}
        image={imageQuery.data}
        onClose={onClose}
        initialTab={search.get('queryId') ? 'queries' : undefined}
        actions={
          c && (
            <>
              {offered('forward') && (
                <Button
                  intent="success"
                  icon="tick"
                  text={forwardLabel(c.status)}
                  onClick={() => setDialog('forward')}
                />
              )}
              {offered('revert') && <Button icon="undo" text="Revert status" onClick={() => setDialog('revert')} />}
              {offered('hold') && <Button icon="pause" text="Put on Hold" onClick={() => setDialog('hold')} />}
              {offered('unhold') && <Button icon="play" text="Remove Hold" onClick={() => setDialog('unhold')} />}
              {offered('archive') && (
                <Button icon="archive" intent="danger" text="Archive Case" onClick={() => setDialog('archive')} />
              )}
            </>
          )
        }
        sidebar={
          c && tabs.length > 0
            ? {
                overview: (
                  <CaseOverview
                    c={c}
                    study={study.data}
                    reader={reader}
                    actions={actions}
                    shownImage={shown?.id ?? null}
                    onChooseImage={chooseImage}
                    onEditCase={() => setDialog('edit')}
                  />
                ),
                annotations: tabs.includes('annotations') ? <AnnotationsTab /> : null,
                queries: tabs.includes('queries') ? (
                  <QueriesTab
                    studyId={c.studyId}
                    caseId={c.id}
                    image={shown ? { id: shown.id, name: shown.name, caseId: c.id } : null}
                    onImageReplaced={chooseImage}
                  />
                ) : null,
                queriesAttention,
              }
            : null
        }
      >
        {!c ? (
          <Spinner aria-label="Loading case" className="lamina-viewer-spinner" />
        ) : shown === null ? (
          <NonIdealState icon="media" title="No image(s) found" />
        ) : (
          <ImageViewerBody
            imageId={shown.id}
            query={imageQuery}
            initialView={carried}
            onView={keepView}
            onFirstFrame={afterFrame.onFirstFrame}
          />
        )}
        {c && dialog === 'edit' && study.data && (
          <CaseDialog study={study.data} existing={c} onClose={() => setDialog(null)} />
        )}
        {c && dialog && dialog !== 'edit' && (
          <CaseActionDialog
            kind={dialog}
            target={c}
            aiImage={dialog === 'forward' ? aiImage : undefined}
            onClose={() => setDialog(null)}
          />
        )}
      </ViewerFrame>
    </AnnotationProvider>
  );
}

interface CaseOverviewProps {
  c: CaseView;
  study: StudyView | undefined;
  reader: boolean;
  actions: readonly string[];
  shownImage: number | null;
  onChooseImage: (imageId: number) => void;
  onEditCase: () => void;
}

/**
 * The case viewer's Overview (doc 3 §2, doc 2 §6): the case details box — collapsed by default to
 * the procedure IDs; a central reader sees nothing more — the case's images as radio buttons, each
 * with a download icon (and 'Hidden from readers' when it is), Edit Case and Add comment; then the
 * details of the image shown, with Edit Image, Pass QC and Show to reader / Hide from reader.
 */
function CaseOverview({ c, study, reader, actions, shownImage, onChooseImage, onEditCase }: CaseOverviewProps) {
  const actionSet = useMemo(() => new Set(actions), [actions]);
  const [open, setOpen] = useState(false);
  const [editImage, setEditImage] = useState(false);
  const [passing, setPassing] = useState(false);
  const detailsId = useId();
  const image = c.images.find((i) => i.id === shownImage);
  const mayDownload = actions.includes('IM_ImagesListTab_DownloadImages');
  const mayEditCase = actions.includes(EDIT_CASE_PERMISSION) && c.status !== 'ARCHIVED';
  const mayComment = caseCommentOffered(actions);
  return (
    <>
      <section className="lamina-viewer-box" aria-label="Case details">
        <div className="lamina-viewer-box-head">
          <strong>Case details</strong>
          {!reader && (
            <Button
              size="small"
              variant="minimal"
              icon={open ? 'chevron-up' : 'chevron-down'}
              text={open ? 'Hide details' : 'Show details'}
              aria-expanded={open}
              aria-controls={detailsId}
              onClick={() => setOpen(!open)}
            />
          )}
        </div>
        {/* Issue 30: a case pending adjudication says so to staff, open or not. */}
        {!reader && <AdjudicationCallout c={c} actions={actions} />}
        <dl className="lamina-details-list" id={detailsId}>
          <Detail label={CASE_FIELD_RULES.histoProcedureId.label}>{c.histoProcedureId}</Detail>
          <Detail label={CASE_FIELD_RULES.procId.label}>{c.procId}</Detail>
          {open && !reader && (
            <>
              {(['subjectId', 'siteId', 'visitId'] as const)
                .filter((field) => mayViewCaseField(actionSet, field))
                .map((field) => (
                  <Detail key={field} label={CASE_FIELD_RULES[field].label}>
                    {c[field]}
                  </Detail>
                ))}
              <Detail label="Case Created">{formatDate(c.createdAt)}</Detail>
              <Detail label="Case Status">
                {CASE_STATUS_LABELS[c.status]}
                {c.onHoldFrom && ` (from ${CASE_STATUS_LABELS[c.onHoldFrom]})`}
              </Detail>
              <Detail label="CR Assigned">
                {readerList(c.readers.filter((r) => r.role === 'PRIMARY').map((r) => r.displayName))}
              </Detail>
              {c.readers.some((r) => r.role === 'ADJUDICATOR') && (
                <Detail label="Adjudicator">
                  {readerList(c.readers.filter((r) => r.role === 'ADJUDICATOR').map((r) => r.displayName))}
                </Detail>
              )}
              {c.readers.length > 0 && (
                <Detail label="Reads">
                  <CaseReads c={c} actions={actions} />
                </Detail>
              )}
              {c.lastCaseComment && (
                <Detail label="Last comment">
                  {c.lastCaseComment.text} — {c.lastCaseComment.by}
                </Detail>
              )}
            </>
          )}
        </dl>
        <fieldset className="lamina-case-images">
          <legend>Images</legend>
          {c.images.length === 0 && <p className="bp6-text-muted">No image(s) found</p>}
          {c.images.map((i) => (
            <div key={i.id} className="lamina-case-image-row" title={i.name}>
              <Radio
                name="case-image"
                label={i.name}
                checked={i.id === shownImage}
                onChange={() => onChooseImage(i.id)}
              />
              {!reader && (
                <Tag minimal className="lamina-case-image-status">
                  {IMAGE_STATUS_LABELS[i.status]}
                </Tag>
              )}
              {!reader && i.ignored && (
                <Tag minimal intent="warning" icon="eye-off">
                  Hidden from readers
                </Tag>
              )}
              {mayDownload && (
                <Button
                  size="small"
                  variant="minimal"
                  icon="download"
                  aria-label={`Download ${i.name}`}
                  title="Download the original file"
                  onClick={() => void downloadImage(i.id)}
                />
              )}
            </div>
          ))}
        </fieldset>
        {((mayEditCase && study) || mayComment) && (
          <div className="lamina-viewer-box-actions">
            {mayEditCase && study && <Button size="small" icon="edit" text="Edit Case" onClick={onEditCase} />}
            {mayComment && (
              <AddCaseComment
                caseId={c.id}
                imageId={image?.id ?? null}
                onAdded={() => {
                  // The new latest comment is in the details (not a blinded reader's).
                  if (!reader) setOpen(true);
                }}
              />
            )}
          </div>
        )}
      </section>
      {image && (
        <ImageDetails
          image={image}
          reader={reader}
          actions={
            <>
              {hasAny(actions, EDIT_IMAGE_PERMISSIONS) && study && image.status !== 'ARCHIVED' && (
                <EditImageButton onClick={() => setEditImage(true)} />
              )}
              {imageQcOffered(image.status, c.status, actions) && (
                <PassQcButton status={image.status} name={image.name} onClick={() => setPassing(true)} />
              )}
              {readerVisibilityOffered(image, actions) && <ReaderVisibilityButton key={image.id} image={image} c={c} />}
            </>
          }
        />
      )}
      {editImage && image && study && (
        <EditImageDialog study={study} image={image} onClose={() => setEditImage(false)} />
      )}
      {passing && image && (
        <PassQcDialog image={image} caseId={c.id} studyId={c.studyId} onClose={() => setPassing(false)} />
      )}
    </>
  );
}
