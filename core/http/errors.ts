/**
 * The error contract every process answers with (spec 7.2): the documented codes with their
 * HTTP status, and the `{ error, code, details? }` envelope. REST errors, the `/ws` upgrade
 * refusal and the indexer's own port all write it from here.
 */
export const ERROR_STATUS = {
  VALIDATION_ERROR: 400,
  INVALID_REQUEST_BODY: 400,
  INVALID_PARAMETER: 400,
  MISSING_REQUIRED_FIELD: 400,
  LIMIT_EXCEEDED: 400,
  UNAUTHORIZED: 401,
  MISSING_AUTH_HEADERS: 401,
  INVALID_SIGNATURE: 401,
  MESSAGE_EXPIRED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  USER_NOT_FOUND: 404,
  RESOURCE_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  RATE_LIMITED: 429,
  GEO_BLOCKED: 451,
  ATTESTATION_REQUIRED: 451,
  INTERNAL_ERROR: 500,
  DATABASE_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
  TIMEOUT: 504,
} as const;
export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorDetail {
  field: string;
  message: string;
}

/** The body of every error answer: `details` only where there are some (validation). */
export interface ErrorBody {
  error: string;
  code: ErrorCode;
  details?: ErrorDetail[];
}

export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
  ) {
    super(message);
  }
  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

export function errorBody(code: ErrorCode, message: string, details?: ErrorDetail[]): ErrorBody {
  const body: ErrorBody = { error: message, code };
  if (details?.length) body.details = details;
  return body;
}

/** The most of a client's input an error message echoes (decision D-79): the rest is cut. */
export const MAX_ECHO = 64;

/** `s` cut to `max` characters, marked with an ellipsis when cut. */
export const clip = (s: string, max = MAX_ECHO): string => (s.length <= max ? s : `${s.slice(0, max)}…`);
