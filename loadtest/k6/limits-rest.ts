import { group } from 'k6';
import type { Options } from 'k6/options';
import type { RefinedResponse, ResponseType } from 'k6/http';
import { AUTH_WINDOW, authHeaders, call, chainId, configuredLimits, type ConfiguredLimits, errorCode, expectThat, fill, H, httpAction, num, type RouteTemplate, target, type Tier, wallet, type Wallet } from './lib.js';

/**
 * Spec part 8 rate limits and part 5 signed requests, against one running tenant:
 * - each tier (public market reads, public other, authenticated, sensitive) answers 429
 *   RATE_LIMITED exactly after its configured count, with X-RateLimit-Limit/-Remaining/-Reset
 *   and Retry-After; the counts are what the service publishes on /metrics;
 * - a replayed nonce, a wrong action, an expired or future timestamp, a bad signature and
 *   missing headers are refused with 401 and the spec's codes.
 * One VU, one iteration, from a fresh window: the per-IP tiers count every request this
 * address makes, so run it once per window (RATE_LIMIT_WINDOW_MS) and alone.
 */
export const options: Options = {
  scenarios: { limits: { executor: 'shared-iterations', vus: 1, iterations: 1, maxDuration: '5m' } },
  thresholds: { checks: ['rate==1'] },
};

interface Setup {
  limits: ConfiguredLimits;
  chain: string;
}

export function setup(): Setup {
  const t = target();
  return { limits: configuredLimits(t), chain: chainId(t) };
}

type Sender = () => RefinedResponse<ResponseType>;

/**
 * Sends until the first 429 (at most max + 1 requests after `before` already counted) and checks
 * that it came right after the configured count.
 */
function exhaust(tier: Tier, max: number, before: number, send: Sender): void {
  let allowed = before;
  let countdown = true;
  let first: RefinedResponse<ResponseType> | undefined;
  let refused: RefinedResponse<ResponseType> | undefined;
  for (let i = before; i <= max; i++) {
    const r = send();
    if (r.status === 429) {
      refused = r;
      break;
    }
    first ??= r;
    allowed += 1;
    if (num(r, H.remaining) !== max - allowed) countdown = false;
  }
  expectThat(first, `${tier}: ${H.limit} is the configured ${max}`, (r) => r !== undefined && num(r, H.limit) === max);
  expectThat(allowed, `${tier}: ${max} requests allowed in the window`, (n) => n === max);
  expectThat(countdown, `${tier}: ${H.remaining} counts down one per request`, (c) => c);
  expectThat(refused, `${tier}: request ${max + 1} answers 429 RATE_LIMITED`, (r) => r !== undefined && r.status === 429 && errorCode(r) === 'RATE_LIMITED');
  expectThat(refused, `${tier}: the 429 carries Retry-After and the X-RateLimit headers`, (r) => {
    if (!r) return false;
    const now = Date.now() / 1000;
    const reset = num(r, H.reset) ?? 0;
    return (num(r, H.retryAfter) ?? 0) >= 1 && num(r, H.remaining) === 0 && num(r, H.limit) === max && reset >= now - 1;
  });
}

function signedGet(w: Wallet, chain: string, template: RouteTemplate, group: string, sign: { action?: string; timestamp?: number } = {}) {
  const t = target();
  const action = sign.action ?? httpAction('GET', fill(template));
  const s = w.sign({ domain: t.authDomain, chain, action, ...(sign.timestamp === undefined ? {} : { timestamp: sign.timestamp }) });
  return { s, r: call(t, 'GET', template, { headers: authHeaders(s), group }) };
}

export default function (data: Setup): void {
  const t = target();
  const { tiers } = data.limits;

  group('signed requests (spec 5)', () => {
    const w = wallet(t.runId, 'signed');
    const ok = signedGet(w, data.chain, '/positions', 'signed');
    expectThat(ok.r, 'a valid signature is accepted', (r) => r.status === 200);
    const replay = call(t, 'GET', '/positions', { headers: authHeaders(ok.s), group: 'signed' });
    expectThat(replay, 'a replayed nonce is refused: 401 UNAUTHORIZED', (r) => r.status === 401 && errorCode(r) === 'UNAUTHORIZED');
    const wrong = signedGet(w, data.chain, '/positions', 'signed', { action: httpAction('GET', fill('/orders')) });
    expectThat(wrong.r, 'a wrong action is refused: 401 UNAUTHORIZED', (r) => r.status === 401 && errorCode(r) === 'UNAUTHORIZED');
    const now = Math.floor(Date.now() / 1000);
    const old = signedGet(w, data.chain, '/positions', 'signed', { timestamp: now - AUTH_WINDOW.maxPastSeconds - 60 });
    expectThat(old.r, 'an expired timestamp is refused: 401 MESSAGE_EXPIRED', (r) => r.status === 401 && errorCode(r) === 'MESSAGE_EXPIRED');
    const future = signedGet(w, data.chain, '/positions', 'signed', { timestamp: now + AUTH_WINDOW.maxFutureSeconds + 60 });
    expectThat(future.r, 'a future timestamp is refused: 401 MESSAGE_EXPIRED', (r) => r.status === 401 && errorCode(r) === 'MESSAGE_EXPIRED');
    const s = w.sign({ domain: t.authDomain, chain: data.chain, action: httpAction('GET', fill('/positions')) });
    const tampered = call(t, 'GET', '/positions', { headers: authHeaders({ ...s, message: s.message.replace('"nonce":"', '"nonce":"x') }), group: 'signed' });
    expectThat(tampered, 'a signature over other bytes is refused: 401 INVALID_SIGNATURE', (r) => r.status === 401 && errorCode(r) === 'INVALID_SIGNATURE');
    const none = call(t, 'GET', '/positions', { group: 'signed' });
    expectThat(none, 'missing headers are refused: 401 MISSING_AUTH_HEADERS', (r) => r.status === 401 && errorCode(r) === 'MISSING_AUTH_HEADERS');
  });

  group('rate-limit tiers (spec 8)', () => {
    // setup() read GET /config (a public market read of this address) unless CHAIN_ID was given.
    exhaust('public_read', tiers.public_read.max, __ENV.CHAIN_ID ? 0 : 1, () => call(t, 'GET', '/markets', { group: 'market_reads' }));
    exhaust('public', tiers.public.max, 0, () => call(t, 'GET', '/leaderboard', { group: 'public' }));
    const a = wallet(t.runId, 'authenticated');
    exhaust('authenticated', tiers.authenticated.max, 0, () => signedGet(a, data.chain, '/achievements', 'signed').r);
    const s = wallet(t.runId, 'sensitive');
    exhaust('sensitive', tiers.sensitive.max, 0, () => signedGet(s, data.chain, '/positions', 'signed').r);
  });
}
