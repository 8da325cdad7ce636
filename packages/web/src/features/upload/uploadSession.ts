import {
  cancelledUpload,
  errorUploading,
  hasImageExtension,
  IMAGE_MESSAGES,
  MULTIPART_THRESHOLD_BYTES,
  unsupportedFileType,
  type ImageView,
} from '@lamina/domain';
import { isApiError } from '../../api/ApiError';
import { displayUrl, MultipartUploadError, uploadMultipart } from './multipartUpload';
import { putWithProgress, UploadAbortedError } from './putWithProgress';
import { createSignedUrls, notifyUpload, registerImage, type SignedUrl } from './uploadApi';
import { forEachPooled } from '../../lib/pool';

export type FileState = 'queued' | 'uploading' | 'registering' | 'done' | 'failed' | 'cancelled';

export interface FileProgress {
  name: string;
  loaded: number;
  total: number;
  state: FileState;
}

export interface UploadOutcome {
  uploaded: ImageView[];
  /** Names of the files that did not make it (upload or registration failed). */
  failures: string[];
  /** Red messages: 'Error uploading {file} to {url}', 'Unable to create signed URLs', … */
  errors: string[];
  /** 'Cancelled upload of {file} to {url}' for each file the Stop button interrupted. */
  cancellations: string[];
  /** 'Warning: failed to send email notification of upload(s)' when notify-upload failed. */
  warning: string | null;
}

export interface UploadRequest {
  studyId: number;
  files: File[];
  imageToReplaceId?: number | null;
  signal: AbortSignal;
  onProgress: (index: number, patch: Partial<FileProgress>) => void;
  /** Above this size a file goes as a resumable multipart upload. */
  multipartThreshold?: number;
  /** Files uploading at once. Default 3. */
  concurrency?: number;
}

/**
 * The accepted files of a selection, and the messages for the others (doc 2 §5), by the extensions
 * the server reads (its config's imageExtensions): a file it would refuse is refused here, before
 * its bytes are sent, with a message naming that list.
 */
export function checkSelection(files: File[], extensions: readonly string[]): { accepted: File[]; errors: string[] } {
  const accepted = files.filter((f) => hasImageExtension(f.name, extensions));
  const errors = files
    .filter((f) => !hasImageExtension(f.name, extensions))
    .map((f) => unsupportedFileType(f.name, extensions));
  return { accepted, errors };
}

/** The server's message for a refusal (4xx: e.g. the file type, the study); the spec's otherwise. */
function messageOf(error: unknown, fallback: string): string {
  return isApiError(error) && error.status >= 400 && error.status < 500 && error.message ? error.message : fallback;
}

/**
 * The image upload flow (doc 2 §4): signed URLs for the files, the bytes PUT to each (large files
 * as a resumable multipart upload), each file registered with POST /api/images, then the study's
 * admins notified. Never throws: everything that went wrong is in the outcome's messages.
 */
export async function runImageUpload(request: UploadRequest): Promise<UploadOutcome> {
  const { studyId, files, signal, onProgress } = request;
  const threshold = request.multipartThreshold ?? MULTIPART_THRESHOLD_BYTES;
  const outcome: UploadOutcome = { uploaded: [], failures: [], errors: [], cancellations: [], warning: null };

  const small = files.filter((f) => f.size <= threshold);
  const signed = new Map<File, SignedUrl>();
  if (small.length > 0) {
    try {
      const urls = await createSignedUrls(
        studyId,
        small.map((f) => f.name),
        signal,
      );
      small.forEach((file, i) => {
        const url = urls[i];
        if (url) signed.set(file, url);
      });
    } catch (error) {
      if (signal.aborted) return outcome;
      outcome.errors.push(messageOf(error, IMAGE_MESSAGES.unableToCreateSignedUrls));
    }
  }

  const uploadOne = async (file: File, index: number): Promise<void> => {
    const fail = (message: string) => {
      outcome.errors.push(message);
      outcome.failures.push(file.name);
      onProgress(index, { state: 'failed' });
    };
    const large = file.size > threshold;
    const url = signed.get(file);
    if (!large && !url) {
      onProgress(index, { state: 'failed' });
      outcome.failures.push(file.name);
      return;
    }
    let target = url ? displayUrl(url.signedUrl) : '';
    if (signal.aborted) {
      outcome.cancellations.push(cancelledUpload(file.name, target || file.name));
      onProgress(index, { state: 'cancelled' });
      return;
    }
    onProgress(index, { state: 'uploading' });
    const progress = (loaded: number, total: number) => onProgress(index, { loaded, total });
    let key: string;
    try {
      if (url) {
        await putWithProgress(url.signedUrl, file, progress, signal);
        key = url.s3Key;
      } else {
        const result = await uploadMultipart(file, { studyId, onProgress: progress, signal });
        key = result.key;
        target = result.url;
      }
    } catch (error) {
      if (error instanceof MultipartUploadError) target = error.url;
      if (error instanceof UploadAbortedError || signal.aborted) {
        outcome.cancellations.push(cancelledUpload(file.name, target || file.name));
        onProgress(index, { state: 'cancelled' });
      } else {
        fail(errorUploading(file.name, target || file.name));
      }
      return;
    }
    onProgress(index, { state: 'registering' });
    try {
      const { image } = await registerImage({
        name: file.name,
        s3Key: key,
        studyId,
        imageToReplaceId: request.imageToReplaceId ?? null,
      });
      outcome.uploaded.push(image);
      onProgress(index, { state: 'done' });
    } catch (error) {
      fail(messageOf(error, IMAGE_MESSAGES.unableToCreateImage));
    }
  };

  await forEachPooled(files, request.concurrency ?? 3, uploadOne);

  if (outcome.uploaded.length + outcome.failures.length > 0) {
    try {
      await notifyUpload(studyId, outcome.uploaded.length, outcome.failures);
    } catch {
      outcome.warning = IMAGE_MESSAGES.notificationWarning;
    }
  }
  return outcome;
}
