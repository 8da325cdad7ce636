import {
  SAMPLE_MESSAGES,
  sampleImportResultSchema,
  sampleProgressResponseSchema,
  sampleUploadResponseSchema,
  type SampleDataRequest,
} from '@lamina/domain';
import { withFallbackMessage } from '../../api/ApiError';
import { apiFetch } from '../../api/client';

/** Sample-data import (docs/SAMPLE-DATA.md): offered by Image Management and the study page's Images tab. */

/** POST /api/samples/upload: a signed URL for the file and the request that imports it (doc 2 §7). */
export function createSampleUpload(fileName: string) {
  return withFallbackMessage(
    apiFetch('/api/samples/upload', { method: 'POST', body: { fileName }, schema: sampleUploadResponseSchema }),
    SAMPLE_MESSAGES.unableToCreateSignedUrls,
  );
}

/** POST /api/samples/process: imports the uploaded file; the summary (doc 2 §3 sample import result). */
export function processSamples(request: SampleDataRequest) {
  return withFallbackMessage(
    apiFetch('/api/samples/process', { method: 'POST', body: request, schema: sampleImportResultSchema }),
    SAMPLE_MESSAGES.unableToImport,
  );
}

/** GET /api/samples/progress: how far the import of a file is. */
export function sampleProgress(key: string, signal?: AbortSignal) {
  return apiFetch(`/api/samples/progress?s3SampleDataKey=${encodeURIComponent(key)}`, {
    schema: sampleProgressResponseSchema,
    signal,
  });
}
