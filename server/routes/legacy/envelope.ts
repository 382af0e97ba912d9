import type { Response } from 'express';
import { ApiError, type ErrorCode } from '../../http/errors';

/**
 * The appendix variant's envelope (D-155): `{ success: true, data, timestamp }` (Unix ms), lists
 * with `pagination: { hasMore, nextCursor }` beside `data`; errors `{ success: false, error: {
 * code, message }, timestamp }`. Issue 22's v1 routes, served by this variant too, answer their
 * success in the same envelope (`inLegacyEnvelope`, D-177).
 */
export function sendData(res: Response, data: unknown, pagination?: { hasMore: boolean; nextCursor: string | null }): void {
  res.json(pagination ? { success: true, data, pagination, timestamp: Date.now() } : { success: true, data, timestamp: Date.now() });
}

/**
 * The appendix's error codes, then the documented additions for what it does not name (D-156,
 * D-177).
 * Declared once: the error mapping below and the tests read it.
 */
export const LEGACY_ERROR_STATUS = {
  MARKET_NOT_FOUND: 404,
  POSITION_NOT_FOUND: 404,
  INVALID_MARKET_ID: 400,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  // Additions.
  VALIDATION_ERROR: 400,
  INVALID_API_KEY: 401,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  SERVICE_UNAVAILABLE: 503,
  TIMEOUT: 504,
  // Additions for issue 22's v1 routes the variant serves too (D-177).
  FORBIDDEN: 403,
  CONFLICT: 409,
  GEO_BLOCKED: 451,
  ATTESTATION_REQUIRED: 451,
  // A wallet signature refused (spec 5): not an API key's fault.
  UNAUTHORIZED: 401,
} as const;
export type LegacyCode = keyof typeof LEGACY_ERROR_STATUS;

/** How each error the shared middleware and queries raise reads in this variant. */
const FROM_V1: Record<ErrorCode, LegacyCode> = {
  VALIDATION_ERROR: 'VALIDATION_ERROR',
  INVALID_REQUEST_BODY: 'VALIDATION_ERROR',
  INVALID_PARAMETER: 'VALIDATION_ERROR',
  MISSING_REQUIRED_FIELD: 'VALIDATION_ERROR',
  LIMIT_EXCEEDED: 'VALIDATION_ERROR',
  // The wallet signature of issue 22's routes (D-177); an unknown or revoked API key is a
  // LegacyError('INVALID_API_KEY') of the plan limits.
  UNAUTHORIZED: 'UNAUTHORIZED',
  MISSING_AUTH_HEADERS: 'UNAUTHORIZED',
  INVALID_SIGNATURE: 'UNAUTHORIZED',
  MESSAGE_EXPIRED: 'UNAUTHORIZED',
  NOT_FOUND: 'NOT_FOUND',
  USER_NOT_FOUND: 'NOT_FOUND',
  RESOURCE_NOT_FOUND: 'NOT_FOUND',
  METHOD_NOT_ALLOWED: 'METHOD_NOT_ALLOWED',
  // The variant serves issue 22's admin, tx and attestation routes too (D-177): their refusals
  // keep their own codes and statuses.
  FORBIDDEN: 'FORBIDDEN',
  CONFLICT: 'CONFLICT',
  RATE_LIMITED: 'RATE_LIMITED',
  GEO_BLOCKED: 'GEO_BLOCKED',
  ATTESTATION_REQUIRED: 'ATTESTATION_REQUIRED',
  INTERNAL_ERROR: 'INTERNAL_ERROR',
  DATABASE_ERROR: 'INTERNAL_ERROR',
  SERVICE_UNAVAILABLE: 'SERVICE_UNAVAILABLE',
  TIMEOUT: 'TIMEOUT',
};

/** The v1 code that carries each variant code's HTTP status through the shared error path. */
const CARRIER: Record<LegacyCode, ErrorCode> = {
  MARKET_NOT_FOUND: 'NOT_FOUND',
  POSITION_NOT_FOUND: 'NOT_FOUND',
  INVALID_MARKET_ID: 'INVALID_PARAMETER',
  RATE_LIMITED: 'RATE_LIMITED',
  INTERNAL_ERROR: 'INTERNAL_ERROR',
  VALIDATION_ERROR: 'INVALID_PARAMETER',
  INVALID_API_KEY: 'UNAUTHORIZED',
  NOT_FOUND: 'NOT_FOUND',
  METHOD_NOT_ALLOWED: 'METHOD_NOT_ALLOWED',
  SERVICE_UNAVAILABLE: 'SERVICE_UNAVAILABLE',
  TIMEOUT: 'TIMEOUT',
  FORBIDDEN: 'FORBIDDEN',
  CONFLICT: 'CONFLICT',
  GEO_BLOCKED: 'GEO_BLOCKED',
  ATTESTATION_REQUIRED: 'ATTESTATION_REQUIRED',
  UNAUTHORIZED: 'UNAUTHORIZED',
};

/** An error with the variant's own code. */
export class LegacyError extends ApiError {
  constructor(
    readonly legacyCode: LegacyCode,
    message: string,
  ) {
    super(CARRIER[legacyCode], message);
  }
}

export const legacyCodeOf = (err: ApiError): LegacyCode => (err instanceof LegacyError ? err.legacyCode : FROM_V1[err.code]);

/** The error body; a validation error names its first rejected parameter in the message. */
export function legacyErrorBody(err: ApiError) {
  const d = err.details?.[0];
  const message = d && !err.message.includes(d.field) ? `${err.message} (${d.field})` : err.message;
  return { success: false, error: { code: legacyCodeOf(err), message }, timestamp: Date.now() };
}

/**
 * Opaque keyset cursors: the sort key of the last row served, as base64url JSON. Decoding is
 * strict (a cursor the server did not write is a VALIDATION_ERROR, never a 500).
 */
export const encodeCursor = (key: readonly (string | number)[]): string => Buffer.from(JSON.stringify(key)).toString('base64url');

export function decodeCursor(cursor: string | undefined, shape: readonly ('int' | 'text')[]): (string | number)[] | undefined {
  if (cursor === undefined) return undefined;
  const bad = () => new LegacyError('VALIDATION_ERROR', 'Invalid cursor: pass the nextCursor of a previous page');
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(cursor, 'base64url').toString());
  } catch {
    throw bad();
  }
  if (!Array.isArray(key) || key.length !== shape.length) throw bad();
  key.forEach((v, i) => {
    const ok = shape[i] === 'int' ? typeof v === 'string' && /^\d{1,20}$/.test(v) : typeof v === 'string' && v.length <= 128;
    if (!ok) throw bad();
  });
  return key as string[];
}

/** A page of `limit` from `limit + 1` rows fetched: whether more exist, and the cursor after it. */
export function page<R>(rows: R[], limit: number, keyOf: (r: R) => (string | number)[]) {
  const hasMore = rows.length > limit;
  const items = hasMore ? rows.slice(0, limit) : rows;
  return { items, pagination: { hasMore, nextCursor: hasMore ? encodeCursor(keyOf(items[items.length - 1]!)) : null } };
}
