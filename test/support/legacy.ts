import { LEGACY_ERROR_STATUS, type LegacyCode } from '../../server/routes/legacy/envelope';
import type { Json } from './api';

/** An answer in the appendix variant's error envelope, with the code's documented status (D-156, D-177). */
export function expectLegacyError(r: { status: number; body: Json }, code: LegacyCode): void {
  expect({ status: r.status, code: r.body.error?.code }).toEqual({ status: LEGACY_ERROR_STATUS[code], code });
  expect(Object.keys(r.body).sort()).toEqual(['error', 'success', 'timestamp']);
  expect(r.body.success).toBe(false);
  expect(Object.keys(r.body.error).sort()).toEqual(['code', 'message']);
  expect(typeof r.body.error.message).toBe('string');
}
