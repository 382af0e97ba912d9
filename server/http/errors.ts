import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../../core/telemetry/logger';
import { ApiError, errorBody } from '../../core/http/errors';

export { ApiError, clip, ERROR_STATUS, MAX_ECHO, type ErrorCode, type ErrorDetail } from '../../core/http/errors';

/** PostgreSQL is unreachable (as opposed to a query that failed): retrying later can work. */
function isConnectionError(err: { code?: string; message?: string }): boolean {
  return (
    ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', '57P01', '57P03', '53300'].includes(err.code ?? '') ||
    /timeout exceeded when trying to connect|Connection terminated|connect ECONNREFUSED/i.test(err.message ?? '')
  );
}

/** How a presentation writes an error (the v1 envelope by default); `createApp` sets it per app. */
export type ErrorWriter = (err: ApiError) => unknown;
export const v1ErrorBody: ErrorWriter = (err) => errorBody(err.code, err.message, err.details);

/** The app's error writer, so middleware that refuses a request (limits, timeout) needs no wiring. */
export const setErrorWriter = (locals: Record<string, unknown>, write: ErrorWriter): void => {
  locals.errorWriter = write;
};

export function sendError(res: Response, err: ApiError): void {
  const write = (res.app?.locals.errorWriter as ErrorWriter | undefined) ?? v1ErrorBody;
  res.status(err.status).json(write(err));
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
