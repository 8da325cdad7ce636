import AwsS3, { type AwsBody } from '@uppy/aws-s3';
import Uppy, { type Meta, type UploadResult } from '@uppy/core';
import { MULTIPART_PART_BYTES } from '@lamina/domain';
import { UploadAbortedError } from './putWithProgress';
import { signUploadRequest } from './uploadApi';

/** Strips the query (signature) of a signed URL, for messages. */
export function displayUrl(url: string): string {
  return url.split('?')[0] ?? url;
}

export class MultipartUploadError extends Error {
  override readonly name = 'MultipartUploadError';
  constructor(
    message: string,
    /** The storage URL (without signature) the failing request went to. */
    readonly url: string,
  ) {
    super(message);
  }
}

export interface MultipartOptions {
  studyId: number;
  onProgress: (loaded: number, total: number) => void;
  signal?: AbortSignal;
  /** Resumes after a failed attempt (each part is already retried 3 times by Uppy). Default 5. */
  maxResumes?: number;
  /** Wait before resume n (1-based). Default 1 s, 2 s, 4 s, 8 s, 16 s. */
  resumeDelayMs?: (attempt: number) => number;
  partBytes?: number;
}

function wait(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new UploadAbortedError('Aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function succeeded(result: UploadResult<Meta, AwsBody> | undefined): boolean {
  return (result?.successful?.length ?? 0) > 0;
}

/**
 * Uploads one large file as an S3 multipart upload with Uppy's @uppy/aws-s3: every S3 request is
 * signed by the server (POST /api/uploads/sign), which works the same for S3 and for the local
 * storage's S3-speaking signed URLs. After a dropped connection the upload resumes: Uppy lists the
 * parts already stored and sends only the rest. Resolves with the storage key.
 */
export async function uploadMultipart(file: File, options: MultipartOptions): Promise<{ key: string; url: string }> {
  const { studyId, onProgress, signal } = options;
  const maxResumes = options.maxResumes ?? 5;
  const resumeDelay = options.resumeDelayMs ?? ((attempt: number) => 1000 * 2 ** (attempt - 1));
  let lastUrl = '';
  let lastError = '';
  const uppy = new Uppy<Meta, AwsBody>({ autoProceed: false, allowMultipleUploadBatches: true });
  uppy.use(AwsS3<Meta, AwsBody>, {
    shouldUseMultipart: true,
    limit: 1,
    getChunkSize: () => options.partBytes ?? MULTIPART_PART_BYTES,
    generateObjectKey: (f) => f.name ?? file.name,
    signRequest: async (request) => {
      const response = await signUploadRequest(
        {
          studyId,
          method: request.method,
          key: request.key,
          uploadId: 'uploadId' in request ? request.uploadId : undefined,
          partNumber: 'partNumber' in request ? request.partNumber : undefined,
          contentType: 'contentType' in request ? request.contentType : undefined,
          fileName: file.name,
        },
        signal,
      );
      lastUrl = response.url;
      return response;
    },
  });
  const id = uppy.addFile({
    name: file.name,
    type: file.type || 'application/octet-stream',
    data: file,
    source: 'Lamina',
  });
  uppy.on('upload-progress', (progressed, progress) => {
    if (progressed?.id === id) onProgress(progress.bytesUploaded, progress.bytesTotal ?? file.size);
  });
  uppy.on('upload-error', (_file, error) => {
    lastError = error.message;
  });
  const cancel = () => uppy.cancelAll();
  signal?.addEventListener('abort', cancel, { once: true });
  try {
    let result = await uppy.upload();
    for (let attempt = 1; !succeeded(result) && !signal?.aborted && attempt <= maxResumes; attempt++) {
      await wait(resumeDelay(attempt), signal);
      result = await uppy.retryUpload(id);
    }
    if (signal?.aborted) throw new UploadAbortedError('Aborted');
    const done = result?.successful?.[0];
    const key = done?.response?.body?.key;
    if (!key) throw new MultipartUploadError(lastError || 'Upload failed', displayUrl(lastUrl));
    onProgress(file.size, file.size);
    return { key, url: displayUrl(lastUrl) };
  } finally {
    signal?.removeEventListener('abort', cancel);
    uppy.destroy();
  }
}
