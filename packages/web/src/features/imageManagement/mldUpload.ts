import {
  cancelledUpload,
  errorUploading,
  MLD_IMPORT_MESSAGES,
  MLD_MAX_BYTES,
  MLD_MAX_FILES,
  type MldRecord,
} from '@lamina/domain';
import { isApiError } from '../../api/ApiError';
import { displayUrl } from '../upload/multipartUpload';
import { putWithProgress, UploadAbortedError } from '../upload/putWithProgress';
import type { FileProgress } from '../upload/uploadSession';
import { createMldSignedUrls, registerMld, type MldSignedUrl } from './mldApi';
import { forEachPooled } from '../../lib/pool';

/** The .mld upload flow of doc 2 §4: signed URLs for the names, a PUT of each file, its registration. */

export const MLD_ACCEPT = '.mld';

export interface MldUploadOutcome {
  registered: MldRecord[];
  /** Red: 'Error uploading {file} to {url}', the server's refusal, 'Unable to upload MLD file'. */
  errors: string[];
  /** 'Cancelled upload of {file} to {url}' for each file the Stop button interrupted. */
  cancellations: string[];
}

export interface MldUploadRequest {
  files: File[];
  /** The image the files belong to (the dialog's picker); without it the server links by the file's own image name. */
  imageId: number | null;
  signal: AbortSignal;
  onProgress: (index: number, patch: Partial<FileProgress>) => void;
  /** Files uploading at once. Default 3. */
  concurrency?: number;
}

const isMldName = (name: string) => /\.mld$/i.test(name.trim());

/** The files of a selection the dialog keeps, and why it refuses the others (not .mld, too large, too many). */
export function checkMldSelection(files: readonly File[]): { accepted: File[]; errors: string[] } {
  const accepted: File[] = [];
  const errors: string[] = [];
  for (const file of files) {
    if (!isMldName(file.name)) errors.push(MLD_IMPORT_MESSAGES.notMld(file.name));
    else if (file.size > MLD_MAX_BYTES) errors.push(`${MLD_IMPORT_MESSAGES.tooLarge}: ${file.name}`);
    else accepted.push(file);
  }
  if (accepted.length > MLD_MAX_FILES) {
    errors.push(`At most ${MLD_MAX_FILES} files at once: the first ${MLD_MAX_FILES} are kept`);
    accepted.length = MLD_MAX_FILES;
  }
  return { accepted, errors };
}

/** The server's message for a refusal (4xx); the spec's 'Unable to upload MLD file' otherwise. */
function messageOf(error: unknown): string {
  return isApiError(error) && error.status >= 400 && error.status < 500 && error.message
    ? error.message
    : MLD_IMPORT_MESSAGES.unableToUpload;
}

/**
 * Uploads and registers the files (never throws: what went wrong is in the outcome). Stop (the
 * signal) cancels the PUTs in flight and the files not started; a file already uploaded is still
 * registered, so nothing is left half done on the server.
 */
export async function runMldUpload(request: MldUploadRequest): Promise<MldUploadOutcome> {
  const { files, signal, onProgress } = request;
  const outcome: MldUploadOutcome = { registered: [], errors: [], cancellations: [] };
  let urls: MldSignedUrl[];
  try {
    urls = await createMldSignedUrls(
      files.map((f) => f.name),
      signal,
    );
  } catch (error) {
    if (signal.aborted) {
      files.forEach((file, index) => {
        outcome.cancellations.push(cancelledUpload(file.name, file.name));
        onProgress(index, { state: 'cancelled' });
      });
    } else {
      outcome.errors.push(messageOf(error));
      files.forEach((_, index) => onProgress(index, { state: 'failed' }));
    }
    return outcome;
  }

  const uploadOne = async (file: File, index: number): Promise<void> => {
    const url = urls[index];
    if (!url) {
      outcome.errors.push(`${MLD_IMPORT_MESSAGES.unableToUpload}: ${file.name}`);
      onProgress(index, { state: 'failed' });
      return;
    }
    const target = displayUrl(url.signedUrl);
    if (signal.aborted) {
      outcome.cancellations.push(cancelledUpload(file.name, target));
      onProgress(index, { state: 'cancelled' });
      return;
    }
    onProgress(index, { state: 'uploading' });
    try {
      await putWithProgress(url.signedUrl, file, (loaded, total) => onProgress(index, { loaded, total }), signal);
    } catch (error) {
      if (error instanceof UploadAbortedError || signal.aborted) {
        outcome.cancellations.push(cancelledUpload(file.name, target));
        onProgress(index, { state: 'cancelled' });
      } else {
        outcome.errors.push(errorUploading(file.name, target));
        onProgress(index, { state: 'failed' });
      }
      return;
    }
    onProgress(index, { state: 'registering' });
    try {
      const { mld } = await registerMld({
        name: file.name,
        s3Key: url.s3Key,
        ...(request.imageId !== null ? { imageId: request.imageId } : {}),
      });
      outcome.registered.push(mld);
      onProgress(index, { state: 'done' });
    } catch (error) {
      outcome.errors.push(`${messageOf(error)} (${file.name})`);
      onProgress(index, { state: 'failed' });
    }
  };

  await forEachPooled(files, request.concurrency ?? 3, uploadOne);
  return outcome;
}
