import { Button, Checkbox, InputGroup } from '@blueprintjs/core';
import { hasAny, type StudyImageRow } from '@lamina/domain';
import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { errorMessage } from '../../../api/ApiError';
import { useUserInfo } from '../../../api/users';
import { showToast } from '../../../components/appToaster';
import { DataTable } from '../../../components/DataTable';
import { useDebouncedValue } from '../../../components/useDebouncedValue';
import { sortParam, useTableState } from '../../../components/useTableState';
import { UploadImagesDialog } from '../../upload';
import { fetchDownloadUrl, studyImageKeys, useStudyImages } from './api';
import { studyImageColumns } from './imageColumns';
import './images.css';

type UploadTarget = { kind: 'new' } | { kind: 'replace'; image: StudyImageRow } | null;

/**
 * The study page's Images tab (doc 2 §2.5): search by file name, 'Only unassigned' (for users who
 * can view cases) and 'Only images with queries', 'Upload image', the paged list newest first with
 * each image's processing progress, and a row click into the image viewer.
 */
export function StudyImagesTab({ studyId }: { studyId: number }) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const actions = useUserInfo().data?.actions ?? [];
  const [search, setSearch] = useState('');
  const [isUnassigned, setIsUnassigned] = useState(false);
  const [hasQueries, setHasQueries] = useState(false);
  const [upload, setUpload] = useState<UploadTarget>(null);
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

  async function handleDownload(image: StudyImageRow) {
    try {
      window.open(await fetchDownloadUrl(image.id), '_blank', 'noopener');
    } catch (error) {
      void showToast(errorMessage(error), 'danger');
    }
  }

  const columns = studyImageColumns({
    onReplace: canUpload ? (image) => setUpload({ kind: 'replace', image }) : undefined,
    onDownload: canDownload ? (image) => void handleDownload(image) : undefined,
  });

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
        {canUpload && (
          <Button intent="primary" icon="upload" text="Upload image" onClick={() => setUpload({ kind: 'new' })} />
        )}
      </div>
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
