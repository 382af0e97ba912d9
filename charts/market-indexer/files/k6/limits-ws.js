// loadtest/k6/limits-ws.ts
import http from "k6/http";
import { AUTH_WINDOW, chainId, configuredLimits, connect, delay, errorCode, expectThat, H, num, settled, target, wallet, WS_CLOSE, WS_ERRORS, WS_LIMITS, WS_PATH } from "./lib.js";
var options = {
  scenarios: { limits: { executor: "shared-iterations", vus: 1, iterations: 1, maxDuration: "2m" } },
  thresholds: { checks: ["rate==1"] }
};
function setup() {
  const t = target();
  return { limits: configuredLimits(t), chain: chainId(t) };
}
var isType = (type, channel) => (m) => m.type === type && (channel === void 0 || m.channel === channel);
var isError = (m) => m.type === "error";
async function request(c, msg, match = () => true) {
  const answer = c.next(match);
  c.send(msg);
  return answer;
}
async function limits_ws_default(data) {
  const t = target();
  const perIp = data.limits.ws.wsConnectionsPerIp;
  const maxSubs = data.limits.ws.wsSubscriptionsPerClient;
  const conns = [];
  try {
    for (let i = 0; i < perIp; i++) conns.push(connect(t.wsUrl, { tenant: t.tenant }));
    const greeted = await Promise.all(conns.map((c2) => settled(c2.opened)));
    expectThat(greeted, `${perIp} connections from one address are accepted`, (g) => g.every(Boolean));
    const extra = connect(t.wsUrl, { tenant: t.tenant });
    expectThat(await settled(extra.opened), `connection ${perIp + 1} from one address is refused`, (ok) => !ok);
    const upgrade = http.get(t.wsUrl.replace(/^ws/, "http"), {
      headers: { Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==" },
      tags: { name: WS_PATH, route_group: "ws", tenant: t.tenant }
    });
    expectThat(upgrade, `the refused upgrade answers 429 RATE_LIMITED with Retry-After`, (r) => r.status === 429 && errorCode(r) === "RATE_LIMITED" && (num(r, H.retryAfter) ?? 0) >= 1);
    const [c, big] = conns;
    if (!c || !big) throw new Error("the per-address connection limit must be at least 2 for this script");
    const ahead = (i) => `market:${9e10 + i}`;
    const subscribed = [];
    for (let i = 1; i <= maxSubs; i++) {
      const channel2 = ahead(i);
      subscribed.push((await request(c, { type: "subscribe", channel: channel2 }, (m) => isError(m) || isType("subscribed", channel2)(m)))?.type === "subscribed");
    }
    expectThat(subscribed, `${maxSubs} subscriptions are accepted`, (s) => s.every(Boolean));
    const over = await request(c, { type: "subscribe", channel: ahead(maxSubs + 1) });
    expectThat(over, `subscription ${maxSubs + 1} gets "${WS_ERRORS.maxSubscriptions}"`, (m) => m?.type === "error" && m.message === WS_ERRORS.maxSubscriptions);
    const freed = await request(c, { type: "unsubscribe", channel: ahead(maxSubs) });
    expectThat(freed, "unsubscribe is answered with unsubscribed", (m) => m?.type === "unsubscribed");
    const w = wallet(t.runId, "ws-positions");
    const other = wallet(t.runId, "ws-other");
    const channel = `positions:${w.address}`;
    const action = `WS_SUBSCRIBE ${channel}`;
    const sign = (fields = {}) => w.sign({ domain: t.authDomain, chain: data.chain, action, ...fields });
    const sub = (auth) => request(c, { type: "subscribe", channel, ...auth ? { auth } : {} }, (m) => isError(m) || isType("subscribed", channel)(m));
    expectThat(await sub(), 'positions without auth: "Authentication required for position channels"', (m) => m?.message === WS_ERRORS.authRequired);
    const foreign = other.sign({ domain: t.authDomain, chain: data.chain, action });
    expectThat(await sub(foreign), `positions signed by another wallet: "${WS_ERRORS.walletMismatch}"`, (m) => m?.message === WS_ERRORS.walletMismatch);
    const forged = sign();
    expectThat(await sub({ ...forged, message: forged.message.replace('"nonce":"', '"nonce":"x') }), `a forged signature: "${WS_ERRORS.badSignature}"`, (m) => m?.message === WS_ERRORS.badSignature);
    const now = Math.floor(Date.now() / 1e3);
    expectThat(await sub(sign({ timestamp: now - AUTH_WINDOW.maxPastSeconds - 60 })), `an expired signature: "${WS_ERRORS.expired}"`, (m) => m?.message === WS_ERRORS.expired);
    const valid = sign();
    expectThat(await sub(valid), "a valid signature subscribes", (m) => m?.type === "subscribed");
    await request(c, { type: "unsubscribe", channel }, isType("unsubscribed", channel));
    expectThat(await sub(valid), `a replayed nonce: "${WS_ERRORS.nonceUsed}"`, (m) => m?.message === WS_ERRORS.nonceUsed);
    big.send(JSON.stringify({ type: "subscribe", channel: "market:1", pad: "x".repeat(WS_LIMITS.maxMessageBytes) }));
    const closed = await Promise.race([big.closed, delay(1e4).then(() => void 0)]);
    expectThat(closed, `a frame over ${WS_LIMITS.maxMessageBytes} bytes closes the connection`, (e) => e !== void 0);
    if (closed?.code !== void 0) expectThat(closed, `... with close code ${WS_CLOSE.messageTooBig}`, (e) => e?.code === WS_CLOSE.messageTooBig);
  } finally {
    for (const c of conns) if (c.ws.readyState === c.ws.OPEN) c.ws.close();
  }
}
export {
  limits_ws_default as default,
  options,
  setup
};
