import { MESSAGES } from '@lamina/domain';

/** The server's error vocabulary: each maps to an HTTP status and `{ success: false, message }`. */
export class AppError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

export class BadRequestError extends AppError {
  constructor(message: string) {
    super(400, message, 'BAD_REQUEST');
  }
}

export class UnauthorizedError extends AppError {
  constructor(message: string = MESSAGES.pleaseLogIn) {
    super(401, message, 'UNAUTHORIZED');
  }
}

export class ForbiddenError extends AppError {
  constructor(message: string = MESSAGES.accessDenied) {
    super(403, message, 'FORBIDDEN');
  }
}

/** Also used for resources in a study the user cannot see: they do not learn that it exists. */
export class NotFoundError extends AppError {
  constructor(message: string = MESSAGES.notFound) {
    super(404, message, 'NOT_FOUND');
  }
}

export class ConflictError extends AppError {
  constructor(message: string) {
    super(409, message, 'CONFLICT');
  }
}

export class TooManyRequestsError extends AppError {
  constructor(message: string) {
    super(429, message, 'TOO_MANY_REQUESTS');
  }
}
