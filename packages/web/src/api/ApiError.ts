import { requestFailed } from '@lamina/domain';

/** An API call that failed: HTTP status (0 when the server could not be reached) and the server's message. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly status: number;

  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

export function isApiError(error: unknown, status?: number): error is ApiError {
  return error instanceof ApiError && (status === undefined || error.status === status);
}

/** The message to show for any error thrown by a query or mutation. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

/**
 * Runs an API call; when it fails without a message of the server's own (no envelope), the error
 * reads `fallback` instead, e.g. 'Unable to fetch studies' (doc 1 §8).
 */
export async function withFallbackMessage<T>(call: Promise<T>, fallback: string): Promise<T> {
  try {
    return await call;
  } catch (error) {
    if (error instanceof ApiError && error.message === requestFailed(error.status)) {
      throw new ApiError(error.status, fallback);
    }
    throw error;
  }
}
