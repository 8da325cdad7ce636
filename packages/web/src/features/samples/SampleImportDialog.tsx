import {
  AnchorButton,
  Button,
  Callout,
  Dialog,
  DialogBody,
  DialogFooter,
  FileInput,
  FormGroup,
  HTMLTable,
  ProgressBar,
} from '@blueprintjs/core';
import {
  SAMPLE_FILE_EXTENSIONS,
  SAMPLE_MESSAGES,
  isSampleFileName,
  sampleTemplateCsv,
  CSV_BOM,
  IMAGE_MESSAGES,
  type SampleImportResult,
} from '@lamina/domain';
import { useEffect, useRef, useState } from 'react';
import { errorMessage } from '../../api/ApiError';
import { saveDownload } from '../../api/client';
import { DialogError } from '../../components/FormDialogParts';
import { putWithProgress } from '../upload/putWithProgress';
import { createSampleUpload, processSamples, sampleProgress } from './api';

type Step =
  | { kind: 'choose' }
  | { kind: 'uploading'; fraction: number }
  | { kind: 'importing'; done: number; total: number }
  | { kind: 'complete'; result: SampleImportResult };

/** How often the dialog asks how far the import is. */
const PROGRESS_POLL_MS = 500;

/**
 * Upload (sample data) (doc 2 §2.1, §4): 'Select Sample Data File' — a .csv or .txt file (the
 * template is offered), uploaded to a signed URL with a progress bar, then imported with the rows
 * counted as they go; 'Sample Data Import Complete' shows the counts and the result file. The
 * page refreshes its lists in `onImported`.
 */
export function SampleImportDialog({ onClose, onImported }: { onClose: () => void; onImported: () => void }) {
  const [file, setFile] = useState<File | null>(null);
  const [step, setStep] = useState<Step>({ kind: 'choose' });
  const [error, setError] = useState<string | null>(null);
  const abort = useRef<AbortController | null>(null);
  useEffect(() => () => abort.current?.abort(), []);
  const busy = step.kind === 'uploading' || step.kind === 'importing';
  const fileError = file && !isSampleFileName(file.name) ? SAMPLE_MESSAGES.notCsv : null;

  async function start() {
    if (!file || fileError) return;
    setError(null);
    const controller = new AbortController();
    abort.current = controller;
    try {
      setStep({ kind: 'uploading', fraction: 0 });
      const { putSignedUrl, sampleDataRequest } = await createSampleUpload(file.name);
      await putWithProgress(
        putSignedUrl,
        file,
        (loaded, total) => setStep({ kind: 'uploading', fraction: total > 0 ? loaded / total : 1 }),
        controller.signal,
      ).catch(() => {
        throw new Error(IMAGE_MESSAGES.fileUploadFailed);
      });
      setStep({ kind: 'importing', done: 0, total: 0 });
      const poll = setInterval(() => {
        sampleProgress(sampleDataRequest.s3SampleDataKey, controller.signal)
          .then((p) =>
            setStep((s) => (s.kind === 'importing' ? { kind: 'importing', done: p.doneRows, total: p.totalRows } : s)),
          )
          .catch(() => undefined); // the import may not have started yet; the next poll asks again
      }, PROGRESS_POLL_MS);
      try {
        const result = await processSamples(sampleDataRequest);
        setStep({ kind: 'complete', result });
      } finally {
        clearInterval(poll);
      }
      onImported();
    } catch (caught) {
      if (controller.signal.aborted) return;
      setError(errorMessage(caught));
      setStep({ kind: 'choose' });
    }
  }

  if (step.kind === 'complete') {
    const { result } = step;
    return (
      <Dialog isOpen title={SAMPLE_MESSAGES.complete} onClose={onClose} style={{ width: 480 }}>
        <DialogBody>
          <HTMLTable compact aria-label="Import summary">
            <tbody>
              <tr>
                <th scope="row">Rows updated</th>
                <td data-testid="rows-updated">{result.numRowsUpdated}</td>
              </tr>
              <tr>
                <th scope="row">Fields updated</th>
                <td data-testid="fields-updated">{result.numFieldsUpdated}</td>
              </tr>
              <tr>
                <th scope="row">Rows failed</th>
                <td data-testid="rows-failed">{result.numRowsFailed}</td>
              </tr>
            </tbody>
          </HTMLTable>
          {result.numRowsFailed > 0 && (
            <Callout intent="warning" className="lamina-dialog-error">
              Failed rows changed nothing; the result file says why for each.
            </Callout>
          )}
        </DialogBody>
        <DialogFooter
          actions={
            <>
              <AnchorButton icon="download" href={result.s3SampleDataResponse} target="_blank" rel="noopener">
                Download the result file
              </AnchorButton>
              <Button intent="primary" text="Close" onClick={onClose} />
            </>
          }
        />
      </Dialog>
    );
  }

  return (
    <Dialog isOpen title="Select Sample Data File" onClose={busy ? undefined : onClose} style={{ width: 560 }}>
      <DialogBody>
        <p>
          A CSV or tab-separated file whose first line names the columns by their labels. The key column — File Name,
          Accession Number or Barcode — names the image each row updates; empty cells change nothing.{' '}
          <Button
            variant="minimal"
            size="small"
            icon="document"
            text="Download the template"
            onClick={() =>
              saveDownload(
                { blob: new Blob([CSV_BOM + sampleTemplateCsv()], { type: 'text/csv' }), fileName: null },
                'sample-data-template.csv',
              )
            }
          />
        </p>
        <FormGroup
          label="Sample data file"
          labelFor="sample-file"
          intent={fileError ? 'danger' : 'none'}
          helperText={fileError ?? undefined}
        >
          <FileInput
            fill
            disabled={busy}
            text={file?.name ?? 'Choose a .csv or .txt file…'}
            inputProps={{
              id: 'sample-file',
              accept: SAMPLE_FILE_EXTENSIONS.join(','),
              'aria-label': 'Sample data file',
            }}
            onInputChange={(event) => setFile(event.currentTarget.files?.[0] ?? null)}
          />
        </FormGroup>
        {step.kind === 'uploading' && (
          <FormGroup label="Uploading">
            <ProgressBar value={step.fraction} intent="primary" aria-label="Upload progress" />
          </FormGroup>
        )}
        {step.kind === 'importing' && (
          <FormGroup label={step.total > 0 ? `Importing: ${step.done} of ${step.total} rows` : 'Importing…'}>
            <ProgressBar
              value={step.total > 0 ? step.done / step.total : undefined}
              intent="primary"
              aria-label="Import progress"
            />
          </FormGroup>
        )}
        <DialogError error={error} />
      </DialogBody>
      <DialogFooter
        actions={
          <>
            <Button variant="minimal" text="Cancel" onClick={onClose} disabled={busy} />
            <Button
              intent="primary"
              text="Import"
              loading={busy}
              disabled={!file || !!fileError || busy}
              onClick={() => void start()}
            />
          </>
        }
      />
    </Dialog>
  );
}
