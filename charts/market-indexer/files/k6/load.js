// loadtest/k6/load.ts
import { check, sleep } from "k6";
import http from "k6/http";
import { authHeaders, call, chainId, fill, httpAction, intEnv, PROFILES as PROFILE_NAMES, target, wallet } from "./lib.js";
var RATE = intEnv("RATE", 20);
var PROFILE = __ENV.PROFILE || "smoke";
var arrival = (stages, startRate = 0) => ({
  executor: "ramping-arrival-rate",
  startRate,
  timeUnit: "1s",
  preAllocatedVUs: Math.max(2, RATE),
  maxVUs: Math.max(10, RATE * 10),
  stages
});
var PROFILES = {
  smoke: { smoke: { executor: "constant-vus", vus: 1, duration: "30s" } },
  load: {
    load: arrival([
      { target: RATE, duration: "1m" },
      { target: RATE, duration: "5m" },
      { target: 0, duration: "30s" }
    ])
  },
  stress: {
    stress: arrival([
      { target: RATE, duration: "2m" },
      { target: RATE * 2, duration: "3m" },
      { target: RATE * 4, duration: "3m" },
      { target: 0, duration: "1m" }
    ])
  },
  soak: { soak: { executor: "constant-arrival-rate", rate: RATE, timeUnit: "1s", duration: "1h", preAllocatedVUs: Math.max(2, RATE), maxVUs: RATE * 10 } },
  spike: {
    spike: arrival(
      [
        { target: Math.max(1, Math.floor(RATE / 4)), duration: "30s" },
        { target: RATE * 8, duration: "10s" },
        { target: RATE * 8, duration: "1m" },
        { target: Math.max(1, Math.floor(RATE / 4)), duration: "10s" },
        { target: 0, duration: "30s" }
      ],
      1
    )
  }
};
if (!PROFILE_NAMES.includes(PROFILE)) throw new Error(`PROFILE must be one of ${PROFILE_NAMES.join(", ")}, got ${JSON.stringify(PROFILE)}`);
var OBJECTIVES = { market_reads: [200, 500], public: [300, 800], signed: [400, 1e3] };
var options = {
  scenarios: PROFILES[PROFILE],
  thresholds: {
    http_req_failed: ["rate<0.01"],
    checks: ["rate>0.99"],
    ...Object.fromEntries(Object.entries(OBJECTIVES).map(([group, [p95, p99]]) => [`http_req_duration{route_group:${group}}`, [`p(95)<${p95}`, `p(99)<${p99}`]]))
  },
  // Trends as the Prometheus remote-write output sends them (the load-test dashboard reads these).
  summaryTrendStats: ["avg", "p(95)", "p(99)", "max"]
};
http.setResponseCallback(http.expectedStatuses({ min: 200, max: 299 }, 404));
function setup() {
  const t = target();
  const r = call(t, "GET", "/markets", { query: { limit: 1 }, group: "setup" });
  const first = r.status === 200 ? r.json().data?.markets?.[0]?.marketId : void 0;
  return { chain: chainId(t), marketId: first };
}
var own;
function get(template, group, opts = {}) {
  const r = call(target(), "GET", template, { params: opts.params, query: opts.query, group });
  check(r, {
    [`${group}: expected status`]: (x) => (opts.ok ?? [200]).includes(x.status),
    "not rate limited": (x) => x.status !== 429
  });
  return r;
}
function load_default(data) {
  const t = target();
  get("/markets", "market_reads", { query: { limit: 20 } });
  get("/markets/current", "market_reads", { ok: [200, 404] });
  if (data.marketId) get("/markets/{marketId}", "market_reads", { params: { marketId: data.marketId } });
  get("/orderbook/top", "market_reads");
  get("/trades", "market_reads", { query: { limit: 50 } });
  get("/status", "market_reads");
  get("/leaderboard", "public");
  get("/v2/fee-config", "public");
  get("/achievements/all", "public");
  if (__ITER % 5 === 0) {
    own ?? (own = wallet(t.runId, "load"));
    const s = own.sign({ domain: t.authDomain, chain: data.chain, action: httpAction("GET", fill("/positions")) });
    const r = call(t, "GET", "/positions", { headers: authHeaders(s), group: "signed" });
    check(r, { "signed: expected status": (x) => x.status === 200, "not rate limited": (x) => x.status !== 429 });
  }
  if (PROFILE === "smoke") sleep(Number(__ENV.THINK_SECONDS ?? 1));
}
export {
  load_default as default,
  options,
  setup
};
