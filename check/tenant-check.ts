import WebSocket from 'ws';
import { API_PREFIX, OPS_PATHS, WS_PATH } from '../core/constants';
import type { ApiVariant } from '../core/config/settings';
import { LEGACY_MARKET_CHANNEL } from '../server/ws/protocol';

/**
 * Is a tenant's API serving? Three steps through its front (in a cluster, the API Service):
 * `/ready`, one public read that goes to PostgreSQL, and one `/ws` subscription. The chart's
 * `helm test` Pod runs it (`node dist/check/main.js`), and so can anything that starts a tenant.
 * Only `ws` and fetch: it is a client of the API, and imports no part of the server but its
 * constants.
 */

export interface CheckOptions {
  /** The API's origin, e.g. `http://market-indexer-api.mi-alpha.svc:80`. */
  baseUrl: string;
  /** The interface the tenant serves (its API_VARIANT): the read and the subscribe differ. */
  variant: ApiVariant;
  /** Bound of each request and of each `/ws` answer. */
  timeoutMs: number;
}

export type StepName = 'ready' | 'read' | 'ws';

export interface StepResult {
  name: StepName;
  ok: boolean;
  /** What was asked and what came back, one line. */
  detail: string;
}

export interface CheckResult {
  ok: boolean;
  steps: StepResult[];
}

/**
 * The largest u64: a market id no market will have (ids are epochs since 1970, spec part 1), so
 * its channel never carries an update, and the subscription's answers are all there is.
 */
export const QUIET_MARKET_ID = (2n ** 64n - 1n).toString();

/** Every step runs, whatever the others did: a failed check shows all that is wrong at once. */
export async function checkTenant(opts: CheckOptions): Promise<CheckResult> {
  const base = new URL(opts.baseUrl);
  const steps: StepResult[] = [];
  for (const [name, run] of [
    ['ready', readyStep],
    ['read', readStep],
    ['ws', wsStep],
  ] as const) {
    try {
      steps.push({ name, ...(await run(base, opts)) });
    } catch (err) {
      steps.push({ name, ok: false, detail: describeError(err, opts.timeoutMs) });
    }
  }
  return { ok: steps.every((s) => s.ok), steps };
}

type Outcome = Omit<StepResult, 'name'>;

const short = (s: string) => (s.length > 200 ? `${s.slice(0, 200)}…` : s);

function describeError(err: unknown, timeoutMs: number): string {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError') return `no answer within ${timeoutMs} ms`;
  // fetch's "fetch failed" hides the reason (ECONNREFUSED, ENOTFOUND) in its cause.
  const cause = e.cause?.code ?? e.cause?.message;
  return cause ? `${e.message}: ${cause}` : e.message;
}

async function getJson(url: URL, timeoutMs: number): Promise<{ status: number; body: unknown; text: string }> {
  const res = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(timeoutMs) });
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, body, text };
}

async function readyStep(base: URL, opts: CheckOptions): Promise<Outcome> {
  const url = new URL(OPS_PATHS.ready, base);
  const r = await getJson(url, opts.timeoutMs);
  const ready = (r.body as { ready?: unknown } | undefined)?.ready === true;
  return { ok: r.status === 200 && ready, detail: `GET ${url.pathname} → ${r.status} ${short(r.text)}` };
}

/** The list of markets, the first page of one: a public read each variant serves from PostgreSQL. */
async function readStep(base: URL, opts: CheckOptions): Promise<Outcome> {
  const url = new URL(`${API_PREFIX}/markets?limit=1`, base);
  const r = await getJson(url, opts.timeoutMs);
  const what = `GET ${url.pathname}${url.search} → ${r.status}`;
  if (r.status !== 200) return { ok: false, detail: `${what} ${short(r.text)}` };
  const shape = listShape(opts.variant, r.body);
  return shape.ok ? { ok: true, detail: `${what}, ${shape.detail}` } : { ok: false, detail: `${what} but ${shape.detail}: ${short(r.text)}` };
}

function listShape(variant: ApiVariant, body: unknown): Outcome {
  const b = body as Record<string, any> | undefined; // eslint-disable-line @typescript-eslint/no-explicit-any
  switch (variant) {
    case 'v1': {
      const markets = b?.data?.markets;
      return Array.isArray(markets)
        ? { ok: true, detail: `${markets.length} market(s) of ${String(b!.data.total)}` }
        : { ok: false, detail: 'not a v1 market list ({ data: { markets: [...] } })' };
    }
    case 'legacy':
      return b?.success === true && Array.isArray(b.data)
        ? { ok: true, detail: `${(b.data as unknown[]).length} market(s)` }
        : { ok: false, detail: 'not an appendix-variant market list ({ success: true, data: [...] })' };
    default: {
      const never: never = variant;
      throw new Error(`unknown variant ${String(never)}`);
    }
  }
}

