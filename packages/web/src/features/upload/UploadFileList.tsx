import { Classes, Intent, ProgressBar } from '@blueprintjs/core';
import type { FileProgress, FileState } from './uploadSession';

const STATE_LABEL: Record<FileState, string> = {
  queued: 'Waiting',
  preparing: 'Preparing series',
  uploading: 'Uploading',
  registering: 'Registering',
  done: 'Uploaded',
  failed: 'Failed',
  cancelled: 'Cancelled',
};

const STATE_INTENT: Record<FileState, Intent> = {
  queued: Intent.NONE,
  preparing: Intent.PRIMARY,
  uploading: Intent.PRIMARY,
  registering: Intent.PRIMARY,
  done: Intent.SUCCESS,
  failed: Intent.DANGER,
  cancelled: Intent.WARNING,
};

function formatSize(bytes: number): string {
  if (bytes >= 1024 ** 3) return `${(bytes / 1024 ** 3).toFixed(2)} GB`;
  if (bytes >= 1024 ** 2) return `${(bytes / 1024 ** 2).toFixed(1)} MB`;
  return `${Math.max(1, Math.round(bytes / 1024))} KB`;
}

/**
 * One row per upload: name, size, state and a progress bar (doc 2 §4: per-file progress); under it
 * what was done with the chosen files when they are not sent as they are (a DICOM series' .zip).
 */
export function UploadFileList({ files }: { files: FileProgress[] }) {
  if (files.length === 0) return null;
  return (
    <ul className="lamina-upload-files" aria-label="Files">
      {files.map((file, index) => {
        const fraction = file.total > 0 ? Math.min(1, file.loaded / file.total) : 0;
        const active = file.state === 'preparing' || file.state === 'uploading' || file.state === 'registering';
        const counting = file.state === 'preparing' || file.state === 'uploading';
        return (
          <li key={`${file.name}-${index}`} className="lamina-upload-file">
            <div className="lamina-upload-file-head">
              <span className="lamina-upload-file-name" title={file.name}>
                {file.name}
              </span>
              <span className="lamina-upload-file-meta">
                {formatSize(file.total)} · {STATE_LABEL[file.state]}
                {counting ? ` ${Math.floor(fraction * 100)}%` : ''}
              </span>
            </div>
            {file.note && (
              <div className={`lamina-upload-file-note ${Classes.TEXT_MUTED} ${Classes.TEXT_SMALL}`}>{file.note}</div>
            )}
            <ProgressBar
              aria-label={`Progress of ${file.name}`}
              value={file.state === 'done' ? 1 : fraction}
              intent={STATE_INTENT[file.state]}
              animate={active}
              stripes={active}
            />
          </li>
        );
      })}
    </ul>
  );
}
