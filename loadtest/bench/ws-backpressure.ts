import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import WebSocket from 'ws';
import { WS_LIMITS } from '../../core/limits';
import { migrate } from '../../core/db/migrate';
import { createRedis, redisReady, type Redis } from '../../core/redis/client';
import { createKeys } from '../../core/redis/keys';
import { createRedisUpdateLog } from '../../core/redis/updates';
import { METRICS } from '../../core/telemetry/metrics';
import { build, dropDatabase, freshDatabase, pct, REDIS_URL, spawnImage } from './support';

/**
 * The slow-consumer rule of spec 8, exercised for real (decision D-97): healthy subscribers
 * read everything; stalled ones stop reading at the socket level (a raw TCP WebSocket client
 * that pauses its socket, so the kernel buffers fill and the server's send buffer grows). The
 * stalled ones also subscribe to a filler channel of large updates, so their buffers fill in
 * seconds rather than minutes. Once the server has closed them, they read again and find the
 * close frame. Shared by `npm run bench -- ws-backpressure` and test/e2e/ws-backpressure.test.ts.
 */

export const MAIN_CHANNEL = 'orderbook:1';
export const FILLER_CHANNEL = 'market:1';
const FILLER_BYTES = 32 * 1024;
const FILLER_RATE = 50;

const now = () => performance.timeOrigin + performance.now();

/**
 * A WebSocket client on a bare TCP socket that can stop reading: `stall()` pauses the socket
 * (nothing is read from the kernel any more); `resume()` reads again and resolves with the
 * server's close frame (code and reason), or 1006 when the connection ended without one.
 */
export class StalledClient {
  private socket!: net.Socket;
  private buf = Buffer.alloc(0);
  private closeFrame: Promise<{ code: number; reason: string }>;
  private settle!: (c: { code: number; reason: string }) => void;

  constructor(private readonly url: string) {
    this.closeFrame = new Promise((r) => (this.settle = r));
  }

  async open(channels: string[]): Promise<void> {
    const u = new URL(this.url);
    this.socket = net.connect(Number(u.port), u.hostname);
    await new Promise<void>((resolve, reject) => {
      this.socket.once('connect', resolve);
      this.socket.once('error', reject);
    });
    this.socket.on('error', () => undefined);
    this.socket.on('close', () => this.settle({ code: 1006, reason: '' }));
    const key = randomBytes(16).toString('base64');
    this.socket.write(`GET ${u.pathname} HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`);
    let head = '';
    await new Promise<void>((resolve, reject) => {
      const onData = (d: Buffer) => {
        this.buf = Buffer.concat([this.buf, d]);
        const end = this.buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        head = this.buf.subarray(0, end).toString('latin1');
        this.buf = this.buf.subarray(end + 4);
        this.socket.off('data', onData);
        if (head.startsWith('HTTP/1.1 101')) resolve();
        else reject(new Error(`upgrade refused: ${head.split('\r\n')[0]}`));
      };
      this.socket.on('data', onData);
    });
    // Subscribed to every channel (answered in order) before it stalls.
    const subscribed = this.frames((text) => text.includes('"type":"subscribed"'), channels.length);
    for (const channel of channels) this.send(JSON.stringify({ type: 'subscribe', channel }));
    await subscribed;
  }

  /** Stops reading at the socket level. */
  stall(): void {
    this.socket.removeAllListeners('data');
    this.socket.pause();
  }

  /** Reads again (discarding the backlog) until the close frame. */
  resume(): Promise<{ code: number; reason: string }> {
    this.socket.on('data', (d: Buffer) => {
      this.buf = Buffer.concat([this.buf, d]);
      this.parse((opcode, payload) => {
        if (opcode === 0x8) this.settle({ code: payload.length >= 2 ? payload.readUInt16BE(0) : 1005, reason: payload.subarray(2).toString('utf8') });
      });
    });
    this.socket.resume();
    return this.closeFrame;
  }

  destroy(): void {
    this.socket.destroy();
  }

  private send(text: string): void {
    const payload = Buffer.from(text);
    const mask = randomBytes(4);
    const len = payload.length;
    const header = len < 126 ? Buffer.from([0x81, 0x80 | len]) : Buffer.from([0x81, 0x80 | 126, len >> 8, len & 255]);
    for (let i = 0; i < len; i++) payload[i]! ^= mask[i % 4]!;
    this.socket.write(Buffer.concat([header, mask, payload]));
  }

