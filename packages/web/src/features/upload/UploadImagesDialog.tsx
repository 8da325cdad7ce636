import { Button, Callout, Dialog, DialogBody, DialogFooter, FileInput } from '@blueprintjs/core';
import { IMAGE_MESSAGES, imageAccept, uploadStartedMessage, type ImageView } from '@lamina/domain';
import { useRef, useState, type ChangeEvent } from 'react';
import { showToast } from '../../components/appToaster';
import { AcceptedFilesHint } from './AcceptedFilesHint';
import { groupDicomSeries, isDicomSeries, itemSize, seriesNote, type UploadItem } from './dicomSeries';
import { UploadFileList } from './UploadFileList';
import { checkSelection, runImageUpload, type FileProgress, type UploadOutcome } from './uploadSession';
import { useImageExtensions } from './useImageExtensions';
import './upload.css';

export interface UploadImagesDialogProps {
  studyId: number;
  /** Replace this image (one file) instead of adding new ones. */
  imageToReplace?: { id: number; name: string } | null;
  isOpen: boolean;
  onClose: () => void;
  /** After files were registered (the new images): refresh the image list (or open the replacement). */
  onUploaded: (images: ImageView[]) => void;
  /** Above this size a file goes as a resumable multipart upload (default: the domain's threshold). */
  multipartThreshold?: number;
}

type Phase = 'choosing' | 'uploading' | 'finished';

/** An upload's row before it starts; a series' row says which files it bundles. */
const queuedRow = (item: UploadItem): FileProgress => ({
  name: item.name,
  loaded: 0,
  total: itemSize(item),
  state: 'queued',
  ...(isDicomSeries(item) ? { note: seriesNote(item) } : {}),
});

const EMPTY_OUTCOME: UploadOutcome = { uploaded: [], failures: [], errors: [], cancellations: [], warning: null };

/**
 * 'Upload images' / 'Replace image' (doc 2 §2.5, §4): choose files of the formats the server reads
 * (.svs/.tif/.tiff, and the vendor formats of issue 31 it lists in its config; one file for a
 * replacement), Upload, per-file progress, Stop cancels; errors in a red callout, and the dialog
 * stays open while one is shown. Several .dcm files of a new upload go as one series .zip (issue 31).
 */
