// loadtest/k6/limits-rest.ts
import { group } from "k6";
import { AUTH_WINDOW, authHeaders, call, chainId, configuredLimits, errorCode, expectThat, fill, H, httpAction, num, target, wallet } from "./lib.js";
var options = {
  scenarios: { limits: { executor: "shared-iterations", vus: 1, iterations: 1, maxDuration: "5m" } },
  thresholds: { checks: ["rate==1"] }
};
function setup() {
  const t = target();
  return { limits: configuredLimits(t), chain: chainId(t) };
}
function exhaust(tier, max, before, send) {
  let allowed = before;
  let countdown = true;
  let first;
  let refused;
  for (let i = before; i <= max; i++) {
    const r = send();
    if (r.status === 429) {
      refused = r;
      break;
    }
    first ?? (first = r);
    allowed += 1;
    if (num(r, H.remaining) !== max - allowed) countdown = false;
  }
  expectThat(first, `${tier}: ${H.limit} is the configured ${max}`, (r) => r !== void 0 && num(r, H.limit) === max);
  expectThat(allowed, `${tier}: ${max} requests allowed in the window`, (n) => n === max);
  expectThat(countdown, `${tier}: ${H.remaining} counts down one per request`, (c) => c);
  expectThat(refused, `${tier}: request ${max + 1} answers 429 RATE_LIMITED`, (r) => r !== void 0 && r.status === 429 && errorCode(r) === "RATE_LIMITED");
  expectThat(refused, `${tier}: the 429 carries Retry-After and the X-RateLimit headers`, (r) => {
    if (!r) return false;
    const now = Date.now() / 1e3;
    const reset = num(r, H.reset) ?? 0;
    return (num(r, H.retryAfter) ?? 0) >= 1 && num(r, H.remaining) === 0 && num(r, H.limit) === max && reset >= now - 1;
  });
}
function signedGet(w, chain, template, group2, sign = {}) {
  const t = target();
  const action = sign.action ?? httpAction("GET", fill(template));
  const s = w.sign({ domain: t.authDomain, chain, action, ...sign.timestamp === void 0 ? {} : { timestamp: sign.timestamp } });
  return { s, r: call(t, "GET", template, { headers: authHeaders(s), group: group2 }) };
}
function limits_rest_default(data) {
  const t = target();
  const { tiers } = data.limits;
  group("signed requests (spec 5)", () => {
    const w = wallet(t.runId, "signed");
    const ok = signedGet(w, data.chain, "/positions", "signed");
    expectThat(ok.r, "a valid signature is accepted", (r) => r.status === 200);
    const replay = call(t, "GET", "/positions", { headers: authHeaders(ok.s), group: "signed" });
    expectThat(replay, "a replayed nonce is refused: 401 UNAUTHORIZED", (r) => r.status === 401 && errorCode(r) === "UNAUTHORIZED");
    const wrong = signedGet(w, data.chain, "/positions", "signed", { action: httpAction("GET", fill("/orders")) });
    expectThat(wrong.r, "a wrong action is refused: 401 UNAUTHORIZED", (r) => r.status === 401 && errorCode(r) === "UNAUTHORIZED");
    const now = Math.floor(Date.now() / 1e3);
    const old = signedGet(w, data.chain, "/positions", "signed", { timestamp: now - AUTH_WINDOW.maxPastSeconds - 60 });
    expectThat(old.r, "an expired timestamp is refused: 401 MESSAGE_EXPIRED", (r) => r.status === 401 && errorCode(r) === "MESSAGE_EXPIRED");
    const future = signedGet(w, data.chain, "/positions", "signed", { timestamp: now + AUTH_WINDOW.maxFutureSeconds + 60 });
    expectThat(future.r, "a future timestamp is refused: 401 MESSAGE_EXPIRED", (r) => r.status === 401 && errorCode(r) === "MESSAGE_EXPIRED");
    const s = w.sign({ domain: t.authDomain, chain: data.chain, action: httpAction("GET", fill("/positions")) });
    const tampered = call(t, "GET", "/positions", { headers: authHeaders({ ...s, message: s.message.replace('"nonce":"', '"nonce":"x') }), group: "signed" });
    expectThat(tampered, "a signature over other bytes is refused: 401 INVALID_SIGNATURE", (r) => r.status === 401 && errorCode(r) === "INVALID_SIGNATURE");
    const none = call(t, "GET", "/positions", { group: "signed" });
    expectThat(none, "missing headers are refused: 401 MISSING_AUTH_HEADERS", (r) => r.status === 401 && errorCode(r) === "MISSING_AUTH_HEADERS");
  });
  group("rate-limit tiers (spec 8)", () => {
    exhaust("public_read", tiers.public_read.max, __ENV.CHAIN_ID ? 0 : 1, () => call(t, "GET", "/markets", { group: "market_reads" }));
    exhaust("public", tiers.public.max, 0, () => call(t, "GET", "/leaderboard", { group: "public" }));
    const a = wallet(t.runId, "authenticated");
    exhaust("authenticated", tiers.authenticated.max, 0, () => signedGet(a, data.chain, "/achievements", "signed").r);
    const s = wallet(t.runId, "sensitive");
    exhaust("sensitive", tiers.sensitive.max, 0, () => signedGet(s, data.chain, "/positions", "signed").r);
  });
}
export {
  limits_rest_default as default,
  options,
  setup
};