  /** Resolves after `n` text frames `match` accepts. */
  private frames(match: (text: string) => boolean, n: number): Promise<void> {
    let seen = 0;
    return new Promise((resolve) => {
      const onData = (d?: Buffer) => {
        if (d) this.buf = Buffer.concat([this.buf, d]);
        this.parse((opcode, payload) => {
          if (opcode === 0x1 && match(payload.toString('utf8'))) seen += 1;
        });
        if (seen >= n) {
          this.socket.off('data', onData);
          resolve();
        }
      };
      this.socket.on('data', onData);
      onData();
    });
  }

  /** Consumes the complete (unmasked, unfragmented) server frames in the buffer. */
  private parse(each: (opcode: number, payload: Buffer) => void): void {
    for (;;) {
      if (this.buf.length < 2) return;
      const opcode = this.buf[0]! & 0x0f;
      let len = this.buf[1]! & 0x7f;
      let off = 2;
      if (len === 126) {
        if (this.buf.length < 4) return;
        len = this.buf.readUInt16BE(2);
        off = 4;
      } else if (len === 127) {
        if (this.buf.length < 10) return;
        len = Number(this.buf.readBigUInt64BE(2));
        off = 10;
      }
      if (this.buf.length < off + len) return;
      each(opcode, this.buf.subarray(off, off + len));
      this.buf = this.buf.subarray(off + len);
    }
  }
}

/** A reading subscriber: records, per seq of the main channel, when it arrived (and repeats). */
export class HealthyClient {
  seqs: number[] = [];
  at: number[] = [];
  ws!: WebSocket;
  closed: number | undefined;

  async open(url: string): Promise<void> {
    this.ws = new WebSocket(url, { perMessageDeflate: false });
    await new Promise<void>((resolve, reject) => {
      this.ws.once('open', resolve);
      this.ws.once('error', reject);
    });
    this.ws.on('close', (code) => (this.closed = code));
    const subscribed = new Promise<void>((resolve) => this.ws.on('message', (d: Buffer) => d.toString().includes('"subscribed"') && resolve()));
    this.ws.on('message', (data: Buffer) => {
      const t = now();
      // The seq without a full JSON.parse: the receiving side must not be the bottleneck.
      const s = data.toString('latin1');
      if (!s.startsWith('{"type":"update"')) return;
      const i = s.indexOf('"seq":');
      this.seqs.push(Number.parseInt(s.slice(i + 6), 10));
      this.at.push(t);
    });
    this.ws.send(JSON.stringify({ type: 'subscribe', channel: MAIN_CHANNEL }));
    await subscribed;
  }
}

export type HealthyReport = { received: number; missing: number; disordered: number; closed: number | undefined };

/** Reading subscribers (in this process; the interface leaves room for spreading them out). */
export interface Readers {
  open(url: string, count: number): Promise<void>;
  /** Total updates received so far. */
  received(): Promise<number>;
  /** Per client, against seqs 1..published; plus every delivery's latency from `sent` (seq → publish time). */
  report(published: number, sent: [number, number][]): Promise<{ clients: HealthyReport[]; latenciesMs: number[] }>;
  close(): void;
}

export function summarize(c: HealthyClient, published: number, sent: Map<number, number>): { report: HealthyReport; latenciesMs: number[] } {
  let disordered = 0;
  for (let i = 0; i < c.seqs.length; i++) if (c.seqs[i] !== i + 1) disordered += 1;
  const latenciesMs: number[] = [];
  c.seqs.forEach((s, i) => {
    const t = sent.get(s);
    if (t !== undefined) latenciesMs.push(c.at[i]! - t);
  });
  return { report: { received: c.seqs.length, missing: Math.max(0, published - new Set(c.seqs).size), disordered, closed: c.closed }, latenciesMs };
}

export function localReaders(): Readers {
  const clients: HealthyClient[] = [];
  return {
    async open(url, count) {
      for (let i = 0; i < count; i += 50) {
        const batch = Array.from({ length: Math.min(50, count - i) }, () => new HealthyClient());
        await Promise.all(batch.map((c) => c.open(url)));
        clients.push(...batch);
      }
    },
    received: async () => clients.reduce((n, c) => n + c.seqs.length, 0),
    async report(published, sent) {
      const map = new Map(sent);
      const parts = clients.map((c) => summarize(c, published, map));
      return { clients: parts.map((p) => p.report), latenciesMs: parts.flatMap((p) => p.latenciesMs) };
    },
    close: () => clients.forEach((c) => c.ws.terminate()),
  };
}

