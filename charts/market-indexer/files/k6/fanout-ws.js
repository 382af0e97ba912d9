// loadtest/k6/fanout-ws.ts
import { Counter, Trend } from "k6/metrics";

// loadtest/k6/lib/api.ts
import http from "k6/http";

// loadtest/k6/lib/generated.ts
var API_PREFIX = "/api/v1";
var ROUTES = {
  "/markets": {
    "methods": [
      "GET"
    ],
    "name": "/api/v1/markets"
  },
  "/markets/current": {
    "methods": [
      "GET"
    ],
    "name": "/api/v1/markets/current"
  },
  "/markets/{marketId}": {
    "methods": [
      "GET"
    ],
    "name": "/api/v1/markets/:marketId"
  },
  "/markets/{marketId}/creator-fee-claims": {
    "methods": [
      "GET"
    ],
    "name": "/api/v1/markets/:marketId/creator-fee-claims"
  },
  "/orders": {
    "methods": [
      "GET"
    ],
    "name": "/api/v1/orders"
  },
  "/positions": {
    "methods": [
      "GET"
    ],
    "name": "/api/v1/positions"
  },
  "/stats": {
    "methods": [
      "GET"
    ],
    "name": "/api/v1/stats"
  },
  "/stats/history": {
    "methods": [
      "GET"
    ],
    "name": "/api/v1/stats/history"
  },
  "/stats/user/{wallet}/pnl-history": {
    "methods": [
      "GET"
    ],
    "name": "/api/v1/stats/user/:wallet/pnl-history"
  },
  "/stats/trades": {
    "methods": [
      "GET"
    ],
    "name": "/api/v1/stats/trades"
  },
  "/achievements/all": {
    "methods": [
      "GET"
    ],
    "name": "/api/v1/achievements/all"
  },
  "/achievements": {
    "methods": [
      "GET"
    ],
    "name": "/api/v1/achievements"
  },
  "/v2/fee-config": {
    "methods": [
      "GET"
    ],
    "name": "/api/v1/v2/fee-config"
  },
  "/config": {
    "methods": [
      "GET"
    ],
    "name": "/api/v1/config"
  },
  "/orderbook/top": {
    "methods": [
      "GET"
    ],
    "name": "/api/v1/orderbook/top"
  },
  "/trades": {
    "methods": [
      "GET"
    ],
    "name": "/api/v1/trades"
  },
  "/status": {
    "methods": [
      "GET"
    ],
    "name": "/api/v1/status"
  },
  "/v2/referral/{wallet}": {
    "methods": [
      "GET"
    ],
    "name": "/api/v1/v2/referral/:wallet"
  },
  "/v2/referrer/{wallet}/earnings": {
    "methods": [
      "GET"
    ],
    "name": "/api/v1/v2/referrer/:wallet/earnings"
  },
  "/v2/referrals/leaderboard": {
    "methods": [
      "GET"
    ],
    "name": "/api/v1/v2/referrals/leaderboard"
  },
  "/v2/referrals/diagnostics": {
    "methods": [
      "GET"
    ],
    "name": "/api/v1/v2/referrals/diagnostics"
  },
  "/creators/{wallet}": {
    "methods": [
      "GET"
    ],
    "name": "/api/v1/creators/:wallet"
  },
  "/stats/platform": {
    "methods": [
      "GET"
    ],
    "name": "/api/v1/stats/platform"
  },
  "/leaderboard": {
    "methods": [
      "GET"
    ],
    "name": "/api/v1/leaderboard"
  },
  "/challenges/today": {
    "methods": [
      "GET"
    ],
    "name": "/api/v1/challenges/today"
  },
  "/v2/wallet/{address}/analytics": {
    "methods": [
      "GET"
    ],
    "name": "/api/v1/v2/wallet/:address/analytics"
  },
  "/tx/place-order": {
    "methods": [
      "POST"
    ],
    "name": "/api/v1/tx/place-order"
  },
  "/tx/cancel-order": {
    "methods": [
      "POST"
    ],
    "name": "/api/v1/tx/cancel-order"
  },
  "/tx/claim-payout": {
    "methods": [
      "POST"
    ],
    "name": "/api/v1/tx/claim-payout"
  },
  "/tx/claim-referral": {
    "methods": [
      "POST"
    ],
    "name": "/api/v1/tx/claim-referral"
  },
  "/tx/claim-creator-fees": {
    "methods": [
      "POST"
    ],
    "name": "/api/v1/tx/claim-creator-fees"
  },
  "/attestations": {
    "methods": [
      "POST"
    ],
    "name": "/api/v1/attestations"
  },
  "/admin/indexer": {
    "methods": [
      "GET"
    ],
    "name": "/api/v1/admin/indexer"
  },
  "/admin/dead-letters": {
    "methods": [
      "GET"
    ],
    "name": "/api/v1/admin/dead-letters"
  },
  "/admin/audit": {
    "methods": [
      "GET"
    ],
    "name": "/api/v1/admin/audit"
  },
  "/admin/attestations/{id}/revoke": {
    "methods": [
      "POST"
    ],
    "name": "/api/v1/admin/attestations/:id/revoke"
  },
  "/admin/dead-letters/{id}/retry": {
    "methods": [
      "POST"
    ],
    "name": "/api/v1/admin/dead-letters/:id/retry"
  },
  "/admin/api-keys": {
    "methods": [
      "GET",
      "POST"
    ],
    "name": "/api/v1/admin/api-keys"
  },
  "/admin/api-keys/{id}/revoke": {
    "methods": [
      "POST"
    ],
    "name": "/api/v1/admin/api-keys/:id/revoke"
  }
};
var WS_PATH = "/ws";

