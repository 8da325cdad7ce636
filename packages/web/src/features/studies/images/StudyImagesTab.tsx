import { Button, Checkbox, InputGroup } from '@blueprintjs/core';
import {
  EDIT_IMAGE_PERMISSIONS,
  hasAny,
  SAMPLE_UPLOAD_PERMISSION,
  type StudyImageRow,
  type StudyView,
} from '@lamina/domain';
import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { errorMessage } from '../../../api/ApiError';
import { useUserInfo } from '../../../api/users';
import { DataTable } from '../../../components/DataTable';
import { useDebouncedValue } from '../../../components/useDebouncedValue';
import { sortParam, useTableState } from '../../../components/useTableState';
import { UploadImagesDialog } from '../../upload';
import { SampleImportDialog } from '../../samples/SampleImportDialog';
import { studyImageKeys, useStudyImages } from './api';
import { downloadImage } from './downloadImage';
import { studyImageColumns, type ImageSelection } from './imageColumns';
import { ImageActionDialog, type ImageDialogKind } from '../../cases/ImageActionDialogs';
import { BulkImageDialog, type BulkKind } from '../../cases/BulkImageDialog';
import './images.css';
import '../../cases/cases.css';

type UploadTarget = { kind: 'new' } | { kind: 'replace'; image: StudyImageRow } | null;
type RowDialog = { kind: ImageDialogKind; image: StudyImageRow } | null;

/**
 * The study page's Images tab (doc 2 §2.5): search by file name, 'Only unassigned' (for users who
 * can view cases) and 'Only images with queries', 'Upload image', the paged list newest first with
 * each image's processing progress, and a row click into the image viewer.
 */