export interface BackpressureOptions {
  wsUrl: string;
  /** The API's /metrics URL (when the server gave up on the stalled clients). */
  metricsUrl: string;
  redis: Redis;
  tenant: string;
  healthy: number;
  /** Where the healthy subscribers run (this process by default). */
  readers?: Readers;
  stalled: number;
  /** Main-channel updates per second, for at least `seconds`. */
  rate: number;
  seconds: number;
  /** Bound on waiting for the server to close the stalled clients. */
  stallTimeoutMs?: number;
  /** Sampled while updates flow (server RSS, MB). */
  sample?: () => void;
}

export interface BackpressureResult {
  published: number;
  /** Per healthy client: updates missing, out of order or repeated (seq must be 1..published). */
  healthy: HealthyReport[];
  stalled: { code: number; reason: string }[];
  /** From the server's own metrics. */
  skipped: number;
  backpressureCloses: number;
  latenciesMs: number[];
}

async function counter(metricsUrl: string, name: string): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+]+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

export async function runBackpressure(o: BackpressureOptions): Promise<BackpressureResult> {
  const log = createRedisUpdateLog({ redis: o.redis, keys: createKeys(o.tenant) });
  const readers = o.readers ?? localReaders();
  const stalled = Array.from({ length: o.stalled }, () => new StalledClient(o.wsUrl));
  await readers.open(o.wsUrl, o.healthy);
  await Promise.all(stalled.map((c) => c.open([MAIN_CHANNEL, FILLER_CHANNEL])));
  stalled.forEach((c) => c.stall());
  const closes0 = await counter(o.metricsUrl, METRICS.wsBackpressureCloses.name);
  const skipped0 = await counter(o.metricsUrl, METRICS.wsMessagesSkipped.name);

  const sent = new Map<number, number>();
  let seq = 0;
  let filler = 0;
  let stallersClosed = false;
  const pad = 'x'.repeat(FILLER_BYTES);
  const start = now();
  const closes: Promise<{ code: number; reason: string }>[] = [];
  // Whether the server has given up on every stalled client, from its own counter (polled apart
  // from publishing, so a slow /metrics does not slow the updates).
  const watcher = setInterval(() => {
    void counter(o.metricsUrl, METRICS.wsBackpressureCloses.name).then((n) => {
      if (stallersClosed || n - closes0 < o.stalled) return;
      stallersClosed = true;
      // Read again at once: the close frame waits behind the backlog until the server cuts the connection.
      closes.push(...stalled.map((c) => c.resume()));
    }, () => undefined);
  }, 100);
  // Updates are due by the clock (a tick that finds the previous append unfinished catches up
  // on the next); the filler flows until the server has closed every stalled client.
  await new Promise<void>((resolve, reject) => {
    let busy = false;
    const tick = setInterval(() => {
      const elapsed = now() - start;
      if (elapsed >= o.seconds * 1000 && stallersClosed) {
        clearInterval(tick);
        return resolve();
      }
      if (!stallersClosed && elapsed > (o.stallTimeoutMs ?? 60_000)) {
        clearInterval(tick);
        return reject(new Error(`the server did not close the ${o.stalled} stalled clients in ${o.stallTimeoutMs ?? 60_000} ms`));
      }
      if (busy) return;
      busy = true;
      o.sample?.();
      const updates: { channel: string; slot: number; data: Record<string, unknown> }[] = [];
      for (const due = Math.floor((elapsed * o.rate) / 1000); seq < due; ) {
        seq += 1;
        sent.set(seq, now());
        updates.push({ channel: MAIN_CHANNEL, slot: seq, data: { marketId: '1', bestBid: 4000 + (seq % 1000), bestAsk: 6000 } });
      }
      if (!stallersClosed) {
        for (const due = Math.floor((elapsed * FILLER_RATE) / 1000); filler < due; ) updates.push({ channel: FILLER_CHANNEL, slot: ++filler, data: { marketId: '1', field: 'pad', value: pad } });
      }
      (updates.length ? log.append(updates) : Promise.resolve())
        .catch((err: unknown) => {
          clearInterval(tick);
          reject(err as Error);
        })
        .finally(() => (busy = false));
    }, 10);
  }).finally(() => clearInterval(watcher));
  const published = seq;
  // Every healthy client has every update, or 10 s passed without progress.
  let progress = -1;
  let idleSince = now();
  for (;;) {
    const received = await readers.received();
    if (received >= published * o.healthy) break;
    if (received !== progress) {
      progress = received;
      idleSince = now();
    } else if (now() - idleSince > 10_000) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const stalledCloses = await Promise.all(closes);
  const report = await readers.report(published, [...sent]);
  const result: BackpressureResult = {
    published,
    healthy: report.clients,
    stalled: stalledCloses,
    skipped: (await counter(o.metricsUrl, METRICS.wsMessagesSkipped.name)) - skipped0,
    backpressureCloses: (await counter(o.metricsUrl, METRICS.wsBackpressureCloses.name)) - closes0,
    latenciesMs: report.latenciesMs,
  };
  readers.close();
  stalled.forEach((c) => c.destroy());
  return result;
}

const rssMb = (pid: number) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
};

