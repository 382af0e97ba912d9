import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { WebSocketServer } from 'ws';
import { checkTenant, QUIET_MARKET_ID, type CheckResult } from '../../check/tenant-check';
import type { ApiVariant } from '../../core/config/settings';
import { createDatabase, type Database } from '../../core/db';
import { redisReady, type Redis } from '../../core/redis/client';
import { startApiServer } from '../../server/run';
import { createLiveStores } from '../../server/stores';
import { createApiServers } from '../support/api-servers';
import { freePort } from '../support/free-port';
import { testCommon } from '../support/common';
import { projectionDb, simulate, type ProjectionDb } from '../support/indexer';
import { createTestDatabase, type TestDatabase } from '../support/pg';
import { connectRedis, testTenant } from '../support/redis';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');
const TIMEOUT_MS = 5_000;

/** What `helm test` and a local tenant runner run: check/tenant-check.ts against real API processes (PostgreSQL, Redis). */
describe('the tenant check (check/): /ready, one public read, one /ws subscription', () => {
  let pdb: ProjectionDb;
  const stops: (() => Promise<void>)[] = [];
  const redisClients: Redis[] = [];
  const urls: Partial<Record<ApiVariant, string>> = {};

  /** An API process as server/run.ts wires it (HTTP and /ws, its own Redis connection), serving `variant`. */
  async function startApi(db: Database, variant: ApiVariant): Promise<string> {
    const common = testCommon({ TENANT_ID: testTenant(), API_PORT: '0', API_HOST: '127.0.0.1', API_VARIANT: variant });
    const redis = connectRedis();
    await redisReady(redis, 5_000);
    redisClients.push(redis);
    const live = createLiveStores(common, redis);
    common.shutdown.add('live', () => live.close());
    const { port } = await startApiServer({ common, db: db.db, redis, live, busCarriesIndexer: true, docs: false });
    stops.push(() => common.shutdown.run('test over'));
    return `http://127.0.0.1:${port}`;
  }

  beforeAll(async () => {
    pdb = await projectionDb();
    // A simulated chain's first markets, so the read returns some.
    await pdb.apply(simulate(400).txs);
    urls.v1 = await startApi(pdb.database, 'v1');
    urls.legacy = await startApi(pdb.database, 'legacy');
  });
  afterAll(async () => {
    for (const stop of stops) await stop();
    for (const r of redisClients) r.disconnect();
    await pdb.close();
  });

  const stepsOf = (r: CheckResult) => Object.fromEntries(r.steps.map((s) => [s.name, s]));

  it.each(['v1', 'legacy'] as const)('passes against a %s API, every step named and explained', async (variant) => {
    const result = await checkTenant({ baseUrl: urls[variant]!, variant, timeoutMs: TIMEOUT_MS });
    expect(result.steps.map((s) => [s.name, s.ok])).toEqual([
      ['ready', true],
      ['read', true],
      ['ws', true],
    ]);
    expect(result.ok).toBe(true);
    const steps = stepsOf(result);
    expect(steps.ready!.detail).toMatch(/^GET \/ready → 200 \{"ready":true/);
    expect(steps.read!.detail).toMatch(/^GET \/api\/v1\/markets\?limit=1 → 200, 1 market\(s\)/);
    expect(steps.ws!.detail).toBe(`/ws: connected, subscribed, unsubscribed (market:${QUIET_MARKET_ID}), nothing else`);
  });

  it('fails the read and the subscription, saying why, when the tenant serves the other variant', async () => {
    const result = await checkTenant({ baseUrl: urls.v1!, variant: 'legacy', timeoutMs: TIMEOUT_MS });
    expect(result.ok).toBe(false);
    const steps = stepsOf(result);
    expect(steps.ready!.ok).toBe(true);
    expect([steps.read!.ok, steps.read!.detail]).toEqual([false, expect.stringContaining('but not an appendix-variant market list')]);
    // A v1 server refuses the appendix's subscribe form with an error frame (its channel is not a v1 channel).
    expect([steps.ws!.ok, steps.ws!.detail]).toEqual([false, expect.stringMatching(/^\/ws: expected \{"type":"subscribed","channel":"market:\d+"\}, got \{"type":"error"/)]);
    const reverse = stepsOf(await checkTenant({ baseUrl: urls.legacy!, variant: 'v1', timeoutMs: TIMEOUT_MS }));
    expect([reverse.read!.ok, reverse.read!.detail]).toEqual([false, expect.stringContaining('but not a v1 market list')]);
    expect(reverse.ws!.ok).toBe(false);
  });

  it('fails at ready (503) and at read when the API cannot reach its database', async () => {
    const down = createDatabase({ url: 'postgres://postgres@127.0.0.1:1/none', poolMax: 1 });
    try {
      const url = await startApi(down, 'v1');
      const steps = stepsOf(await checkTenant({ baseUrl: url, variant: 'v1', timeoutMs: TIMEOUT_MS }));
      expect([steps.ready!.ok, steps.ready!.detail]).toEqual([false, 'GET /ready → 503 {"ready":false,"dbConnected":false,"indexerRunning":false}']);
      expect([steps.read!.ok, steps.read!.detail]).toEqual([false, expect.stringMatching(/^GET \/api\/v1\/markets\?limit=1 → 5\d\d /)]);
    } finally {
      await stops.pop()!();
      void down.close();
    }
  });

  it('fails at read alone when the API is ready but its read fails', async () => {
    // Ready needs the database and the indexer's cursor table; the markets table is gone.
    const tdb: TestDatabase = await createTestDatabase();
    const db = createDatabase({ url: tdb.url, poolMax: 2 });
    try {
      await db.db.none('ALTER TABLE markets RENAME TO markets_gone');
      const url = await startApi(db, 'legacy');
      const result = await checkTenant({ baseUrl: url, variant: 'legacy', timeoutMs: TIMEOUT_MS });
      expect(result.steps.map((s) => [s.name, s.ok])).toEqual([
        ['ready', true],
        ['read', false],
        ['ws', true],
      ]);
      expect(stepsOf(result).read!.detail).toMatch(/^GET \/api\/v1\/markets\?limit=1 → 500 \{"success":false/);
    } finally {
      await stops.pop()!();
      await db.close();
      await tdb.drop();
    }
  });

  it('fails at ws when the API serves no /ws (an app without the WebSocket server)', async () => {
    const servers = createApiServers();
    try {
      const url = await servers.start(testCommon({ TENANT_ID: testTenant() }), pdb.database.db);
      const steps = stepsOf(await checkTenant({ baseUrl: url, variant: 'v1', timeoutMs: TIMEOUT_MS }));
      expect([steps.ready!.ok, steps.read!.ok]).toEqual([true, true]);
      expect([steps.ws!.ok, steps.ws!.detail]).toEqual([false, 'Unexpected server response: 404']);
    } finally {
      await servers.closeAll();
    }
  });

  it('fails every step with the connection error when nothing listens', async () => {
    const result = await checkTenant({ baseUrl: `http://127.0.0.1:${await freePort()}`, variant: 'v1', timeoutMs: TIMEOUT_MS });
    expect(result.steps.map((s) => [s.name, s.ok, s.detail])).toEqual([
      ['ready', false, 'fetch failed: ECONNREFUSED'],
      ['read', false, 'fetch failed: ECONNREFUSED'],
      ['ws', false, expect.stringContaining('ECONNREFUSED')],
    ]);
  });

  describe('a /ws that says more than it should (a stand-in server: the real one never does)', () => {
    /** Answers like the API, plus `extra` frames right after `subscribed`. */
    async function streamServer(extra: object[]): Promise<{ url: string; close(): Promise<void> }> {
      const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, path: '/ws' });
      await new Promise((r) => wss.once('listening', r));
      wss.on('connection', (ws) => {
        ws.send(JSON.stringify({ type: 'connected', message: 'Connected to the market stream', timestamp: Date.now() }));
        ws.on('message', (data) => {
          const m = JSON.parse(data.toString()) as { type: string; channel: string };
          if (m.type === 'subscribe') {
            ws.send(JSON.stringify({ type: 'subscribed', channel: m.channel }));
            for (const f of extra) ws.send(JSON.stringify(f));
          } else ws.send(JSON.stringify({ type: 'unsubscribed', channel: m.channel }));
        });
      });
      return { url: `http://127.0.0.1:${(wss.address() as { port: number }).port}`, close: () => new Promise((r) => wss.close(() => r())) };
    }

    it('fails when an update arrives between subscribed and unsubscribed, naming it', async () => {
      const update = { type: 'update', channel: `market:${QUIET_MARKET_ID}`, seq: 1, slot: 1, data: {} };
      const noisy = await streamServer([update]);
      try {
        const ws = stepsOf(await checkTenant({ baseUrl: noisy.url, variant: 'v1', timeoutMs: TIMEOUT_MS })).ws!;
        expect([ws.ok, ws.detail]).toEqual([false, `/ws: expected {"type":"unsubscribed","channel":"market:${QUIET_MARKET_ID}"}, got ${JSON.stringify(update)}`]);
      } finally {
        await noisy.close();
      }
      const quiet = await streamServer([]);
      try {
        expect(stepsOf(await checkTenant({ baseUrl: quiet.url, variant: 'v1', timeoutMs: TIMEOUT_MS })).ws!.ok).toBe(true);
      } finally {
        await quiet.close();
      }
    });
  });

  describe('its command (IMAGE.commands.check), as the helm test Pod runs it', () => {
    const cli = async (args: string[]) => {
      try {
        const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', path.join(ROOT, 'check/main.ts'), ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? '' } });
        return { code: 0, stdout, stderr };
      } catch (err) {
        const e = err as { code: number; stdout: string; stderr: string };
        return { code: e.code, stdout: e.stdout, stderr: e.stderr };
      }
    };

    it('prints every step and exits 0 when all pass, 1 when one fails, 2 on a usage error', async () => {
      const passed = await cli(['--url', urls.legacy!, '--variant', 'legacy']);
      expect(passed.code).toBe(0);
      const lines = passed.stdout.trim().split('\n');
      expect(lines.map((l) => l.slice(0, 11))).toEqual(['ok    ready', 'ok    read ', 'ok    ws   ', 'tenant API ']);
      expect(lines.at(-1)).toBe(`tenant API at ${urls.legacy} (legacy): every check passed`);

      const failed = await cli(['--url', urls.v1!, '--variant', 'legacy', '--timeout-ms', '3000']);
      expect(failed.code).toBe(1);
      expect(failed.stdout.split('\n').map((l) => l.slice(0, 11))).toEqual(['ok    ready', 'FAIL  read ', 'FAIL  ws   ', 'tenant API ', '']);

      const usage = await cli(['--url', urls.v1!, '--variant', 'v2']);
      expect([usage.code, usage.stderr.split('\n')[0]]).toEqual([2, '--variant must be one of v1, legacy (got v2)']);
      expect((await cli(['--variant', 'v1'])).stderr.split('\n')[0]).toBe('--url must be an http(s) origin (got nothing)');
    });
  });
});
