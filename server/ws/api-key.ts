import type http from 'node:http';
import { ApiError } from '../../core/http/errors';
import { KEYLESS_PLAN } from '../../core/plans';
import type { PlanCaller, PlanLimits } from '../limits/plan-limits';
import { LegacyError } from '../routes/legacy/envelope';
import { WS_API_KEY_PROTOCOL_PREFIX, WS_SUBPROTOCOL } from './protocol';

/**
 * The API key of an appendix-variant upgrade (D-158, D-191): the `X-API-Key` header; else a
 * `Sec-WebSocket-Protocol` offer `apikey.<key>` (browsers can set that header), which must come
 * with an offer of `market-indexer` (the one the server selects, so the key is not echoed); else
 * the `apiKey` query parameter, which proxies write into their access logs with the URL.
 */
export function upgradeApiKey(req: http.IncomingMessage): { ok: true; apiKey: string | undefined } | { ok: false; error: string } {
  const header = req.headers['x-api-key'];
  const fromHeader = Array.isArray(header) ? header[0] : header;
  if (fromHeader !== undefined) return { ok: true, apiKey: fromHeader };
  const offered = (req.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
  const carried = offered.find((p) => p.startsWith(WS_API_KEY_PROTOCOL_PREFIX));
  if (carried !== undefined) {
    if (!offered.includes(WS_SUBPROTOCOL)) {
      return { ok: false, error: `Offer the ${WS_SUBPROTOCOL} subprotocol with ${WS_API_KEY_PROTOCOL_PREFIX}<key> (Sec-WebSocket-Protocol)` };
    }
    return { ok: true, apiKey: carried.slice(WS_API_KEY_PROTOCOL_PREFIX.length) };
  }
  return { ok: true, apiKey: new URL(req.url ?? '/', 'http://x').searchParams.get('apiKey') ?? undefined };
}


/** The caller of an appendix-variant upgrade, or the refusal to answer it with (and the `reason` of service_ws_refusals_total). */
export type UpgradeAdmission = { ok: true; caller: PlanCaller } | { ok: false; reason: 'invalid_api_key' | 'per_ip'; error: ApiError; headers: string[] };

/**
 * Who an appendix-variant upgrade counts against (D-158): its key's plan, or Free by IP. A key
 * this process does not know as good costs the IP's keyless budget before it is looked up, and is
 * refused 429 once that is spent (D-188); a bad key is 401, a key subprotocol without
 * `market-indexer` 400 (D-191).
 */
export async function admitUpgrade(req: http.IncomingMessage, ip: string, plans: PlanLimits): Promise<UpgradeAdmission> {
  const key = upgradeApiKey(req);
  if (!key.ok) return { ok: false, reason: 'invalid_api_key', error: new LegacyError('VALIDATION_ERROR', key.error), headers: [] };
  const a = await plans.admit(key.apiKey, ip);
  switch (a.kind) {
    case 'caller':
      return { ok: true, caller: a.caller };
    case 'invalid_key':
      return { ok: false, reason: 'invalid_api_key', error: new LegacyError('INVALID_API_KEY', 'Unknown or revoked API key'), headers: [] };
    case 'rate_limited':
      plans.refused(KEYLESS_PLAN, 'requests');
      return {
        ok: false,
        reason: 'per_ip',
        error: new ApiError('RATE_LIMITED', 'Rate limit exceeded'),
        headers: [`Retry-After: ${Math.max(1, Math.ceil(a.keyless.msBeforeNext / 1000))}`],
      };
    default: {
      const never: never = a;
      throw new Error(`unhandled admission ${JSON.stringify(never)}`);
    }
  }
}
