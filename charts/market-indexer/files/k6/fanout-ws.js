// loadtest/k6/fanout-ws.ts
import { Counter, Trend } from "k6/metrics";
import { call, connect, delay, expectThat, intEnv, settled, target } from "./lib.js";
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
