import { Button, Icon, Menu, MenuItem, PopoverNext, ProgressBar, Tooltip } from '@blueprintjs/core';
import {
  imageQueryState,
  isProcessing,
  processedState,
  type ImageQueryState,
  type StudyImageRow,
} from '@lamina/domain';
import type { MouseEvent } from 'react';
import { Link } from 'react-router';
import type { DataColumn } from '../../../components/DataTable';
import { formatLongDate } from '../../../util/formatDate';

/** What the row menu offers; each action is present only with its permission. */
export interface ImageRowActions {
  onReplace?: ((image: StudyImageRow) => void) | undefined;
  onDownload?: ((image: StudyImageRow) => void) | undefined;
}

/**
 * Replace is offered for an image in a query chain (doc 2 §2.5) and, beyond the spec, for an image
 * whose processing failed: a broken or unsupported upload is fixed by uploading the file again.
 */
export function canReplace(image: StudyImageRow): boolean {
  return image.lastLabQuery !== null || image.processingStatus === 'FAIL';
}

const QUERY_ICONS: Record<
  ImageQueryState,
  { icon: 'help' | 'tick-circle' | 'disable'; intent: 'warning' | 'success' | 'none' }
> = {
  Open: { icon: 'help', intent: 'warning' },
  Resolved: { icon: 'tick-circle', intent: 'success' },
  Unresolvable: { icon: 'disable', intent: 'none' },
};

function ProcessedCell({ image }: { image: StudyImageRow }) {
  const state = processedState(image);
  if (state === 'Succeeded')
    return <Icon icon="tick-circle" intent="success" title="Succeeded" htmlTitle="Succeeded" />;
  if (state === 'Failed') {
    return (
      <Tooltip content={image.statusMessage ?? 'Failed'} placement="top">
        <Icon icon="error" intent="danger" title="Failed" htmlTitle="Failed" tabIndex={0} />
      </Tooltip>
    );
  }
  if (!isProcessing(image)) return null;
  return (
    <div
      className="lamina-processing"
      role="progressbar"
      aria-label={`Processing ${image.name}`}
      aria-valuenow={image.processingProgress}
      aria-valuemin={0}
      aria-valuemax={100}
    >
      <ProgressBar
        value={image.processingProgress / 100}
        intent="primary"
        stripes={image.processingStatus !== 'SUBMITTED'}
      />
      <span className="lamina-processing-label">
        {image.processingStatus === 'SUBMITTED' ? `${image.processingProgress}%` : 'Queued'}
      </span>
    </div>
  );
}

function UploadedCell({ value }: { value: string }) {
  const { date, time } = formatLongDate(value);
  return (
    <Tooltip content={time} placement="top" disabled={time === ''}>
      <span>{date}</span>
    </Tooltip>
  );
}

function RowMenu({ image, actions }: { image: StudyImageRow; actions: ImageRowActions }) {
  const items = [
    actions.onReplace && canReplace(image) && (
      <MenuItem key="replace" icon="swap-horizontal" text="Replace" onClick={() => actions.onReplace?.(image)} />
    ),
    actions.onDownload && (
      <MenuItem key="download" icon="download" text="Download" onClick={() => actions.onDownload?.(image)} />
    ),
  ].filter(Boolean);
  if (items.length === 0) return null;
  // The menu lives inside a clickable row: its clicks must not open the viewer.
  const stop = (event: MouseEvent) => event.stopPropagation();
  return (
    <span onClick={stop} onKeyDown={(event) => event.stopPropagation()} role="presentation">
      <PopoverNext content={<Menu>{items}</Menu>} placement="bottom-end">
        <Button variant="minimal" icon="more" aria-label={`Actions for ${image.name}`} />
      </PopoverNext>
    </span>
  );
}

/** Columns of the study page's Images tab (doc 2 §2.5). */
export function studyImageColumns(actions: ImageRowActions): DataColumn<StudyImageRow>[] {
  const columns: DataColumn<StudyImageRow>[] = [
    { id: 'name', header: 'File Name', sortable: true, cell: (image) => image.name },
    {
      id: 'uploadedAt',
      header: 'Uploaded',
      sortable: true,
      width: '11rem',
      cell: (image) => <UploadedCell value={image.uploadedAt} />,
    },
    {
      id: 'accessionNumber',
      header: 'Accession #',
      sortable: true,
      width: '10rem',
      cell: (image) => image.accessionNumber ?? '-',
    },
    {
      id: 'biopsyLocation',
      header: 'Anatomical Segment',
      sortable: true,
      width: '12rem',
      cell: (image) => image.biopsyLocation ?? '-',
    },
    {
      id: 'processed',
      header: 'Processed',
      align: 'center',
      width: '9rem',
      cell: (image) => <ProcessedCell image={image} />,
    },
    {
      id: 'query',
      header: 'Query',
      align: 'center',
      width: '6rem',
      cell: (image) => {
        const state = imageQueryState(image.lastLabQuery);
        if (!state) return null;
        const { icon, intent } = QUERY_ICONS[state];
        return <Icon icon={icon} intent={intent} title={state} htmlTitle={`Query ${state}`} />;
      },
    },
    {
      id: 'case',
      header: 'Case',
      width: '10rem',
      cell: (image) =>
        image.simpleCase ? (
          <Link
            to={`/studies/${image.studyId}/cases/${image.simpleCase.id}?tab=images`}
            onClick={(event) => event.stopPropagation()}
          >
            {image.simpleCase.procId ?? `Case ${image.simpleCase.id}`}
          </Link>
        ) : (
          '-'
        ),
    },
  ];
  if (actions.onReplace || actions.onDownload) {
    columns.push({
      id: 'actions',
      header: 'Actions',
      align: 'center',
      width: '6rem',
      cell: (image) => <RowMenu image={image} actions={actions} />,
    });
  }
  return columns;
}
