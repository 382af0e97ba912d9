import http from 'k6/http';
import type { Options } from 'k6/options';
import { AUTH_WINDOW, chainId, configuredLimits, type ConfiguredLimits, type Conn, connect, delay, errorCode, expectThat, H, num, type ServerMessage, settled, target, wallet, WS_CLOSE, WS_ERRORS, WS_LIMITS, WS_PATH } from './lib.js';

/**
 * The /ws limits of spec 8 and the subscription rules of 6.1, against one running tenant:
 * - the connection after the configured per-address count is refused (429 RATE_LIMITED);
 * - the subscription after the 20th answers "Maximum subscriptions (20) reached";
 * - a frame over 4096 bytes closes the connection with 1009;
 * - `positions:{wallet}` needs a valid signature of `WS_SUBSCRIBE positions:{wallet}`: missing,
 *   mismatched, forged, replayed and expired ones get the spec 7.3 messages.
 * One VU, one iteration: the per-address count is cluster-wide, so run it alone.
 */
export const options: Options = {
  scenarios: { limits: { executor: 'shared-iterations', vus: 1, iterations: 1, maxDuration: '2m' } },
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

const isType = (type: string, channel?: string) => (m: ServerMessage) => m.type === type && (channel === undefined || m.channel === channel);
const isError = (m: ServerMessage) => m.type === 'error';

async function request(c: Conn, msg: unknown, match: (m: ServerMessage) => boolean = () => true): Promise<ServerMessage | undefined> {
  const answer = c.next(match);
  c.send(msg);
  return answer;
}

export default async function (data: Setup): Promise<void> {
  const t = target();
  const perIp = data.limits.ws.wsConnectionsPerIp;
  const maxSubs = data.limits.ws.wsSubscriptionsPerClient;
  const conns: Conn[] = [];
  try {
    // Connection cap: every allowed connection is greeted, the next one is refused.
    for (let i = 0; i < perIp; i++) conns.push(connect(t.wsUrl, { tenant: t.tenant }));
    const greeted = await Promise.all(conns.map((c) => settled(c.opened)));
    expectThat(greeted, `${perIp} connections from one address are accepted`, (g) => g.every(Boolean));
    const extra = connect(t.wsUrl, { tenant: t.tenant });
    expectThat(await settled(extra.opened), `connection ${perIp + 1} from one address is refused`, (ok) => !ok);
    const upgrade = http.get(t.wsUrl.replace(/^ws/, 'http'), {
      headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==' },
      tags: { name: WS_PATH, route_group: 'ws', tenant: t.tenant },
    });
    expectThat(upgrade, `the refused upgrade answers 429 RATE_LIMITED with Retry-After`, (r) => r.status === 429 && errorCode(r) === 'RATE_LIMITED' && (num(r, H.retryAfter) ?? 0) >= 1);

    const [c, big] = conns;
    if (!c || !big) throw new Error('the per-address connection limit must be at least 2 for this script');

    // Markets not created yet (ids above any epoch's): a tenant's own markets may be few, and a
    // marketId below the newest that no market has is refused as unknown (D-352).
    const ahead = (i: number) => `market:${90_000_000_000 + i}`;
    const subscribed: boolean[] = [];
    for (let i = 1; i <= maxSubs; i++) {
      const channel = ahead(i);
      subscribed.push((await request(c, { type: 'subscribe', channel }, (m) => isError(m) || isType('subscribed', channel)(m)))?.type === 'subscribed');
    }
    expectThat(subscribed, `${maxSubs} subscriptions are accepted`, (s) => s.every(Boolean));
    const over = await request(c, { type: 'subscribe', channel: ahead(maxSubs + 1) });
    expectThat(over, `subscription ${maxSubs + 1} gets "${WS_ERRORS.maxSubscriptions}"`, (m) => m?.type === 'error' && m.message === WS_ERRORS.maxSubscriptions);
    const freed = await request(c, { type: 'unsubscribe', channel: ahead(maxSubs) });
    expectThat(freed, 'unsubscribe is answered with unsubscribed', (m) => m?.type === 'unsubscribed');

    // Positions channel: the one free slot is used for these.
    const w = wallet(t.runId, 'ws-positions');
    const other = wallet(t.runId, 'ws-other');
    const channel = `positions:${w.address}`;
    const action = `WS_SUBSCRIBE ${channel}`;
    const sign = (fields: { timestamp?: number } = {}) => w.sign({ domain: t.authDomain, chain: data.chain, action, ...fields });
    const sub = (auth?: unknown) => request(c, { type: 'subscribe', channel, ...(auth ? { auth } : {}) }, (m) => isError(m) || isType('subscribed', channel)(m));
    expectThat(await sub(), 'positions without auth: "Authentication required for position channels"', (m) => m?.message === WS_ERRORS.authRequired);
    const foreign = other.sign({ domain: t.authDomain, chain: data.chain, action });
    expectThat(await sub(foreign), `positions signed by another wallet: "${WS_ERRORS.walletMismatch}"`, (m) => m?.message === WS_ERRORS.walletMismatch);
    const forged = sign();
    expectThat(await sub({ ...forged, message: forged.message.replace('"nonce":"', '"nonce":"x') }), `a forged signature: "${WS_ERRORS.badSignature}"`, (m) => m?.message === WS_ERRORS.badSignature);
    const now = Math.floor(Date.now() / 1000);
    expectThat(await sub(sign({ timestamp: now - AUTH_WINDOW.maxPastSeconds - 60 })), `an expired signature: "${WS_ERRORS.expired}"`, (m) => m?.message === WS_ERRORS.expired);
    const valid = sign();
    expectThat(await sub(valid), 'a valid signature subscribes', (m) => m?.type === 'subscribed');
    await request(c, { type: 'unsubscribe', channel }, isType('unsubscribed', channel));
    expectThat(await sub(valid), `a replayed nonce: "${WS_ERRORS.nonceUsed}"`, (m) => m?.message === WS_ERRORS.nonceUsed);

    // A frame over the limit: the server closes with 1009 (message too big).
    big.send(JSON.stringify({ type: 'subscribe', channel: 'market:1', pad: 'x'.repeat(WS_LIMITS.maxMessageBytes) }));
    const closed = await Promise.race([big.closed, delay(10_000).then(() => undefined)]);
    expectThat(closed, `a frame over ${WS_LIMITS.maxMessageBytes} bytes closes the connection`, (e) => e !== undefined);
    // Older k6 releases give the close event no code: then only the close itself is checked.
    if (closed?.code !== undefined) expectThat(closed, `... with close code ${WS_CLOSE.messageTooBig}`, (e) => e?.code === WS_CLOSE.messageTooBig);
  } finally {
    for (const c of conns) if (c.ws.readyState === c.ws.OPEN) c.ws.close();
  }
}
