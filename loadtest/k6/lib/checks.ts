import { check } from 'k6';
import type { RefinedResponse, ResponseType } from 'k6/http';

/**
 * Response header names as k6 gives them: Go's canonical form, so `X-RateLimit-Limit` reads as
 * `X-Ratelimit-Limit`.
 */
export const H = {
  limit: 'X-Ratelimit-Limit',
  remaining: 'X-Ratelimit-Remaining',
  reset: 'X-Ratelimit-Reset',
  retryAfter: 'Retry-After',
} as const;

export const num = (r: RefinedResponse<ResponseType>, header: string): number | undefined => {
  const v = r.headers[header];
  return v === undefined || v === '' ? undefined : Number(v);
};

/** One named check on one value (k6 records it; the summary and `checks` rate count it). */
export function expectThat<T>(value: T, name: string, ok: (v: T) => boolean): boolean {
  return check(value, { [name]: ok });
}