/** `npm run bench -- ws-backpressure`: 1,000 subscribers (1 % stalled), 100 updates/s; figures printed, not asserted. */
export async function run(): Promise<void> {
  const SUBSCRIBERS = Number(process.env.BENCH_CLIENTS ?? 1_000);
  const STALLED = Number(process.env.BENCH_STALLED ?? 10);
  const RATE = Number(process.env.BENCH_RATE ?? 100);
  const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
  const name = `bench_wsbp_${process.pid}`;
  const databaseUrl = await freshDatabase(name);
  await migrate({ databaseUrl });
  const tenant = `bench-wsbp-${process.pid}`;
  const redis = createRedis(REDIS_URL);
  await redisReady(redis);
  build();
  const api = spawnImage('api', {
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    TENANT_ID: tenant,
    API_PORT: '0',
    API_HOST: '127.0.0.1',
    WS_MAX_CONNECTIONS_PER_IP: String(SUBSCRIBERS + 10),
    WS_MAX_CLIENTS: String(SUBSCRIBERS + 10),
  });
  try {
    const port = await api.port;
    const pid = api.child.pid!;
    const idle = rssMb(pid);
    let peak = idle;
    const r = await runBackpressure({
      wsUrl: `ws://127.0.0.1:${port}/ws`,
      metricsUrl: `http://127.0.0.1:${port}/metrics`,
      redis,
      tenant,
      healthy: SUBSCRIBERS - STALLED,
      stalled: STALLED,
      rate: RATE,
      seconds: SECONDS,
      sample: () => (peak = Math.max(peak, rssMb(pid))),
    });
    const complete = r.healthy.filter((h) => h.missing === 0 && h.disordered === 0).length;
    const fmt = (n: number, d = 1) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
    process.stdout.write(
      [
        '',
        `WebSocket backpressure (${new Date().toISOString()}; API from dist/ under node; clients and publisher in the bench process)`,
        `subscribers ${SUBSCRIBERS} (${SUBSCRIBERS - STALLED} reading, ${STALLED} stalled at the socket), ${RATE} updates/s for ${fmt(SECONDS, 0)} s+, ${r.published} published`,
        `stalled clients closed: ${r.stalled.filter((s) => s.code === 1008).length}/${STALLED} with 1008 (codes ${[...new Set(r.stalled.map((s) => s.code))].join(', ')}); server skipped ${r.skipped} updates (${WS_LIMITS.maxSkips} consecutive per close), ${r.backpressureCloses} backpressure closes`,
        `reading clients with every update in seq order: ${complete}/${r.healthy.length}`,
        `delivery latency, publish to receipt (ms): p50 ${fmt(pct(r.latenciesMs, 50))}  p99 ${fmt(pct(r.latenciesMs, 99))}  max ${fmt(r.latenciesMs.reduce((a, b) => Math.max(a, b), 0))}`,
        `API process RSS (MB): ${fmt(idle)} with ${SUBSCRIBERS} connected and idle, peak ${fmt(peak)} while updates flowed`,
        '',
      ].join('\n'),
    );
  } finally {
    api.child.kill('SIGKILL');
    const keys = await redis.keys(`${createKeys(tenant).prefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
    await dropDatabase(name);
  }
}
