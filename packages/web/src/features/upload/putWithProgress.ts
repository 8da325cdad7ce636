/** A PUT of a file to a signed URL with upload progress (XMLHttpRequest: fetch has no upload progress). */

export class UploadAbortedError extends Error {
  override readonly name = 'UploadAbortedError';
}

export class UploadFailedError extends Error {
  override readonly name = 'UploadFailedError';
  constructor(readonly status: number) {
    super(status === 0 ? 'Network error' : `HTTP ${status}`);
  }
}

export function putWithProgress(
  url: string,
  file: Blob,
  onProgress: (loaded: number, total: number) => void,
  signal?: AbortSignal,
): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new UploadAbortedError('Aborted'));
      return;
    }
    const xhr = new XMLHttpRequest();
    const handleAbort = () => xhr.abort();
    const done = () => signal?.removeEventListener('abort', handleAbort);
    xhr.open('PUT', url, true);
    xhr.setRequestHeader('Content-Type', file.type || 'application/octet-stream');
    xhr.upload.onprogress = (event) => onProgress(event.loaded, event.lengthComputable ? event.total : file.size);
    xhr.onload = () => {
      done();
      if (xhr.status >= 200 && xhr.status < 300) {
        onProgress(file.size, file.size);
        resolve();
      } else reject(new UploadFailedError(xhr.status));
    };
    xhr.onerror = () => {
      done();
      reject(new UploadFailedError(0));
    };
    xhr.onabort = () => {
      done();
      reject(new UploadAbortedError('Aborted'));
    };
    signal?.addEventListener('abort', handleAbort);
    xhr.send(file);
  });
}
