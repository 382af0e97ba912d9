import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { call, type Json } from '../support/api';
import { startCommand } from '../support/doc-commands';
import { runGuideScript } from '../support/guide-script';
import { ROOT } from '../support/processes';
import { waitFor } from '../support/tables';
import { assertMatchesLegacyAsyncApi, WsClient } from '../support/ws';
import { createOpenApiChecker, OPENAPI_LEGACY_PATH } from '../support/openapi';

/** The README's run command: its first code line is `npm ci && npm start` (the install is the suite's own). */
function readmeRunCommand(): string[] {
  const first = /```bash\n([^\n]+)/.exec(readFileSync(path.join(ROOT, 'README.md'), 'utf8'))![1]!;
  const command = first.split('#')[0]!.trim();
  expect(command).toBe('npm ci && npm start');
  return ['npm', 'start'];
}

interface Started {
  child: ChildProcess;
  port: number;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output: () => string;
}

/** `npm start` with nothing but PATH, a free port and its own data folder: no DATABASE_URL, no REDIS_URL. */
async function start(dataDir: string, extraArgs: string[] = []): Promise<Started> {
  const [cmd, ...readmeArgs] = readmeRunCommand();
  const args = [...readmeArgs, ...(extraArgs.length ? ['--', ...extraArgs] : [])];
  // Its own process group, like a terminal's foreground job: signals go to npm and the service.
  const child = spawn(cmd!, args, {
    cwd: ROOT,
    detached: true,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? os.tmpdir(), API_PORT: '0', CHAIN_RPC_PORT: '0', API_HOST: '127.0.0.1', DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  // The banner names the URLs; the port is the one the OS picked.
  const port = await waitFor('the banner', async () => {
    const m = /REST API +http:\/\/localhost:(\d+)\/api\/v1/.exec(out);
    if (!m && child.exitCode !== null) throw new Error(`npm start exited: ${out}`);
    return m ? Number(m[1]) : undefined;
  }, 90_000);
  for (const line of ['WebSocket   ws://localhost:', 'API docs    http://localhost:', 'Metrics     http://localhost:', 'Chain RPC   http://localhost:', 'curl http://localhost:']) expect(out).toContain(line);
  return { child, port, exited, output: () => out };
}

const groupAlive = (pgid: number) => {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * SIGTERM to the process group, as a terminal (Ctrl-C), systemd or a container runtime sends
 * it. npm itself dies of the signal at once without waiting for its script (npm's own
 * behaviour), so the clean exit is read from the service: its last shutdown step prints
 * `market-indexer stopped`, and then every process of the group is gone within 10 s.
 */
async function stop(s: Started): Promise<void> {
  const t0 = Date.now();
  process.kill(-s.child.pid!, 'SIGTERM');
  await waitFor('the service to stop', async () => !groupAlive(s.child.pid!), 10_000);
  expect(Date.now() - t0).toBeLessThan(10_000);
  expect(s.output()).toMatch(/market-indexer stopped\n/);
  expect(s.output()).not.toMatch(/failed|Error/);
}

const run = promisify(execFile);
const CURSOR_SLOT_EVENTS = `
  const { PGlite } = require('@electric-sql/pglite');
  (async () => {
    const pg = await PGlite.create(process.argv[1]);
    const { rows } = await pg.query('SELECT count(*)::int AS n FROM raw_events WHERE slot = (SELECT last_processed_slot FROM indexer_cursor)');
    process.stdout.write(String(rows[0].n));
    await pg.close();
  })();`;

/** The chain's JSON-RPC, as any client calls it. */
async function rpc(url: string, method: string, params: unknown[] = []): Promise<Json> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return (await res.json()) as Json;
}

const metric = (text: string, name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? 'NaN');

describe('npm start: the whole service in one process with nothing installed', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'mi-embedded-'));
  const started: Started[] = [];
  afterAll(() => {
    // The whole group: killing npm alone would leave the service running after a failed test.
    for (const s of started) {
      try {
        process.kill(-s.child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  let closedMarket: Json | undefined;
  let slotBefore = 0;
  let cursorSlotEvents = 0;
  let traded: { placed: string; cancelled: string; slots: number[] } | undefined;

  it('serves live markets over REST and /ws, then exits cleanly on SIGTERM', async () => {
    const s = await start(dataDir);
    started.push(s);
    const base = `http://127.0.0.1:${s.port}`;
    await waitFor('/ready', async () => (await fetch(`${base}/ready`)).status === 200, 30_000);
    const current = await waitFor('a current market', async () => {
      const r = await call(`${base}/api/v1/markets/current`);
      return r.status === 200 ? r.body.data.market : undefined;
    });
    const ws = await WsClient.open(`ws://127.0.0.1:${s.port}/ws`);
    await ws.next((m) => m.type === 'connected');
    // The market after the current one opens within one epoch: both channels get updates then.
    const next = String(BigInt(current.marketId) + 1n);
    for (const id of [current.marketId, next]) {
      for (const kind of ['market', 'orderbook']) expect(await ws.request({ type: 'subscribe', channel: `${kind}:${id}` })).toMatchObject({ type: 'subscribed' });
    }
    const marketUpdate = await ws.next((m) => m.type === 'update' && m.channel.startsWith('market:'), 90_000);
    const bookUpdate = await ws.next((m) => m.type === 'update' && m.channel.startsWith('orderbook:'), 90_000);
    expect(marketUpdate.data.marketId).toBe(marketUpdate.channel.split(':')[1]);
    // A side with no orders is null (the first update of a book often has only one side).
    const { marketId, bestBid, bestAsk, ...rest } = bookUpdate.data;
    expect({ marketId, rest }).toEqual({ marketId: bookUpdate.channel.split(':')[1], rest: {} });
    for (const price of [bestBid, bestAsk]) expect(price === null || Number.isInteger(price)).toBe(true);
    ws.assertValid();

    // The banner's tail command, run as printed: its channels name a market that delivers.
    const tailLine = /^ {2}(npm run tail -- --port \d+ [^(]*?) {2,}\(/m.exec(s.output())!;
    expect(tailLine).not.toBeNull();
    const tail = startCommand(tailLine[1]!, { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? os.tmpdir() } });
    try {
      const update = await tail.waitForOutput(/^\{"type":"update","channel":"(?:orderbook|market):\d+".*$/m, 90_000);
      expect(JSON.parse(update).data.marketId).toMatch(/^\d+$/);
      expect(tail.output()).not.toContain('"type":"error"');
    } finally {
      await tail.stop();
    }

    // The banner's wallet command, run as printed: a wallet's order through /tx, signed with
    // @solana/kit, sent to the chain's RPC, indexed into /orders, then cancelled the same way.
    const walletLine = /^ {2}(npm run wallet -- trade --api \S+ --rpc (\S+))/m.exec(s.output())!;
    expect(walletLine).not.toBeNull();
    // The README's form of it leaves out the flags whose defaults are `npm start`'s own ports.
    const readme = /^ *(npm run wallet -- trade)\b/m.exec(readFileSync(path.join(ROOT, 'README.md'), 'utf8'))![1]!;
    expect(walletLine[1]!.replace(/ --api \S+ --rpc \S+$/, '')).toBe(readme);
    const help = (await run('npm', ['run', '--silent', 'wallet', '--', '--help'], { cwd: ROOT })).stdout;
    expect(help).toContain('--api URL        the tenant\'s API (default http://localhost:3000)');
    expect(help).toContain('--rpc URL        the chain\'s JSON-RPC (default http://localhost:8899)');
    const [cmd, ...args] = walletLine[1]!.split(' ');
    const trade = await run(cmd!, args, { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? os.tmpdir() }, timeout: 120_000 });
    expect(trade.stdout).toMatch(/indexed: order \d+ buy_yes at \d+ bps is open/);
    expect(trade.stdout).toMatch(/indexed: order \d+ is cancelled/);
    const placed = /place_order sent: (\w+)/.exec(trade.stdout)![1]!;
    const cancelled = /cancel_order sent: (\w+)/.exec(trade.stdout)![1]!;
    const chainUrl = walletLine[2]!.replace('localhost', '127.0.0.1');
    const slots = await Promise.all([placed, cancelled].map(async (sig) => (await rpc(chainUrl, 'getTransaction', [sig, { maxSupportedTransactionVersion: 0 }])).result.slot as number));
    traded = { placed, cancelled, slots };

    // docs/client.md's trade, as written: the same loop through the SDK (its check, its signing).
    execFileSync(process.execPath, [path.join(ROOT, 'client/build.mjs')], { stdio: 'pipe' });
    const guideTrade = await runGuideScript('A trade', 'trade.mjs', { API_URL: `http://localhost:${s.port}`, RPC_URL: walletLine[2]! }, 150_000);
    expect(guideTrade).toMatch(/^place_order sent: \w{64,88}$/m);
    expect(guideTrade).toMatch(new RegExp(`^indexed: order (\\d+) at \\d+ bps is open$[\\s\\S]*^cancel_order sent: \\w+$[\\s\\S]*^indexed: order \\d+ is cancelled$`, 'm'));

    // Remember a market whose trading is over (resolved or closed), and how far the indexer got.
    closedMarket = await waitFor('a market past trading', async () => {
      for (const state of [5, 4]) {
        const m = (await call(`${base}/api/v1/markets?state=${state}&limit=1`)).body.data.markets[0];
        if (m) return m as Json;
      }
      return undefined;
    }, 90_000);
    slotBefore = Number((await call(`${base}/api/v1/status`)).body.data.lastProcessedSlot);
    const closed = ws.closed;
    await stop(s);
    expect((await closed).code).toBe(1001);
    // What a restart will deliver again: the events of the cursor's own slot, read from the
    // stopped service's database files (PGlite in a child: it cannot load inside Jest's VM).
    const { stdout } = await run(process.execPath, ['-e', CURSOR_SLOT_EVENTS, path.join(dataDir, 'pglite')], { cwd: ROOT });
    cursorSlotEvents = Number(stdout.trim());
    expect(cursorSlotEvents).toBeGreaterThan(0);
  }, 420_000);

  it('resumes from its cursor on the same data folder without re-applying events', async () => {
    expect(closedMarket).toBeDefined();
    const s = await start(dataDir);
    started.push(s);
    const base = `http://127.0.0.1:${s.port}`;
    await waitFor('/ready', async () => (await fetch(`${base}/ready`)).status === 200, 30_000);
    const status = (await call(`${base}/api/v1/status`)).body.data;
    expect(Number(status.lastProcessedSlot)).toBeGreaterThanOrEqual(slotBefore);
    // Trading on that market is over, so its totals are what they were: nothing counted twice.
    const again = (await call(`${base}/api/v1/markets/${closedMarket!.address}`)).body.data.market;
    expect(Number(closedMarket!.totalTrades)).toBeGreaterThan(0);
    for (const k of ['totalVolume', 'totalTrades']) expect(again[k]).toEqual(closedMarket![k]);
    // The rebuilt chain ran the wallet's transactions again in the same slots (its journal).
    const chainUrl = /Chain RPC {3}(\S+)/.exec(s.output())![1]!.replace('localhost', '127.0.0.1');
    const slots = await Promise.all([traded!.placed, traded!.cancelled].map(async (sig) => (await rpc(chainUrl, 'getTransaction', [sig, { maxSupportedTransactionVersion: 0 }])).result?.slot));
    expect(slots).toEqual(traded!.slots);
    // Only the cursor's own slot is delivered again, and the ledger drops exactly its events.
    await waitFor('new slots', async () => Number((await call(`${base}/api/v1/status`)).body.data.lastProcessedSlot) > slotBefore);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metric(metrics, 'service_indexer_duplicate_events_total')).toBe(cursorSlotEvents);
    // No dead letter of any reason: the rebuilt chain agrees with what was indexed.
    expect(metrics).not.toMatch(/^service_indexer_dead_letters_total\{[^}]*\} [1-9]/m);
    await stop(s);
  }, 240_000);

  it('npm start -- --variant legacy shows the appendix variant: its banner, envelope, 404s and /ws form', async () => {
    const legacyDir = mkdtempSync(path.join(os.tmpdir(), 'mi-embedded-legacy-'));
    try {
      const s = await start(legacyDir, ['--variant', 'legacy']);
      started.push(s);
      expect(s.output()).toContain('(the spec appendix variant: API_VARIANT=legacy)');
      expect(s.output()).toContain('"channel":"market.update"');
      const base = `http://127.0.0.1:${s.port}`;
      const legacyContract = createOpenApiChecker(OPENAPI_LEGACY_PATH);
      const call = async (url: string) => {
        const res = await fetch(url);
        const body = (await res.json()) as Json;
        legacyContract.assertMatches('GET', url, res.status, res.headers.get('content-type'), body);
        return { status: res.status, body };
      };
      await waitFor('/ready', async () => (await fetch(`${base}/ready`)).status === 200, 30_000);
      const current = await waitFor('a current market', async () => {
        const r = await call(`${base}/api/v1/markets/current`);
        return r.status === 200 ? r.body : undefined;
      });
      expect(current).toMatchObject({ success: true, data: { marketId: expect.any(String) }, timestamp: expect.any(Number) });
      const v1Only = await call(`${base}/api/v1/status`);
      expect([v1Only.status, v1Only.body.success, v1Only.body.error?.code]).toEqual([404, false, 'NOT_FOUND']);
      const ws = await WsClient.open(`ws://127.0.0.1:${s.port}/ws`, {}, assertMatchesLegacyAsyncApi);
      await ws.next((m) => m.type === 'connected');
      expect(await ws.request({ type: 'subscribe', channel: 'market.update', marketId: current.data.marketId })).toMatchObject({
        type: 'subscribed',
        channel: `market:${current.data.marketId}`,
      });
      ws.assertValid();
      await stop(s);
    } finally {
      rmSync(legacyDir, { recursive: true, force: true });
    }
  }, 240_000);
});
