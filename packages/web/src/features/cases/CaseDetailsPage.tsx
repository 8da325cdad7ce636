import { Button, Callout, H2, HTMLTable, Icon, NonIdealState, Radio, Tag } from '@blueprintjs/core';
import {
  CASE_FIELD_RULES,
  CASE_STATUS_LABELS,
  EDIT_CASE_PERMISSION,
  EDIT_IMAGE_PERMISSIONS,
  hasAny,
  IMAGE_STATUS_LABELS,
  mayViewCaseField,
  readsAssignedCasesOnly,
  imageQcStepFrom,
  type CaseStatus,
  type CaseView,
  type ImageStatus,
} from '@lamina/domain';
import { useCallback, useId, useMemo, useRef, useState } from 'react';
import { Link, useParams } from 'react-router';
import { errorMessage } from '../../api/ApiError';
import { useUserInfo } from '../../api/users';
import { PageSpinner } from '../../components/PageSpinner';
import { usePageTitle } from '../../components/usePageTitle';
import { parsePositiveId } from '../../lib/ids';
import { formatLongDate } from '../../util/formatDate';
import { useStudy } from '../studies/api';
import { ImageViewerBody } from '../viewer/ImageViewerPage';
import { useImage } from '../viewer/imageQuery';
import type { CarriedView } from '../viewer/ViewerEngine';
import '../viewer/viewer.css';
import { useCase, useImageAction } from './api';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { showToast } from '../../components/appToaster';
import { CaseActionDialog, caseActionOffered, forwardLabel, type CaseActionKind } from './CaseActionDialog';
import { CaseDialog } from './CaseDialog';
import { EditImageDialog } from './ImageActionDialogs';
import './cases.css';

/** Whether this user may pass this image's QC now (the server checks it again). */
function imageQcOffered(status: ImageStatus, caseStatus: CaseStatus, actions: readonly string[]): boolean {
  const step = imageQcStepFrom(status);
  return step !== null && step.caseStatus === caseStatus && actions.includes(step.permission);
}

async function copyAccession(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
    void showToast(`Accession number ${text} copied`);
  } catch {
    void showToast('The accession number could not be copied', 'warning');
  }
}

/** Readers shown on the case panel before the ellipsis (doc 3 §9). */
const PANEL_READERS = 5;

function Detail({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <>
      <dt>{label}</dt>
      <dd>{children ?? '-'}</dd>
    </>
  );
}

/**
 * /studies/{studyId}/cases/{id}, the case viewer's first shape (issue 13 goes on from here): one
 * image of the case in the viewer beside the case's details — without the blinded fields for
 * readers — and its images (a radio chooses the one shown; each name opens the image viewer), with
 * the case actions its user may take: Pass Lab QC / Pass ISC QC (per image too), Mark as Scored,
 * Edit, Revert status, Put On Hold / Remove Hold, Archive.
 */
