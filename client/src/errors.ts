import type { components } from './openapi';

/** The spec's error codes (the document's `Error.code`). */
export type ErrorCode = components['schemas']['Error']['code'];
export type ErrorDetail = { field: string; message: string };

/**
 * An answer the API refused, as a class per kind (D-524): `instanceof RateLimitedError` rather
 * than comparing strings; `code` is the spec's exact code, `status` the HTTP status.
 */
export class MarketApiError extends Error {
  override name = 'MarketApiError';
  constructor(
    readonly status: number,
    readonly code: ErrorCode | 'UNKNOWN',
    message: string,
    readonly details: ErrorDetail[] | undefined,
    /** `x-request-id` of the answer: quote it when reporting a problem. */
    readonly requestId: string | undefined,
  ) {
    super(`${status} ${code}: ${message}`);
  }
}
export class ValidationError extends MarketApiError {
  override name = 'ValidationError';
}
export class UnauthorizedError extends MarketApiError {
  override name = 'UnauthorizedError';
}
export class ForbiddenError extends MarketApiError {
  override name = 'ForbiddenError';
}
export class NotFoundError extends MarketApiError {
  override name = 'NotFoundError';
}
export class ConflictError extends MarketApiError {
  override name = 'ConflictError';
}
export class RateLimitedError extends MarketApiError {
  override name = 'RateLimitedError';
  /** Seconds the API asked to wait (`Retry-After`). */
  retryAfter: number | undefined;
}
/** 451: `GEO_BLOCKED` (the country may not) or `ATTESTATION_REQUIRED` (the wallet must attest first, `POST /attestations`). */
export class UnavailableForLegalReasonsError extends MarketApiError {
  override name = 'UnavailableForLegalReasonsError';
}
export class ServerError extends MarketApiError {
  override name = 'ServerError';
}
export class ServiceUnavailableError extends MarketApiError {
  override name = 'ServiceUnavailableError';
  retryAfter: number | undefined;
}
export class TimeoutError extends MarketApiError {
  override name = 'TimeoutError';
}

type ErrorClass = new (...a: ConstructorParameters<typeof MarketApiError>) => MarketApiError;
/** Every code of the spec, by class: a code added to the document without a class here does not compile. */
const CLASS_OF: Record<ErrorCode, ErrorClass> = {
  VALIDATION_ERROR: ValidationError,
  INVALID_REQUEST_BODY: ValidationError,
  INVALID_PARAMETER: ValidationError,
  MISSING_REQUIRED_FIELD: ValidationError,
  LIMIT_EXCEEDED: ValidationError,
  UNAUTHORIZED: UnauthorizedError,
  MISSING_AUTH_HEADERS: UnauthorizedError,
  INVALID_SIGNATURE: UnauthorizedError,
  MESSAGE_EXPIRED: UnauthorizedError,
  FORBIDDEN: ForbiddenError,
  NOT_FOUND: NotFoundError,
  USER_NOT_FOUND: NotFoundError,
  RESOURCE_NOT_FOUND: NotFoundError,
  METHOD_NOT_ALLOWED: ValidationError,
  CONFLICT: ConflictError,
  RATE_LIMITED: RateLimitedError,
  GEO_BLOCKED: UnavailableForLegalReasonsError,
  ATTESTATION_REQUIRED: UnavailableForLegalReasonsError,
  INTERNAL_ERROR: ServerError,
  DATABASE_ERROR: ServerError,
  SERVICE_UNAVAILABLE: ServiceUnavailableError,
  TIMEOUT: TimeoutError,
};

/** Seconds from a `Retry-After` header (delta-seconds or an HTTP date), or undefined. */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/** The typed error of a refused answer: the v1 body `{ error, code, details? }`, or the status alone. */
export function errorOf(status: number, body: unknown, headers: { get(name: string): string | null }): MarketApiError {
  const b = (body && typeof body === 'object' ? body : {}) as { error?: unknown; code?: unknown; details?: unknown };
  const code = typeof b.code === 'string' && b.code in CLASS_OF ? (b.code as ErrorCode) : undefined;
  const Class = code ? CLASS_OF[code] : status === 429 ? RateLimitedError : status === 451 ? UnavailableForLegalReasonsError : status === 503 ? ServiceUnavailableError : status >= 500 ? ServerError : MarketApiError;
  const err = new Class(status, code ?? 'UNKNOWN', typeof b.error === 'string' ? b.error : `HTTP ${status}`, Array.isArray(b.details) ? (b.details as ErrorDetail[]) : undefined, headers.get('x-request-id') ?? undefined);
  if (err instanceof RateLimitedError || err instanceof ServiceUnavailableError) err.retryAfter = retryAfterSeconds(headers.get('retry-after'));
  return err;
}
