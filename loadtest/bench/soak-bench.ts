import { readFileSync } from 'node:fs';
import WebSocket from 'ws';
import { migrate } from '../../core/db/migrate';
import { build, dropDatabase, freshDatabase, pct, REDIS_URL, spawnImage } from './support';

/**
 * `npm run bench -- soak [--minutes N] [--clients N]`: the API (compiled, as production runs it)
 * and a realtime indexer for N minutes (default 10) with N /ws clients (default 500) subscribed
 * to live channels, and REST reads at half the capacity measured first in the same run. Reports
 * the API process's RSS over time, its event-loop delay (prom-client's p99 and max from
 * /metrics), errors, and the /ws clients still open at the end.
 */
const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  const v = i > 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isFinite(v) || v <= 0) throw new Error(`--${name} must be a positive number`);
  return v;
};

const rssMb = (pid: number) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
};

/**
 * The event-loop delay since the previous scrape, in ms: prom-client resets its histogram at each
 * scrape, so both figures come from one scrape.
 */
async function eventLoopDelay(port: number): Promise<{ p99: number; max: number }> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const read = (name: string) => {
    const m = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.eE+-]+)$`, 'm').exec(text);
    return m ? Number(m[1]) * 1000 : NaN;
  };
  return { p99: read('nodejs_eventloop_lag_p99_seconds'), max: read('nodejs_eventloop_lag_max_seconds') };
}

/** Closed-loop reads with `concurrency` callers for `ms`: requests per second. */
async function capacity(url: string, concurrency: number, ms: number): Promise<number> {
  const end = Date.now() + ms;
  let n = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < end) {
        await (await fetch(url)).arrayBuffer();
        n += 1;
      }
    }),
  );
  return (n * 1000) / ms;
}

export async function run(): Promise<void> {
  const minutes = arg('minutes', 10);
  const clients = arg('clients', 500);
  const name = `bench_soak_${process.pid}`;
  const databaseUrl = await freshDatabase(name);
  await migrate({ databaseUrl });
  build();
  const env = {
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    TENANT_ID: `bench-soak-${process.pid}`,
    API_PORT: '0',
    INDEXER_PORT: '0',
    API_HOST: '127.0.0.1',
    WS_MAX_CONNECTIONS_PER_IP: String(clients + 10),
    WS_MAX_CLIENTS: String(clients + 10),
    PUBLIC_READ_RATE_LIMIT_MAX_REQUESTS: '100000000',
    RATE_LIMIT_MAX_REQUESTS: '100000000',
  };
  // Both as the image runs them (the indexer with its semi-space size).
  const indexer = spawnImage('indexer', env, { args: ['--source', 'simulator', '--seed', '7', '--realtime', '--feeds', '2', '--no-progress'] });
  const api = spawnImage('api', env);
  const sockets: WebSocket[] = [];
  try {
    const [port] = await Promise.all([api.port, indexer.port]);
    const url = `http://127.0.0.1:${port}/api/v1/markets?limit=5`;
    const first = Math.floor(1_767_225_600 / 60);
    let updates = 0;
    let wsErrors = 0;
    for (let i = 0; i < clients; i++) {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`);
      await new Promise<void>((resolve, reject) => {
        ws.once('open', () => resolve());
        ws.once('error', reject);
      });
      ws.on('message', (d) => {
        if (d.toString().startsWith('{"type":"update"')) updates += 1;
      });
      ws.on('error', () => (wsErrors += 1));
      for (const ch of [`orderbook:${first + (i % 4)}`, `market:${first + (i % 4)}`]) ws.send(JSON.stringify({ type: 'subscribe', channel: ch }));
      sockets.push(ws);
    }
    const pid = api.child.pid!;
    const measured = await capacity(url, 16, 10_000);
    const rate = measured / 2;
    const rssStart = rssMb(pid);
    await eventLoopDelay(port); // starts the first sample's interval here
    const samples: { minute: number; rssMb: number; lagP99Ms: number; lagMaxMs: number }[] = [];
    let sent = 0;
    let errors = 0;
    const latencies: number[] = [];
    const inflight = new Set<Promise<void>>();
    const start = Date.now();
    const end = start + minutes * 60_000;
    // Open loop: a request every 1/rate s whatever the answers do, in 10 ms ticks.
    let nextSample = start + Math.min(60_000, (minutes * 60_000) / 4);
    while (Date.now() < end) {
      const due = Math.floor(((Date.now() - start) / 1000) * rate);
      while (sent < due) {
        sent += 1;
        const t0 = performance.now();
        const p = fetch(url)
          .then(async (r) => {
            await r.arrayBuffer();
            if (r.status !== 200) errors += 1;
            latencies.push(performance.now() - t0);
          })
          .catch(() => void (errors += 1))
          .finally(() => inflight.delete(p));
        inflight.add(p);
      }
      if (Date.now() >= nextSample) {
        nextSample += Math.min(60_000, (minutes * 60_000) / 4);
        const lag = await eventLoopDelay(port);
        samples.push({ minute: (Date.now() - start) / 60_000, rssMb: rssMb(pid), lagP99Ms: lag.p99, lagMaxMs: lag.max });
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    await Promise.all(inflight);
    const open = sockets.filter((s) => s.readyState === WebSocket.OPEN).length;
    const rssEnd = rssMb(pid);
    const out = {
      minutes,
      wsClients: clients,
      wsOpenAtEnd: open,
      wsErrors,
      updatesDelivered: updates,
      capacityRps: Math.round(measured),
      loadRps: Math.round(rate),
      requests: sent,
      errors,
      p50Ms: Math.round(pct(latencies, 50) * 10) / 10,
      p99Ms: Math.round(pct(latencies, 99) * 10) / 10,
      rssStartMb: Math.round(rssStart),
      rssEndMb: Math.round(rssEnd),
      rssGrowthMb: Math.round(rssEnd - rssStart),
      eventLoopP99MaxMs: Math.round(Math.max(...samples.map((s) => s.lagP99Ms)) * 10) / 10,
      eventLoopMaxMs: Math.round(Math.max(...samples.map((s) => s.lagMaxMs)) * 10) / 10,
    };
    console.table(samples.map((s) => ({ minute: s.minute.toFixed(1), rssMb: Math.round(s.rssMb), lagP99Ms: s.lagP99Ms.toFixed(1), lagMaxMs: s.lagMaxMs.toFixed(1) })));
    console.table([out]);
  } finally {
    sockets.forEach((s) => s.terminate());
    for (const c of [api.child, indexer.child]) c.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 200));
    await dropDatabase(name);
  }
}