/** The client messages of each variant for a market's channel (api-reference/asyncapi*.yaml). */
function wsMessage(variant: ApiVariant, type: 'subscribe' | 'unsubscribe', marketId: string): Record<string, string> {
  switch (variant) {
    case 'v1':
      return { type, channel: `market:${marketId}` };
    case 'legacy':
      return { type, channel: LEGACY_MARKET_CHANNEL, marketId };
    default: {
      const never: never = variant;
      throw new Error(`unknown variant ${String(never)}`);
    }
  }
}

/**
 * connected → subscribe → `subscribed`, then unsubscribe → `unsubscribed`. The server answers a
 * client's messages in order, so every frame between the two answers belongs to the
 * subscription; on a channel that never changes there must be none, and the check needs no
 * waiting to know it.
 */
async function wsStep(base: URL, opts: CheckOptions): Promise<Outcome> {
  const url = new URL(WS_PATH, base);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  const held = `market:${QUIET_MARKET_ID}`;
  const ws = new WebSocket(url, { handshakeTimeout: opts.timeoutMs });
  const frames = frameQueue(ws, opts.timeoutMs);
  const seen: string[] = [];
  const expect = async (type: string, fields: Record<string, unknown> = {}): Promise<string | undefined> => {
    const frame = await frames.next();
    seen.push(String(frame.type));
    const want = { type, ...fields };
    const matches = Object.entries(want).every(([k, v]) => frame[k] === v) && (type === 'connected' || Object.keys(frame).length === Object.keys(want).length);
    return matches ? undefined : `expected ${JSON.stringify(want)}, got ${short(JSON.stringify(frame))}`;
  };
  try {
    let problem = await expect('connected');
    if (!problem) {
      await send(ws, wsMessage(opts.variant, 'subscribe', QUIET_MARKET_ID));
      problem = await expect('subscribed', { channel: held });
    }
    if (!problem) {
      await send(ws, wsMessage(opts.variant, 'unsubscribe', QUIET_MARKET_ID));
      problem = await expect('unsubscribed', { channel: held });
    }
    return problem
      ? { ok: false, detail: `${url.pathname}: ${problem}` }
      : { ok: true, detail: `${url.pathname}: ${seen.join(', ')} (${held}), nothing else` };
  } finally {
    frames.dispose();
    if (ws.readyState === WebSocket.OPEN) ws.close(1000);
    else ws.terminate();
  }
}

function send(ws: WebSocket, message: object): Promise<void> {
  return new Promise((resolve, reject) => ws.send(JSON.stringify(message), (err) => (err ? reject(err) : resolve())));
}

/** The socket's frames, parsed, one at a time; a close, an error or a silence past the bound rejects. */
function frameQueue(ws: WebSocket, timeoutMs: number) {
  const frames: Record<string, unknown>[] = [];
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const fail = (err: Error) => {
    failure ??= err;
    wake?.();
  };
  ws.on('message', (data) => {
    let frame: unknown;
    try {
      frame = JSON.parse(data.toString());
    } catch {
      frame = undefined;
    }
    frames.push(frame && typeof frame === 'object' && !Array.isArray(frame) ? (frame as Record<string, unknown>) : { type: '(not a JSON object)', text: short(data.toString()) });
    wake?.();
  });
  ws.on('error', (err) => fail(err));
  ws.on('close', (code, reason) => fail(new Error(`closed by the server: ${code} ${reason.toString()}`.trim())));
  let timer: NodeJS.Timeout | undefined;
  return {
    async next(): Promise<Record<string, unknown>> {
      while (!frames.length) {
        if (failure) throw failure;
        await new Promise<void>((resolve, reject) => {
          wake = resolve;
          timer = setTimeout(() => reject(Object.assign(new Error('timeout'), { name: 'TimeoutError' })), timeoutMs);
        }).finally(() => {
          clearTimeout(timer);
          wake = undefined;
        });
      }
      return frames.shift()!;
    },
    dispose() {
      clearTimeout(timer);
    },
  };
}
