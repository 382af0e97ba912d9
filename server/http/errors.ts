import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../../core/telemetry/logger';

/** The documented codes of spec 7.2, with their HTTP status. */
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

/** PostgreSQL is unreachable (as opposed to a query that failed): retrying later can work. */
function isConnectionError(err: { code?: string; message?: string }): boolean {
  return (
    ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', '57P01', '57P03', '53300'].includes(err.code ?? '') ||
    /timeout exceeded when trying to connect|Connection terminated|connect ECONNREFUSED/i.test(err.message ?? '')
  );
}

/** The most of a client's input an error message echoes (decision D-79): the rest is cut. */
export const MAX_ECHO = 64;

/** `s` cut to `max` characters, marked with an ellipsis when cut. */
export const clip = (s: string, max = MAX_ECHO): string => (s.length <= max ? s : `${s.slice(0, max)}…`);

export function sendError(res: Response, err: ApiError): void {
  const body: { error: string; code: ErrorCode; details?: ErrorDetail[] } = { error: err.message, code: err.code };
  if (err.details?.length) body.details = err.details;
  res.status(err.status).json(body);
}

/** The handler timeout's error; also a statement PostgreSQL cancelled at the same limit. */
export const timeoutError = (ms: number) => new ApiError('TIMEOUT', `Request took longer than ${Math.round(ms / 1000)} seconds`);

/**
 * The last middleware: every failure leaves as `{ error, code }` (plus `details` on
 * validation errors). Driver messages, SQL and stacks are logged, never sent.
 */
export function errorMapper(logger: Logger, requestTimeoutMs: number, onDatabaseError: () => void = () => {}) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    if (res.headersSent) return;
    if (err instanceof ApiError) return sendError(res, err);
    const e = err as { type?: string; status?: number; code?: string; message?: string; severity?: string };
    if (e.type === 'entity.parse.failed') return sendError(res, new ApiError('INVALID_REQUEST_BODY', 'Request body is not valid JSON'));
    if (e.type === 'entity.too.large') return sendError(res, new ApiError('LIMIT_EXCEEDED', 'Request body is too large'));
    if (e.type && typeof e.status === 'number' && e.status < 500) return sendError(res, new ApiError('INVALID_REQUEST_BODY', 'Request body could not be read'));
    // The router's decoding of a path parameter (D-75 refuses these before routing; this stays
    // so that a path that slips past it is still a client error, not a 500 with a stack).
    if (err instanceof URIError) return sendError(res, new ApiError('INVALID_PARAMETER', 'Malformed percent-encoding in the request path', [{ field: 'path', message: 'malformed percent-encoding' }]));
    logger.error({ err, requestId: req.id }, 'request failed');
    if (isConnectionError(e)) return sendError(res, new ApiError('SERVICE_UNAVAILABLE', 'A required service is unavailable'));
    // query_canceled: the API's statement_timeout (its request timeout) ran out, or an operator
    // cancelled the query; either way the request took too long.
    if (e.code === '57014') {
      onDatabaseError();
      return sendError(res, timeoutError(requestTimeoutMs));
    }
    if (e.severity !== undefined || /^[0-9A-Z]{5}$/.test(e.code ?? '')) {
      onDatabaseError();
      return sendError(res, new ApiError('DATABASE_ERROR', 'Database operation failed'));
    }
    sendError(res, new ApiError('INTERNAL_ERROR', 'Internal server error'));
  };
}