// loadtest/k6/lib/api.ts
function fill(template, params = {}, query = {}) {
  const p = template.replace(/\{(\w+)\}/g, (_, k) => {
    const v = params[k];
    if (v === void 0) throw new Error(`${template} needs ${k}`);
    return encodeURIComponent(String(v));
  });
  const q = Object.entries(query).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`).join("&");
  return `${API_PREFIX}${p}${q ? `?${q}` : ""}`;
}
function call(t, method, template, opts = {}) {
  const url = `${t.baseUrl}${fill(template, opts.params, opts.query)}`;
  const params = {
    headers: opts.headers ?? {},
    tags: { name: ROUTES[template].name, route_group: opts.group ?? "other", tenant: t.tenant }
  };
  return http.request(method, url, opts.body ?? null, params);
}

// loadtest/k6/lib/checks.ts
import { check } from "k6";
function expectThat(value, name, ok) {
  return check(value, { [name]: ok });
}

// loadtest/k6/lib/env.ts
function hostOf(url) {
  const m = /^[a-z]+:\/\/(\[[^\]]+\]|[^:/?#]+)/i.exec(url);
  if (!m || !m[1]) throw new Error(`BASE_URL must be an absolute http(s) URL, got ${JSON.stringify(url)}`);
  return m[1];
}
function target() {
  const baseUrl = (__ENV.BASE_URL || "http://localhost:3000").replace(/\/+$/, "");
  if (!/^https?:\/\//.test(baseUrl)) throw new Error(`BASE_URL must start with http:// or https://, got ${JSON.stringify(baseUrl)}`);
  return {
    baseUrl,
    wsUrl: `${baseUrl.replace(/^http/, "ws")}${WS_PATH}`,
    tenant: __ENV.TENANT || "default",
    authDomain: __ENV.AUTH_DOMAIN || hostOf(baseUrl),
    runId: __ENV.RUN_ID || "run"
  };
}
function intEnv(name, fallback) {
  const raw = __ENV[name];
  if (raw === void 0 || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got ${JSON.stringify(raw)}`);
  return n;
}

// loadtest/k6/lib/ws.ts
import { setTimeout, clearTimeout } from "k6/timers";
import { WebSocket } from "k6/websockets";
function connect(url, tags = {}) {
  const ws = new WebSocket(url, null, { tags });
  const waiters = [];
  const listeners = [];
  let greeted = false;
  let resolveOpen;
  let rejectOpen;
  const opened = new Promise((res, rej) => {
    resolveOpen = res;
    rejectOpen = rej;
  });
  let resolveClosed;
  const closed = new Promise((res) => resolveClosed = res);
  ws.addEventListener("message", (e) => {
    const at = Date.now();
    const raw = e.data;
    let m;
    try {
      m = JSON.parse(typeof raw === "string" ? raw : "");
    } catch {
      return;
    }
    if (m.type === "connected" && !greeted) {
      greeted = true;
      resolveOpen();
    }
    for (const l of listeners) l(m, at);
    const i = waiters.findIndex((w) => w.match(m));
    if (i >= 0) waiters.splice(i, 1)[0]?.resolve(m);
  });
  ws.addEventListener("error", (e) => {
    if (!greeted) rejectOpen(new Error(String(e.error ?? "websocket error")));
  });
  ws.addEventListener("close", (e) => {
    const c = e ?? {};
    if (!greeted) rejectOpen(new Error("closed before the greeting"));
    for (const w of waiters.splice(0)) w.resolve(void 0);
    resolveClosed({ code: typeof c.code === "number" ? c.code : void 0, reason: typeof c.reason === "string" ? c.reason : void 0 });
  });
  opened.catch(() => void 0);
  return {
    ws,
    opened,
    closed,
    send: (msg) => ws.send(typeof msg === "string" ? msg : JSON.stringify(msg)),
    next(match, timeoutMs = 1e4) {
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          const i = waiters.indexOf(entry);
          if (i >= 0) waiters.splice(i, 1);
          resolve(void 0);
        }, timeoutMs);
        const entry = {
          match,
          resolve: (m) => {
            clearTimeout(timer);
            resolve(m);
          }
        };
        waiters.push(entry);
      });
    },
    onMessage: (fn) => listeners.push(fn)
  };
}
var delay = (ms) => new Promise((r) => setTimeout(r, ms));
var settled = (p) => p.then(() => true, () => false);

// loadtest/k6/fanout-ws.ts
var SUBSCRIBERS = intEnv("SUBSCRIBERS", 50);
var SECONDS = intEnv("FANOUT_SECONDS", 30);
var options = {
  scenarios: {
    subscribers: { executor: "per-vu-iterations", vus: SUBSCRIBERS, iterations: 1, maxDuration: `${SECONDS + 60}s` }
  },
  thresholds: {
    ws_update_latency: ["p(95)<100", "p(99)<250"],
    ws_seq_gaps: ["count==0"],
    ws_seq_duplicates: ["count==0"],
    ws_updates_received: ["count>0"],
    checks: ["rate==1"]
  }
};
var latency = new Trend("ws_update_latency", true);
var gaps = new Counter("ws_seq_gaps");
var duplicates = new Counter("ws_seq_duplicates");
var received = new Counter("ws_updates_received");
function setup() {
  const given = (__ENV.CHANNELS || "").split(",").map((c) => c.trim()).filter(Boolean);
  if (given.length) return { channels: given };
  const t = target();
  const r = call(t, "GET", "/markets/current", { group: "setup" });
  const id = r.status === 200 ? r.json().data?.market?.marketId : void 0;
  if (!id) throw new Error(`no current market (GET /markets/current answered ${r.status}): set CHANNELS`);
  return { channels: [`orderbook:${id}`, `market:${id}`] };
}
async function fanout_ws_default(data) {
  const t = target();
  const c = connect(t.wsUrl, { tenant: t.tenant });
  if (!await settled(c.opened)) {
    expectThat(false, "subscriber connects", (ok) => ok);
    return;
  }
  const last = /* @__PURE__ */ new Map();
  const mine = { gaps: 0, duplicates: 0, updates: 0 };
  c.onMessage((m, at) => {
    if (m.type !== "update" || !m.channel || typeof m.seq !== "number") return;
    const tags = { channel: m.channel };
    received.add(1, tags);
    mine.updates += 1;
    if (typeof m.timestamp === "number") latency.add(Math.max(0, at - m.timestamp), tags);
    const prev = last.get(m.channel);
    if (prev !== void 0) {
      if (m.seq > prev + 1) {
        gaps.add(m.seq - prev - 1, tags);
        mine.gaps += m.seq - prev - 1;
      } else if (m.seq <= prev) {
        duplicates.add(1, tags);
        mine.duplicates += 1;
      }
    }
    if (prev === void 0 || m.seq > prev) last.set(m.channel, m.seq);
  });
  const answers = await Promise.all(
    data.channels.map((channel) => {
      const answer = c.next((m) => m.type === "subscribed" && m.channel === channel || m.type === "error");
      c.send({ type: "subscribe", channel });
      return answer;
    })
  );
  expectThat(answers, "subscribed to every channel", (a) => a.every((m) => m?.type === "subscribed"));
  await delay(SECONDS * 1e3);
  c.ws.close();
  await c.closed;
  expectThat(mine, "every update in seq order, none missing or repeated", (s) => s.gaps === 0 && s.duplicates === 0);
}
export {
  fanout_ws_default as default,
  options,
  setup
};
