import { Checkbox, Icon, MenuItem, ProgressBar, Tooltip, type IconName } from '@blueprintjs/core';
import {
  imageQueryState,
  isProcessing,
  processedState,
  type ImageQueryState,
  type StudyImageRow,
} from '@lamina/domain';
import { Link } from 'react-router';
import { RowMenu } from '../../../components/RowMenu';
import type { DataColumn } from '../../../components/DataTable';
import { formatLongDate } from '../../../util/formatDate';

type RowAction = ((image: StudyImageRow) => void) | undefined;

/** What the row menu offers; each action is present only with its permission (doc 2 §2.5). */
export interface ImageRowActions {
  onEdit?: RowAction;
  onCopy?: RowAction;
  onMove?: RowAction;
  onAssign?: RowAction;
  onReplace?: RowAction;
  onArchive?: RowAction;
  onDownload?: RowAction;
}

/** Row selection for the bulk actions. */
export interface ImageSelection {
  isSelected: (image: StudyImageRow) => boolean;
  toggle: (image: StudyImageRow) => void;
  /** The header checkbox: all rows of the page. */
  pageState: 'none' | 'some' | 'all';
  togglePage: () => void;
}

/** Moving is refused for images in reading (doc 2 §4); archived images are not listed. */
const movable = (image: StudyImageRow) => image.status !== 'READY_FOR_READING' && image.status !== 'COMPLETE';

/**
 * Replace is offered where the server accepts it: the row says so for the caller (the target of an
 * open query on the image, or a failed slide, for the roles that replace images).
 */
export function canReplace(image: StudyImageRow): boolean {
  return image.mayReplace;
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

function ImageRowMenu({ image, actions }: { image: StudyImageRow; actions: ImageRowActions }) {
  const item = (key: keyof ImageRowActions, icon: IconName, text: string, shown = true, intent?: 'danger') =>
    actions[key] && shown ? (
      <MenuItem key={key} icon={icon} text={text} intent={intent} onClick={() => actions[key]?.(image)} />
    ) : null;
  const items = [
    item('onEdit', 'edit', 'Edit'),
    item('onCopy', 'duplicate', 'Copy', image.cogKey !== null),
    item('onMove', 'move', 'Move', movable(image)),
    item(
      'onAssign',
      'add-to-folder',
      'Assign to Case',
      image.caseId === null && image.status === 'CASE_ASSIGNMENT_PENDING',
    ),
    item('onReplace', 'swap-horizontal', 'Replace', canReplace(image)),
    item('onArchive', 'archive', 'Archive', true, 'danger'),
    item('onDownload', 'download', 'Download'),
  ];
  return <RowMenu label={`Actions for ${image.name}`} items={items} />;
}

/** Columns of the study page's Images tab (doc 2 §2.5). */
export function studyImageColumns(actions: ImageRowActions, selection?: ImageSelection): DataColumn<StudyImageRow>[] {
  const columns: DataColumn<StudyImageRow>[] = [
    ...(selection
      ? [
          {
            id: 'select',
            header: 'Select',
            width: '3.6rem',
            headerContent: (
              <Checkbox
                aria-label="Select all images of this page"
                checked={selection.pageState === 'all'}
                indeterminate={selection.pageState === 'some'}
                onChange={selection.togglePage}
                className="lamina-select-box"
              />
            ),
            cell: (image: StudyImageRow) => (
              <span
                onClick={(event) => event.stopPropagation()}
                onKeyDown={(event) => event.stopPropagation()}
                role="presentation"
              >
                <Checkbox
                  aria-label={`Select ${image.name}`}
                  checked={selection.isSelected(image)}
                  onChange={() => selection.toggle(image)}
                  className="lamina-select-box"
                />
              </span>
            ),
          },
        ]
      : []),
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
  if (Object.values(actions).some(Boolean)) {
    columns.push({
      id: 'actions',
      header: 'Actions',
      align: 'center',
      width: '6rem',
      cell: (image) => <ImageRowMenu image={image} actions={actions} />,
    });
  }
  return columns;
}