export function UploadImagesDialog(props: UploadImagesDialogProps) {
  const { studyId, imageToReplace, isOpen, onClose, onUploaded } = props;
  const replacing = Boolean(imageToReplace);
  const [items, setItems] = useState<UploadItem[]>([]);
  const [progress, setProgress] = useState<FileProgress[]>([]);
  const [selectionErrors, setSelectionErrors] = useState<string[]>([]);
  const [phase, setPhase] = useState<Phase>('choosing');
  const [outcome, setOutcome] = useState<UploadOutcome>(EMPTY_OUTCOME);
  const controller = useRef<AbortController | null>(null);
  const extensions = useImageExtensions();

  const reset = () => {
    setItems([]);
    setProgress([]);
    setSelectionErrors([]);
    setOutcome(EMPTY_OUTCOME);
    setPhase('choosing');
  };

  const handleClose = () => {
    if (phase === 'uploading') return;
    reset();
    onClose();
  };

  const handleChoose = (event: ChangeEvent<HTMLInputElement>) => {
    const chosen = Array.from(event.currentTarget.files ?? []);
    const { accepted, errors } = checkSelection(chosen, extensions);
    const kept = replacing ? accepted.slice(0, 1) : accepted;
    if (replacing && accepted.length > 1) errors.push('A replacement takes exactly one file');
    // A new upload's .dcm files are one series, sent as one .zip; a replacement is the one file chosen.
    const chosenItems = replacing ? kept : groupDicomSeries(kept);
    setItems(chosenItems);
    setProgress(chosenItems.map(queuedRow));
    setSelectionErrors(errors);
    setOutcome(EMPTY_OUTCOME);
    setPhase('choosing');
  };

  const handleUpload = async () => {
    const abort = new AbortController();
    controller.current = abort;
    setPhase('uploading');
    setOutcome(EMPTY_OUTCOME);
    setProgress(items.map(queuedRow));
    const result = await runImageUpload({
      studyId,
      items,
      imageToReplaceId: imageToReplace?.id ?? null,
      signal: abort.signal,
      multipartThreshold: props.multipartThreshold,
      onProgress: (index, patch) =>
        setProgress((current) => current.map((p, i) => (i === index ? { ...p, ...patch } : p))),
    });
    controller.current = null;
    if (result.uploaded.length > 0) onUploaded(result.uploaded);
    const clean = result.errors.length === 0 && result.cancellations.length === 0 && result.warning === null;
    if (clean) {
      // A small upload is over in a moment: say what was uploaded before the dialog goes (issue 20).
      void showToast(
        uploadStartedMessage(
          items.map((item) => item.name),
          replacing,
        ),
      );
      reset();
      onClose();
      return;
    }
    setOutcome(result);
    setPhase('finished');
  };

  const handleStop = () => controller.current?.abort();

  const uploading = phase === 'uploading';
  const errors = [...selectionErrors, ...outcome.errors];
  const title = replacing ? 'Replace image' : 'Upload images';
  const chosenCount = items.reduce((n, item) => n + (isDicomSeries(item) ? item.files.length : 1), 0);
  const chooserText =
    chosenCount === 0 ? 'Choose file…' : chosenCount === 1 ? (items[0]?.name ?? '') : `${chosenCount} files`;

  return (
    <Dialog
      isOpen={isOpen}
      onClose={handleClose}
      title={title}
      canEscapeKeyClose={!uploading}
      canOutsideClickClose={false}
      style={{ width: 600 }}
    >
      <DialogBody>
        {imageToReplace && (
          <p>
            Replaces <strong>{imageToReplace.name}</strong>. The new file keeps its case assignment; the old one is
            archived.
          </p>
        )}
        <FileInput
          fill
          text={chooserText}
          buttonText="Browse"
          disabled={uploading}
          onInputChange={handleChoose}
          inputProps={{
            accept: imageAccept(extensions),
            multiple: !replacing,
            'aria-label': replacing ? 'Choose a file' : 'Choose files',
            // The file chooser has the focus when the dialog opens (issue 20): Enter opens it.
            autoFocus: true,
          }}
        />
        <AcceptedFilesHint extensions={extensions} oneFile={replacing} />
        <UploadFileList files={progress} />
        {errors.length > 0 && (
          <Callout
            intent="danger"
            title={outcome.failures.length > 0 ? IMAGE_MESSAGES.fileUploadFailed : undefined}
            className="lamina-upload-callout"
          >
            <ul className="lamina-upload-messages">
              {errors.map((message, i) => (
                <li key={i}>{message}</li>
              ))}
            </ul>
          </Callout>
        )}
        {(outcome.cancellations.length > 0 || outcome.warning) && (
          <Callout intent="warning" className="lamina-upload-callout">
            <ul className="lamina-upload-messages">
              {outcome.cancellations.map((message, i) => (
                <li key={i}>{message}</li>
              ))}
              {outcome.warning && <li>{outcome.warning}</li>}
            </ul>
          </Callout>
        )}
      </DialogBody>
      <DialogFooter
        actions={
          uploading ? (
            <Button intent="danger" icon="stop" text="Stop" onClick={handleStop} />
          ) : (
            <>
              <Button text={phase === 'finished' ? 'Close' : 'Cancel'} onClick={handleClose} />
              <Button
                intent="primary"
                icon="upload"
                text="Upload"
                disabled={items.length === 0}
                onClick={() => void handleUpload()}
              />
            </>
          )
        }
      />
    </Dialog>
  );
}
