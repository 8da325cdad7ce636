import {
  signedUrlsResponseSchema,
  type CreateImageRequest,
  type ImageView,
  type SignedUrlsResponse,
  type UppySignRequest,
} from '@lamina/domain';
import { apiFetch } from '../../api/client';

/** The upload calls of doc 2 §7 (and the multipart signer of issue 3). */

export type SignedUrl = SignedUrlsResponse['data']['urls'][number];

/** POST /api/signed-urls: one signed PUT URL per file name. */
export async function createSignedUrls(
  studyId: number,
  fileNames: string[],
  signal?: AbortSignal,
): Promise<SignedUrl[]> {
  const response = await apiFetch('/api/signed-urls', {
    method: 'POST',
    body: { studyId, fileNames },
    schema: signedUrlsResponseSchema,
    signal,
  });
  return response.data.urls;
}

/** POST /api/images: registers an uploaded file and queues its processing. */
export function registerImage(request: CreateImageRequest): Promise<{ success: boolean; image: ImageView }> {
  return apiFetch('/api/images', { method: 'POST', body: request });
}

/** POST /api/images/notify-upload: tells the study's admins (e-mail) what arrived. */
export function notifyUpload(studyId: number, numFiles: number, failures: string[]): Promise<unknown> {
  return apiFetch('/api/images/notify-upload', { method: 'POST', body: { studyId, numFiles, failures } });
}

export interface PresignedResponse {
  url: string;
  key?: string;
  headers?: Record<string, string>;
}

/** POST /api/uploads/sign: signs one S3 request of a multipart upload (@uppy/aws-s3 signRequest). */
export function signUploadRequest(request: UppySignRequest, signal?: AbortSignal): Promise<PresignedResponse> {
  return apiFetch('/api/uploads/sign', { method: 'POST', body: request, signal });
}