export function StudyImagesTab({ study }: { study: StudyView }) {
  const studyId = study.id;
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const actions = useUserInfo().data?.actions ?? [];
  const [search, setSearch] = useState('');
  const [isUnassigned, setIsUnassigned] = useState(false);
  const [hasQueries, setHasQueries] = useState(false);
  const [upload, setUpload] = useState<UploadTarget>(null);
  const [samples, setSamples] = useState(false);
  const [rowDialog, setRowDialog] = useState<RowDialog>(null);
  const [bulk, setBulk] = useState<BulkKind | null>(null);
  /** Selected images (id → name), kept across pages until cleared or acted on. */
  const [selected, setSelected] = useState<ReadonlyMap<number, string>>(new Map());
  const name = useDebouncedValue(search.trim());
  // A new search or filter starts on the first page.
  const table = useTableState(
    'imageRowsPerPage',
    { id: 'uploadedAt', desc: true },
    `${name}|${isUnassigned}|${hasQueries}`,
  );

  const images = useStudyImages({
    studyId,
    name,
    isUnassigned,
    hasQueries,
    pageIndex: table.pageIndex,
    pageSize: table.pageSize,
    sort: sortParam(table.sort),
  });

  const canUpload = hasAny(actions, ['S_ImageListTab_UploadImage']);
  const canViewCases = hasAny(actions, ['S_Main_ViewCasesTab']);
  const canDownload = hasAny(actions, ['IM_ImagesListTab_DownloadImages']);
  const canOpen = hasAny(actions, ['AP_ImageViewer_ViewimageViewer']);

  const handleDownload = (image: StudyImageRow) => downloadImage(image.id);

  const open = (kind: ImageDialogKind) => (image: StudyImageRow) => setRowDialog({ kind, image });
  const canAssign = hasAny(actions, ['IM_ImagesListTab_AssignImagetoCase']);
  const canMove = hasAny(actions, ['S_ImageListTab_MoveImage']);
  const canArchive = hasAny(actions, ['IM_ImagesListTab_Archive']);
  const rows = images.data?.images ?? [];
  const selectedOnPage = rows.filter((image) => selected.has(image.id)).length;
  const selection: ImageSelection | undefined =
    canAssign || canMove || canArchive
      ? {
          isSelected: (image) => selected.has(image.id),
          toggle: (image) =>
            setSelected((current) => {
              const next = new Map(current);
              if (next.has(image.id)) next.delete(image.id);
              else next.set(image.id, image.name);
              return next;
            }),
          pageState: selectedOnPage === 0 ? 'none' : selectedOnPage === rows.length ? 'all' : 'some',
          togglePage: () =>
            setSelected((current) => {
              const next = new Map(current);
              const all = rows.every((image) => next.has(image.id));
              for (const image of rows) {
                if (all) next.delete(image.id);
                else next.set(image.id, image.name);
              }
              return next;
            }),
        }
      : undefined;

  const columns = studyImageColumns(
    {
      onEdit: hasAny(actions, EDIT_IMAGE_PERMISSIONS) ? open('edit') : undefined,
      onCopy: hasAny(actions, ['IM_ImagesListTab_CopyImage']) ? open('copy') : undefined,
      onMove: canMove ? open('move') : undefined,
      onAssign: canAssign ? open('assign') : undefined,
      onReplace: canUpload ? (image) => setUpload({ kind: 'replace', image }) : undefined,
      onArchive: canArchive ? open('archive') : undefined,
      onDownload: canDownload ? (image) => void handleDownload(image) : undefined,
    },
    selection,
  );

  return (
    <div className="lamina-study-images">
      <div className="lamina-toolbar">
        <InputGroup
          type="search"
          leftIcon="search"
          placeholder="Search by file name"
          aria-label="Search by file name"
          value={search}
          onValueChange={setSearch}
          className="lamina-search"
        />
        {canViewCases && (
          <Checkbox
            label="Only unassigned"
            checked={isUnassigned}
            onChange={(event) => setIsUnassigned(event.currentTarget.checked)}
            className="lamina-toolbar-check"
          />
        )}
        <Checkbox
          label="Only images with queries"
          checked={hasQueries}
          onChange={(event) => setHasQueries(event.currentTarget.checked)}
          className="lamina-toolbar-check"
        />
        <span className="lamina-toolbar-spacer" />
        {actions.includes(SAMPLE_UPLOAD_PERMISSION) && (
          <Button icon="import" text="Upload Sample Data" onClick={() => setSamples(true)} />
        )}
        {canUpload && (
          <Button intent="primary" icon="upload" text="Upload image" onClick={() => setUpload({ kind: 'new' })} />
        )}
      </div>
      {selected.size > 0 && (
        <div className="lamina-bulk-bar" role="region" aria-label="Selected images">
          <strong>{selected.size} selected</strong>
          {canAssign && <Button icon="add-to-folder" text="Assign to case" onClick={() => setBulk('assign')} />}
          {canMove && <Button icon="move" text="Move to study" onClick={() => setBulk('moveStudy')} />}
          {canArchive && <Button icon="archive" intent="danger" text="Archive" onClick={() => setBulk('archive')} />}
          <Button variant="minimal" text="Clear selection" onClick={() => setSelected(new Map())} />
        </div>
      )}
      <DataTable
        label="Images"
        columns={columns}
        rows={images.data?.images}
        total={images.data?.total ?? 0}
        getRowId={(image) => String(image.id)}
        state={table}
        isLoading={images.isPending}
        isFetching={images.isFetching && images.isPlaceholderData}
        error={images.isError ? errorMessage(images.error) : null}
        emptyMessage={search.trim() || isUnassigned || hasQueries ? 'No images match' : 'No images yet'}
        onRowClick={canOpen ? (image) => void navigate(`/studies/${studyId}/images/${image.id}`) : undefined}
      />
      {rowDialog && (
        <ImageActionDialog
          kind={rowDialog.kind}
          study={study}
          image={rowDialog.image}
          onClose={() => setRowDialog(null)}
        />
      )}
      {bulk && (
        <BulkImageDialog
          kind={bulk}
          study={study}
          images={[...selected].map(([id, name]) => ({ id, name }))}
          onClose={(changed) => {
            setBulk(null);
            if (changed) setSelected(new Map());
          }}
        />
      )}
      {samples && (
        <SampleImportDialog
          onClose={() => setSamples(false)}
          onImported={() => void queryClient.invalidateQueries({ queryKey: studyImageKeys.all(studyId) })}
        />
      )}
      {upload && (
        <UploadImagesDialog
          isOpen
          studyId={studyId}
          imageToReplace={upload.kind === 'replace' ? { id: upload.image.id, name: upload.image.name } : null}
          onClose={() => setUpload(null)}
          onUploaded={() => void queryClient.invalidateQueries({ queryKey: studyImageKeys.all(studyId) })}
        />
      )}
    </div>
  );
}
