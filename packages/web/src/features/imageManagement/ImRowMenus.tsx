import { MenuItem } from '@blueprintjs/core';
import { hasAny, type ImCaseRecord, type ImImageRecord, type Permission } from '@lamina/domain';
import { useState, type ReactNode, type SyntheticEvent } from 'react';
import { useNavigate } from 'react-router';
import { useUserInfo } from '../../api/users';
import { RowMenu } from '../../components/RowMenu';
import { CaseActionDialog, caseActionOffered, type CaseActionKind, type CaseRef } from '../cases/CaseActionDialog';
import { ImageActionDialog, type ImageDialogKind, type ImageDialogTarget } from '../cases/ImageActionDialogs';
import { useStudy } from '../../api/studies';
import { downloadImage } from '../studies/images/downloadImage';

/** How an Image Management image row shows in the dialogs (the file name only when viewable). */
export function imageTarget(row: ImImageRecord): ImageDialogTarget {
  return {
    id: row.id,
    name: row.imageFilename ?? row.accessionNumber ?? `Image ${row.id}`,
    accessionNumber: row.accessionNumber ?? null,
    biopsyLocation: row.anatomicalSegment ?? null,
    caseId: row.caseId,
    status: row.status,
  };
}

/**
 * The row's menu and dialogs inside a clickable row: their clicks and keys (the dialogs are portals,
 * but React events still bubble through the component tree) must not open the row.
 */
function InRow({ children }: { children: ReactNode }) {
  const stop = (event: SyntheticEvent) => event.stopPropagation();
  return (
    <span onClick={stop} onKeyDown={stop} role="presentation">
      {children}
    </span>
  );
}

/** The study's configuration first (the dialogs need its segments and name), then the dialog. */
function ImageDialogForRow({
  kind,
  row,
  onClose,
}: {
  kind: ImageDialogKind;
  row: ImImageRecord & { studyId: number };
  onClose: () => void;
}) {
  const study = useStudy(row.studyId);
  if (!study.data) return null;
  return <ImageActionDialog kind={kind} study={study.data} image={imageTarget(row)} onClose={onClose} />;
}

/**
 * The image row menu of Image Management (doc 2 §2.1): Assign to Case, Copy Image, Move Image,
 * View Image, Download Image, Archive Image, each with its permission — the study page's dialogs.
 * An image without a study can only be viewed and downloaded until it is matched to one.
 */
export function ImImageRowMenu({ row }: { row: ImImageRecord }) {
  const actions = useUserInfo().data?.actions ?? [];
  const navigate = useNavigate();
  const [dialog, setDialog] = useState<ImageDialogKind | null>(null);
  const name = imageTarget(row).name;
  const inStudy = row.studyId !== null;
  const item = (
    kind: ImageDialogKind,
    text: string,
    icon: 'add-to-folder' | 'duplicate' | 'move' | 'archive',
    permission: Permission,
  ) =>
    inStudy &&
    hasAny(actions, [permission]) && (
      <MenuItem
        key={kind}
        icon={icon}
        text={text}
        intent={kind === 'archive' ? 'danger' : undefined}
        onClick={() => setDialog(kind)}
      />
    );
  return (
    <InRow>
      <RowMenu
        label={`Actions for ${name}`}
        items={[
          item('assign', 'Assign to Case', 'add-to-folder', 'IM_ImagesListTab_AssignImagetoCase'),
          item('copy', 'Copy Image', 'duplicate', 'IM_ImagesListTab_CopyImage'),
          item('move', 'Move Image', 'move', 'S_ImageListTab_MoveImage'),
          hasAny(actions, ['AP_ImageViewer_ViewimageViewer']) && (
            <MenuItem
              key="view"
              icon="eye-open"
              text="View Image"
              onClick={() => void navigate(`/studies/${row.studyId ?? 'none'}/images/${row.id}`)}
            />
          ),
          hasAny(actions, ['IM_ImagesListTab_DownloadImages']) && (
            <MenuItem key="download" icon="download" text="Download Image" onClick={() => void downloadImage(row.id)} />
          ),
          item('archive', 'Archive Image', 'archive', 'IM_ImagesListTab_Archive'),
        ]}
      />
      {dialog && row.studyId !== null && (
        <ImageDialogForRow kind={dialog} row={{ ...row, studyId: row.studyId }} onClose={() => setDialog(null)} />
      )}
    </InRow>
  );
}

/**
 * The case row menu of Image Management (doc 2 §2.2): Revert Status (with the change-status
 * permission any earlier stage), Put on Hold or Remove Hold, View Images, Archive Case.
 */
export function ImCaseRowMenu({ row }: { row: ImCaseRecord }) {
  const actions = useUserInfo().data?.actions ?? [];
  const navigate = useNavigate();
  const [dialog, setDialog] = useState<CaseActionKind | null>(null);
  const target: CaseRef = {
    id: row.caseId,
    studyId: row.studyId,
    procId: row.procId ?? null,
    status: row.status ?? 'PENDING_LAB_QC',
    prevWorkflowStatuses: row.prevWorkflowStatuses,
  };
  const offered = (kind: CaseActionKind) => row.status !== undefined && caseActionOffered(kind, target, actions);
  const name = row.procId ?? row.histoProcedureId ?? String(row.caseId);
  return (
    <InRow>
      <RowMenu
        label={`Actions for case ${name}`}
        items={[
          offered('revert') && (
            <MenuItem key="revert" icon="undo" text="Revert Status" onClick={() => setDialog('revert')} />
          ),
          offered('hold') && <MenuItem key="hold" icon="pause" text="Put on Hold" onClick={() => setDialog('hold')} />,
          offered('unhold') && (
            <MenuItem key="unhold" icon="play" text="Remove Hold" onClick={() => setDialog('unhold')} />
          ),
          hasAny(actions, ['AP_ImageViewer_ViewimageViewer', 'AP_CaseViewer_ViewCaseViewer']) && (
            <MenuItem
              key="view"
              icon="eye-open"
              text="View Images"
              onClick={() => void navigate(`/studies/${row.studyId}/cases/${row.caseId}`)}
            />
          ),
          offered('archive') && (
            <MenuItem
              key="archive"
              icon="archive"
              intent="danger"
              text="Archive Case"
              onClick={() => setDialog('archive')}
            />
          ),
        ]}
      />
      {dialog && <CaseActionDialog kind={dialog} target={target} onClose={() => setDialog(null)} />}
    </InRow>
  );
}
