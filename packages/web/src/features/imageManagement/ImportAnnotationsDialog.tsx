import { Button, Callout, Classes, Dialog, DialogBody, DialogFooter, FileInput } from '@blueprintjs/core';
import { MLD_IMPORT_MESSAGES, MLD_MAX_FILES, type MldRecord } from '@lamina/domain';
import { useEffect, useRef, useState, type ChangeEvent } from 'react';
import { showToast } from '../../components/appToaster';
import type { Choice } from '../reports/api';
import { UploadFileList } from '../upload/UploadFileList';
import type { FileProgress } from '../upload/uploadSession';
import '../upload/upload.css';
import { MldImagePicker } from './MldImagePicker';
import { checkMldSelection, MLD_ACCEPT, runMldUpload, type MldUploadOutcome } from './mldUpload';

type Phase = 'choosing' | 'uploading' | 'finished';

const EMPTY: MldUploadOutcome = { registered: [], errors: [], cancellations: [] };

const queued = (files: readonly File[]): FileProgress[] =>
  files.map((f) => ({ name: f.name, loaded: 0, total: f.size, state: 'queued' }));

/**
 * Import Annotations (doc 2 §2.3, §4): choose .mld files (several at once), optionally the image
 * they belong to, Upload; per-file progress bars, Stop cancels; errors in a red callout and the
 * dialog stays open while one is shown. `onImported` refreshes the list once files are registered.
 */
export function ImportAnnotationsDialog({
  onClose,
  onImported,
}: {
  onClose: () => void;
  onImported: (imports: MldRecord[]) => void;
}) {
  const [files, setFiles] = useState<File[]>([]);
  const [progress, setProgress] = useState<FileProgress[]>([]);
  const [selectionErrors, setSelectionErrors] = useState<string[]>([]);
  const [image, setImage] = useState<Choice | null>(null);
  const [phase, setPhase] = useState<Phase>('choosing');
  const [outcome, setOutcome] = useState<MldUploadOutcome>(EMPTY);
  const controller = useRef<AbortController | null>(null);
  // Leaving the page stops what is still uploading.
  useEffect(() => () => controller.current?.abort(), []);
  const uploading = phase === 'uploading';

  const handleChoose = (event: ChangeEvent<HTMLInputElement>) => {
    const { accepted, errors } = checkMldSelection(Array.from(event.currentTarget.files ?? []));
    setFiles(accepted);
    setProgress(queued(accepted));
    setSelectionErrors(errors);
    setOutcome(EMPTY);
    setPhase('choosing');
  };

  const handleUpload = async () => {
    const abort = new AbortController();
    controller.current = abort;
    setPhase('uploading');
    setOutcome(EMPTY);
    setProgress(queued(files));
    const result = await runMldUpload({
      files,
      imageId: image?.id ?? null,
      signal: abort.signal,
      onProgress: (index, patch) =>
        setProgress((current) => current.map((p, i) => (i === index ? { ...p, ...patch } : p))),
    });
    controller.current = null;
    if (result.registered.length > 0) onImported(result.registered);
    if (result.errors.length === 0 && result.cancellations.length === 0) {
      const n = result.registered.length;
      void showToast(`${MLD_IMPORT_MESSAGES.registered}: ${n} file${n === 1 ? '' : 's'}`);
      onClose();
      return;
    }
    setOutcome(result);
    setPhase('finished');
  };

  const errors = [...selectionErrors, ...outcome.errors];
  const chooserText =
    files.length === 0 ? 'Choose .mld files…' : files.length === 1 ? (files[0]?.name ?? '') : `${files.length} files`;

  return (
    <Dialog
      isOpen
      title="Import Annotations"
      onClose={uploading ? undefined : onClose}
      canEscapeKeyClose={!uploading}
      canOutsideClickClose={false}
      style={{ width: 600 }}
    >
      <DialogBody>
        <FileInput
          fill
          text={chooserText}
          buttonText="Browse"
          disabled={uploading}
          onInputChange={handleChoose}
          inputProps={{ accept: MLD_ACCEPT, multiple: true, 'aria-label': 'Choose .mld files', autoFocus: true }}
        />
        <p className={Classes.TEXT_MUTED}>
          Visiopharm .mld files, up to {MLD_MAX_FILES} at once. Each is imported in the background; its status shows in
          the list.
        </p>
        <MldImagePicker selected={image} onSelect={setImage} disabled={uploading} />
        <UploadFileList files={progress} />
        {errors.length > 0 && (
          <Callout intent="danger" title={MLD_IMPORT_MESSAGES.unableToUpload} className="lamina-upload-callout">
            <ul className="lamina-upload-messages">
              {errors.map((message, i) => (
                <li key={i}>{message}</li>
              ))}
            </ul>
          </Callout>
        )}
        {outcome.cancellations.length > 0 && (
          <Callout intent="warning" className="lamina-upload-callout">
            <ul className="lamina-upload-messages">
              {outcome.cancellations.map((message, i) => (
                <li key={i}>{message}</li>
              ))}
            </ul>
          </Callout>
        )}
      </DialogBody>
      <DialogFooter
        actions={
          uploading ? (
            <Button intent="danger" icon="stop" text="Stop" onClick={() => controller.current?.abort()} />
          ) : (
            <>
              <Button text={phase === 'finished' ? 'Close' : 'Cancel'} onClick={onClose} />
              <Button
                intent="primary"
                icon="upload"
                text="Upload"
                disabled={files.length === 0 || phase === 'finished'}
                onClick={() => void handleUpload()}
              />
            </>
          )
        }
      />
    </Dialog>
  );
}