export function CaseDetailsPage() {
  const params = useParams();
  const studyId = parsePositiveId(params.studyId);
  const caseId = parsePositiveId(params.id);
  const user = useUserInfo().data;
  const actions = useMemo(() => user?.actions ?? [], [user]);
  const actionSet = useMemo(() => new Set(actions), [actions]);
  const reader = readsAssignedCasesOnly(user?.workAsRole ?? null);
  const loaded = useCase(caseId);
  const study = useStudy(studyId);
  const [dialog, setDialog] = useState<CaseActionKind | 'edit' | null>(null);
  const [qcImage, setQcImage] = useState<{ id: number; name: string } | null>(null);
  const [editImage, setEditImage] = useState<CaseView['images'][number] | null>(null);
  const mayEditImages = hasAny(actions, EDIT_IMAGE_PERMISSIONS);
  /** The image shown beside the details (the first by default). */
  const [chosenImage, setChosenImage] = useState<number | null>(null);
  const [detailsOpen, setDetailsOpen] = useState(false);
  /** The view of the image shown: the next image opens at it (doc 3 §2, keep the viewer state). */
  const lastView = useRef<CarriedView | undefined>(undefined);
  const keepView = useCallback((view: CarriedView) => {
    lastView.current = view;
  }, []);
  /** Taken from lastView when the user switches images (the new slide opens at it). */
  const [carried, setCarried] = useState<CarriedView | undefined>(undefined);
  const detailsId = useId();
  const shownImage = chosenImage ?? loaded.data?.images[0]?.id ?? null;
  const imageQuery = useImage(shownImage);
  const passQc = useImageAction(studyId ?? 0);
  usePageTitle(loaded.data ? `Case ${loaded.data.procId ?? loaded.data.id}` : 'Case');

  if (caseId === null || studyId === null)
    return (
      <section className="lamina-page">
        <NonIdealState icon="search" title="Case not found" />
      </section>
    );
  if (loaded.isPending) return <PageSpinner />;
  if (loaded.isError || loaded.data.studyId !== studyId)
    return (
      <section className="lamina-page">
        <Callout intent="danger" title="Unable to fetch case" role="alert">
          {loaded.isError ? errorMessage(loaded.error) : 'Case not found'}
        </Callout>
      </section>
    );

  const c: CaseView = loaded.data;
  const offered = (kind: CaseActionKind) => caseActionOffered(kind, c, actions);
  const created = formatLongDate(c.createdAt);
  const readers = c.readers.map((r) => r.displayName);

  return (
    <section className="lamina-page" aria-labelledby="case-title">
      <header className="lamina-page-header">
        <H2 id="case-title">
          Case {c.procId ?? c.id} <Tag minimal>{CASE_STATUS_LABELS[c.status]}</Tag>
        </H2>
        <div className="lamina-case-actions">
          {offered('forward') && (
            <Button intent="success" icon="tick" text={forwardLabel(c.status)} onClick={() => setDialog('forward')} />
          )}
          {actions.includes(EDIT_CASE_PERMISSION) && c.status !== 'ARCHIVED' && study.data && (
            <Button icon="edit" text="Edit" onClick={() => setDialog('edit')} />
          )}
          {offered('revert') && <Button icon="undo" text="Revert status" onClick={() => setDialog('revert')} />}
          {offered('hold') && <Button icon="pause" text="Put on Hold" onClick={() => setDialog('hold')} />}
          {offered('unhold') && <Button icon="play" text="Remove Hold" onClick={() => setDialog('unhold')} />}
          {offered('archive') && (
            <Button icon="archive" intent="danger" text="Archive Case" onClick={() => setDialog('archive')} />
          )}
        </div>
      </header>
      <p>
        <Link to={`/studies/${c.studyId}/cases`}>
          <Icon icon="arrow-left" size={12} /> {c.studyName}
        </Link>
      </p>

      <div className="lamina-case-layout">
        <div className="lamina-viewer-body lamina-case-view" aria-label="Image of the case">
          {shownImage === null ? (
            <NonIdealState icon="media" title="No image(s) found" />
          ) : (
            <ImageViewerBody imageId={shownImage} query={imageQuery} initialView={carried} onView={keepView} />
          )}
        </div>
        <aside className="lamina-case-sidebar" aria-label="Case">
          <div className="lamina-case-details-head">
            <strong>Case details</strong>
            <Button
              size="small"
              variant="minimal"
              icon={detailsOpen ? 'chevron-up' : 'chevron-down'}
              text={detailsOpen ? 'Hide details' : 'Show details'}
              aria-expanded={detailsOpen}
              aria-controls={detailsId}
              onClick={() => setDetailsOpen((open) => !open)}
            />
          </div>
          {/* Collapsed by default: only the procedure IDs (doc 2 §6 case viewer detail box). */}
          <dl className="lamina-case-details" aria-label="Case details" id={detailsId}>
            <Detail label={CASE_FIELD_RULES.procId.label}>{c.procId}</Detail>
            <Detail label={CASE_FIELD_RULES.histoProcedureId.label}>{c.histoProcedureId}</Detail>
            {detailsOpen && (
              <>
                {(['subjectId', 'siteId', 'visitId'] as const)
                  .filter((field) => mayViewCaseField(actionSet, field))
                  .map((field) => (
                    <Detail key={field} label={CASE_FIELD_RULES[field].label}>
                      {c[field]}
                    </Detail>
                  ))}
                <Detail label="Status">
                  {CASE_STATUS_LABELS[c.status]}
                  {c.onHoldFrom && ` (from ${CASE_STATUS_LABELS[c.onHoldFrom]})`}
                </Detail>
                <Detail label="Created">{created.date}</Detail>
                {!reader && (
                  <>
                    <Detail label="Lab QC">{c.qc1By?.displayName}</Detail>
                    <Detail label="ISC QC">{c.qc2By?.displayName}</Detail>
                    <Detail label="Readers">
                      {readers.length === 0
                        ? null
                        : readers.slice(0, PANEL_READERS).join(', ') + (readers.length > PANEL_READERS ? ', …' : '')}
                    </Detail>
                    <Detail label="Open queries">{c.openQueries}</Detail>
                  </>
                )}
                {c.lastCaseComment && (
                  <Detail label="Last comment">
                    {c.lastCaseComment.text} — {c.lastCaseComment.by}
                  </Detail>
                )}
              </>
            )}
          </dl>

          <HTMLTable className="lamina-table" aria-label="Images of the case" compact>
            <thead>
              <tr>
                <th scope="col">View</th>
                <th scope="col">Image</th>
                <th scope="col">Status</th>
                <th scope="col">Accession #</th>
                <th scope="col">Anatomical Segment</th>
                <th scope="col">Processed</th>
                <th scope="col">Quality check</th>
              </tr>
            </thead>
            <tbody>
              {c.images.map((image) => (
                <tr key={image.id}>
                  <td>
                    <Radio
                      name="case-image"
                      aria-label={`View ${image.name}`}
                      checked={image.id === shownImage}
                      onChange={() => {
                        setCarried(lastView.current);
                        setChosenImage(image.id);
                      }}
                      className="lamina-case-image-radio"
                    />
                  </td>
                  <td>
                    <Link to={`/studies/${c.studyId}/images/${image.id}`}>{image.name}</Link>
                  </td>
                  <td>{IMAGE_STATUS_LABELS[image.status]}</td>
                  <td>
                    {image.accessionNumber ? (
                      // Click to copy (doc 3 §2 image details): lab staff paste it into the LIMS.
                      <button
                        type="button"
                        className="lamina-link-button"
                        title="Copy the accession number"
                        onClick={() => void copyAccession(image.accessionNumber ?? '')}
                      >
                        {image.accessionNumber}
                      </button>
                    ) : (
                      '-'
                    )}
                  </td>
                  <td>{image.biopsyLocation ?? '-'}</td>
                  <td>
                    {image.processed ? <Icon icon="tick-circle" intent="success" title="Succeeded" /> : 'Processing'}
                  </td>
                  <td>
                    {mayEditImages && study.data && (
                      <Button
                        size="small"
                        variant="minimal"
                        icon="edit"
                        aria-label={`Edit ${image.name}`}
                        title="Edit Image"
                        onClick={() => setEditImage(image)}
                      />
                    )}
                    {imageQcOffered(image.status, c.status, actions) && (
                      <Button
                        size="small"
                        icon="tick"
                        text={image.status === 'LAB_QC_PENDING' ? 'Pass Lab QC' : 'Pass ISC QC'}
                        aria-label={`Pass QC of ${image.name}`}
                        onClick={() => setQcImage({ id: image.id, name: image.name })}
                      />
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </HTMLTable>
          {c.images.length === 0 && <NonIdealState icon="media" title="No image(s) found" />}
        </aside>
      </div>

      {qcImage && (
        <ConfirmDialog
          isOpen
          title="Confirm Image Status Change"
          confirmText="Pass QC"
          isPending={passQc.isPending}
          error={passQc.isError ? errorMessage(passQc.error) : null}
          onConfirm={() =>
            passQc.mutate(
              { kind: 'passQc', imageId: qcImage.id, caseId: c.id },
              {
                onSuccess: (response) => {
                  void showToast(response.message);
                  setQcImage(null);
                },
              },
            )
          }
          onClose={() => {
            setQcImage(null);
            passQc.reset();
          }}
        >
          <p>
            Pass the quality check of <strong>{qcImage.name}</strong>? The case moves on when all its images have
            passed.
          </p>
        </ConfirmDialog>
      )}
      {editImage && study.data && (
        <EditImageDialog study={study.data} image={editImage} onClose={() => setEditImage(null)} />
      )}
      {dialog === 'edit' && study.data && (
        <CaseDialog study={study.data} existing={c} onClose={() => setDialog(null)} />
      )}
      {dialog && dialog !== 'edit' && <CaseActionDialog kind={dialog} target={c} onClose={() => setDialog(null)} />}
    </section>
  );
}
