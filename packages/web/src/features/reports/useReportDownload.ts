import { useEffect, useRef, useState } from 'react';
import { errorMessage } from '../../api/ApiError';
import { downloadReport, type DownloadRequest } from './api';

export interface ReportDownload {
  /** The button (e.g. 'pdf', a report type) whose file is streaming, or null. */
  running: string | null;
  /** Bytes received so far of the running download. */
  bytes: number;
  /** The last failure's message, until the next download starts. */
  error: string | null;
  start: (key: string, request: DownloadRequest) => void;
  cancel: () => void;
}

function isAbort(error: unknown): boolean {
  return error instanceof DOMException && error.name === 'AbortError';
}

/**
 * One section's download: one file at a time, its bytes counted as they stream, its own error
 * (doc 1 §2.9: every report has its own callout). Leaving the page or Cancel stops the stream.
 */
export function useReportDownload(): ReportDownload {
  const [running, setRunning] = useState<string | null>(null);
  const [bytes, setBytes] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const controller = useRef<AbortController | null>(null);

  useEffect(() => () => controller.current?.abort(), []);

  function start(key: string, request: DownloadRequest) {
    if (controller.current) return;
    const abort = new AbortController();
    controller.current = abort;
    setRunning(key);
    setBytes(0);
    setError(null);
    downloadReport(request, setBytes, abort.signal)
      .catch((failure: unknown) => {
        if (!isAbort(failure) && !abort.signal.aborted) setError(errorMessage(failure));
      })
      .finally(() => {
        if (controller.current !== abort) return; // cancelled, maybe followed by another download
        controller.current = null;
        setRunning(null);
      });
  }

  function cancel() {
    controller.current?.abort();
    controller.current = null;
    setRunning(null);
  }

  return { running, bytes, error, start, cancel };
}
