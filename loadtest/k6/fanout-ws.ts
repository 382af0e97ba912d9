import { Counter, Trend } from 'k6/metrics';
import type { Options } from 'k6/options';
import { call, connect, delay, expectThat, intEnv, type ServerMessage, settled, target } from './lib.js';

/**
 * The healthy side of the /ws fan-out under load: SUBSCRIBERS connections (one per VU) on the
 * busy channels (CHANNELS, comma-separated; by default the current market's `orderbook:` and
 * `market:` channels) for FANOUT_SECONDS. Each update counts; its latency is the time from the
 * server's send timestamp to its receipt; per channel, `seq` grows by exactly 1, so a gap or a
 * repeat is a lost or duplicated update (thresholds: none of either). A k6 client always reads,
 * so slow consumers are the Node harness's part (npm run bench -- ws-backpressure).
 *
 * The target's WS_MAX_CONNECTIONS_PER_IP must allow SUBSCRIBERS connections from the runner's
 * address (or run it on several runners).
 */
const SUBSCRIBERS = intEnv('SUBSCRIBERS', 50);
const SECONDS = intEnv('FANOUT_SECONDS', 30);

export const options: Options = {
  scenarios: {
    subscribers: { executor: 'per-vu-iterations', vus: SUBSCRIBERS, iterations: 1, maxDuration: `${SECONDS + 60}s` },
  },
  thresholds: {
    ws_update_latency: ['p(95)<100', 'p(99)<250'],
    ws_seq_gaps: ['count==0'],
    ws_seq_duplicates: ['count==0'],
    ws_updates_received: ['count>0'],
    checks: ['rate==1'],
  },
};

const latency = new Trend('ws_update_latency', true);
const gaps = new Counter('ws_seq_gaps');
const duplicates = new Counter('ws_seq_duplicates');
const received = new Counter('ws_updates_received');

export function setup(): { channels: string[] } {
  const given = (__ENV.CHANNELS || '').split(',').map((c) => c.trim()).filter(Boolean);
  if (given.length) return { channels: given };
  const t = target();
  const r = call(t, 'GET', '/markets/current', { group: 'setup' });
  const id = r.status === 200 ? (r.json() as { data?: { market?: { marketId?: string } } }).data?.market?.marketId : undefined;
  if (!id) throw new Error(`no current market (GET /markets/current answered ${r.status}): set CHANNELS`);
  return { channels: [`orderbook:${id}`, `market:${id}`] };
}

export default async function (data: { channels: string[] }): Promise<void> {
  const t = target();
  const c = connect(t.wsUrl, { tenant: t.tenant });
  if (!(await settled(c.opened))) {
    expectThat(false, 'subscriber connects', (ok) => ok);
    return;
  }
  const last = new Map<string, number>();
  const mine = { gaps: 0, duplicates: 0, updates: 0 };
  c.onMessage((m: ServerMessage, at: number) => {
    if (m.type !== 'update' || !m.channel || typeof m.seq !== 'number') return;
    const tags = { channel: m.channel };
    received.add(1, tags);
    mine.updates += 1;
    if (typeof m.timestamp === 'number') latency.add(Math.max(0, at - m.timestamp), tags);
    const prev = last.get(m.channel);
    if (prev !== undefined) {
      if (m.seq > prev + 1) {
        gaps.add(m.seq - prev - 1, tags);
        mine.gaps += m.seq - prev - 1;
      } else if (m.seq <= prev) {
        duplicates.add(1, tags);
        mine.duplicates += 1;
      }
    }
    if (prev === undefined || m.seq > prev) last.set(m.channel, m.seq);
  });
  const answers = await Promise.all(
    data.channels.map((channel) => {
      const answer = c.next((m) => (m.type === 'subscribed' && m.channel === channel) || m.type === 'error');
      c.send({ type: 'subscribe', channel });
      return answer;
    }),
  );
  expectThat(answers, 'subscribed to every channel', (a) => a.every((m) => m?.type === 'subscribed'));
  await delay(SECONDS * 1000);
  c.ws.close();
  await c.closed;
  expectThat(mine, 'every update in seq order, none missing or repeated', (s) => s.gaps === 0 && s.duplicates === 0);
}
