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
import { bundleSeries, isDicomSeries, SeriesBundleError, storedZipSize, type UploadItem } from './dicomSeries';
import { createSignedUrls, notifyUpload, registerImage, type SignedUrl } from './uploadApi';
import { forEachPooled } from '../../lib/pool';

export type FileState = 'queued' | 'preparing' | 'uploading' | 'registering' | 'done' | 'failed' | 'cancelled';

export interface FileProgress {
  name: string;
  loaded: number;
  total: number;
  state: FileState;
  /** What was done with the chosen files, in words: '3 DICOM files → one series: CMU-1.zip'. */
  note?: string;
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
  /** The uploads: chosen files, and DICOM series bundled into one .zip each before they are sent. */
  items: UploadItem[];
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

/** The bytes an item's upload sends: a series' .zip is known before it is made. */
const uploadSize = (item: UploadItem): number => (isDicomSeries(item) ? storedZipSize(item.files) : item.size);

/**
 * The image upload flow (doc 2 §4): signed URLs for the files, the bytes PUT to each (large files
 * as a resumable multipart upload), each file registered with POST /api/images, then the study's
 * admins notified. A DICOM series is bundled into its .zip ('preparing') when its turn comes.
 * Never throws: everything that went wrong is in the outcome's messages.
 */
export async function runImageUpload(request: UploadRequest): Promise<UploadOutcome> {
  const { studyId, items, signal, onProgress } = request;
  const threshold = request.multipartThreshold ?? MULTIPART_THRESHOLD_BYTES;
  const outcome: UploadOutcome = { uploaded: [], failures: [], errors: [], cancellations: [], warning: null };

  const small = items.filter((item) => uploadSize(item) <= threshold);
  const signed = new Map<UploadItem, SignedUrl>();
  if (small.length > 0) {
    try {
      const urls = await createSignedUrls(
        studyId,
        small.map((item) => item.name),
        signal,
      );
      small.forEach((item, i) => {
        const url = urls[i];
        if (url) signed.set(item, url);
      });
    } catch (error) {
      if (signal.aborted) return outcome;
      outcome.errors.push(messageOf(error, IMAGE_MESSAGES.unableToCreateSignedUrls));
    }
  }

  const uploadOne = async (item: UploadItem, index: number): Promise<void> => {
    const fail = (message: string) => {
      outcome.errors.push(message);
      outcome.failures.push(item.name);
      onProgress(index, { state: 'failed' });
    };
    const large = uploadSize(item) > threshold;
    const url = signed.get(item);
    if (!large && !url) {
      onProgress(index, { state: 'failed' });
      outcome.failures.push(item.name);
      return;
    }
    let target = url ? displayUrl(url.signedUrl) : '';
    const cancel = () => {
      outcome.cancellations.push(cancelledUpload(item.name, target || item.name));
      onProgress(index, { state: 'cancelled' });
    };
    if (signal.aborted) {
      cancel();
      return;
    }
    const progress = (loaded: number, total: number) => onProgress(index, { loaded, total });
    let file: File;
    if (isDicomSeries(item)) {
      onProgress(index, { state: 'preparing' });
      try {
        file = await bundleSeries(item, progress, signal);
      } catch (error) {
        if (error instanceof UploadAbortedError || signal.aborted) cancel();
        else if (error instanceof SeriesBundleError) fail(error.message);
        else fail(errorUploading(item.name, target || item.name));
        return;
      }
    } else {
      file = item;
    }
    onProgress(index, { state: 'uploading', loaded: 0 });
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
        cancel();
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

  await forEachPooled(items, request.concurrency ?? 3, uploadOne);

  if (outcome.uploaded.length + outcome.failures.length > 0) {
    try {
      await notifyUpload(studyId, outcome.uploaded.length, outcome.failures);
    } catch {
      outcome.warning = IMAGE_MESSAGES.notificationWarning;
    }
  }
  return outcome;
}
