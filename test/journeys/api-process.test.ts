import { fork } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { createDatabase } from '../../core/db';
import { switchLiveSchema } from '../../core/db/live-projection';
import { createProjectionSchema } from '../../core/db/projection-schema';
import { ROOT } from '../support/processes';
import { createTestDatabase } from '../support/pg';
import { waitFor } from '../support/tables';
import { rawGet } from '../support/raw-http';
import { TEST_REDIS_URL, testTenant } from '../support/redis';
import { WsClient } from '../support/ws';

/** The API entry point with stdout (its JSON log) kept. */
function apiWithLog(env: Record<string, string>) {
  const child = fork(path.join(ROOT, 'server/main.ts'), [], {
    cwd: ROOT,
    execArgv: ['--import', 'tsx'],
    env: { PATH: process.env.PATH ?? '', API_HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const port = new Promise<number>((resolve, reject) => {
    child.on('message', (m: { type?: string; port?: number }) => m?.type === 'listening' && resolve(m.port!));
    child.once('exit', (c) => reject(new Error(`exited ${c}: ${err}${out}`)));
  });
  port.catch(() => {});
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, port, exited, stdout: () => out, stderr: () => err };
}

describe('API process (real child process)', () => {
  it('on SIGTERM finishes the in-flight request, refuses new connections and exits 0', async () => {
    // A "database" that accepts connections and never answers keeps the request in flight. The
    // request's connection is the one the API's pool opens (its startup message names the pool's
    // application), not the session that listens for a switch of the live schema, nor the start
    // check's (market-indexer-start-check).
    let reached!: () => void;
    const inHandler = new Promise<void>((r) => (reached = r));
    const hang = net.createServer((socket) => {
      socket.once('data', (d) => {
        if (d.toString('latin1').includes('application_name\0market-indexer-api\0')) reached();
      });
    });
    await new Promise<void>((r) => hang.listen(0, '127.0.0.1', r));
    const child = fork(path.join(ROOT, 'server/main.ts'), [], {
      cwd: ROOT,
      execArgv: ['--import', 'tsx'],
      env: {
        PATH: process.env.PATH ?? '',
        LOG_LEVEL: 'warn',
        API_PORT: '0',
        API_HOST: '127.0.0.1',
        REQUEST_TIMEOUT_MS: '1500',
        DATABASE_URL: `postgres://postgres@127.0.0.1:${(hang.address() as net.AddressInfo).port}/none`,
      },
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    try {
      const port = await new Promise<number>((resolve, reject) => {
        child.on('message', (m: { type?: string; port?: number }) => m?.type === 'listening' && resolve(m.port!));
        child.once('exit', (c) => reject(new Error(`exited ${c}`)));
      });
      const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
      const inflight = fetch(`http://127.0.0.1:${port}/api/v1/markets/current`);
      await inHandler; // the handler is querying the (hung) database: the request is in flight
      const t0 = Date.now();
      child.kill('SIGTERM');
      const res = await inflight;
      expect(res.status).toBe(504);
      expect(await res.json()).toEqual({ error: 'Request took longer than 2 seconds', code: 'TIMEOUT' });
      await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
      expect(await exited).toBe(0);
      expect(Date.now() - t0).toBeLessThan(10_000);
    } finally {
      child.kill('SIGKILL');
      hang.close();
    }
  }, 30_000);

  it('answers a flood of malformed percent-encoding from one address with 400s, then 429s, and logs none of it', async () => {
    const tdb = await createTestDatabase();
    const api = apiWithLog({ DATABASE_URL: tdb.url, REDIS_URL: TEST_REDIS_URL, TENANT_ID: testTenant(), LOG_LEVEL: 'info', API_PORT: '0', RATE_LIMIT_MAX_REQUESTS: '10' });
    try {
      const port = await api.port;
      const flood = await Promise.all(Array.from({ length: 200 }, () => rawGet(port, '/api/v1/markets/%ff%fe', { localAddress: '127.0.0.2' })));
      const count = (status: number) => flood.filter((r) => r.status === status).length;
      expect([count(400), count(429)]).toEqual([10, 190]);
      expect(flood.find((r) => r.status === 400)!.json.code).toBe('INVALID_PARAMETER');
      // Another address has its own quota.
      expect((await rawGet(port, '/v2/referral/%E0%A4%A', { localAddress: '127.0.0.3' })).status).toBe(400);
      api.child.kill('SIGTERM');
      expect(await api.exited).toBe(0);
      // Only the process's own start and stop lines: nothing about the 201 refused requests.
      const lines = api.stdout().trim().split('\n').map((l) => JSON.parse(l) as { msg: string });
      expect(lines.filter((l) => !['api listening', 'shutting down'].includes(l.msg))).toEqual([]);
      expect(api.stdout()).not.toMatch(/stack|URIError/);
    } finally {
      api.child.kill('SIGKILL');
      await tdb.drop();
    }
  }, 30_000);

  it('reads through the live-schema pointer: ready once it has read it, then follows a switch, closing /ws with 4010 (D-333, D-410)', async () => {
    const tdb = await createTestDatabase();
    const database = createDatabase({ url: tdb.url, poolMax: 2 });
    // A built schema whose cursor says something the live one does not.
    await createProjectionSchema(database.db, 7);
    await database.db.none('UPDATE p7.indexer_cursor SET last_processed_slot = 777');
    const api = apiWithLog({ DATABASE_URL: tdb.url, REDIS_URL: TEST_REDIS_URL, TENANT_ID: testTenant(), LOG_LEVEL: 'info', API_PORT: '0' });
    try {
      const base = `http://127.0.0.1:${await api.port}`;
      await waitFor('/ready', async () => (await fetch(`${base}/ready`)).status === 200);
      const slot = async () => ((await (await fetch(`${base}/api/v1/status`)).json()) as { data: { lastProcessedSlot: string | null } }).data.lastProcessedSlot;
      expect(await slot()).toBe('0');
      const ws = await WsClient.open(`ws://127.0.0.1:${await api.port}/ws`);
      await ws.next((m) => m.type === 'connected');
      await switchLiveSchema(database.db, 'p7');
      expect((await ws.closed).code).toBe(4010);
      await waitFor('the switch followed', async () => (await slot()) === '777');
      api.child.kill('SIGTERM');
      expect(await api.exited).toBe(0);
      const lines = api.stdout().trim().split('\n').map((l) => JSON.parse(l) as { msg: string });
      expect(lines).toContainEqual(expect.objectContaining({ msg: 'live projection schema switched: reads now go to the new schema', from: 'public', to: 'p7' }));
      expect(lines).toContainEqual(expect.objectContaining({ msg: 'live projection schema switched: hot reads dropped, /ws clients closed with 4010', closed: 1 }));
    } finally {
      api.child.kill('SIGKILL');
      await database.close();
      await tdb.drop();
    }
  }, 30_000);

  it('listens on PORT when API_PORT is unset, and on API_PORT when both are set', async () => {
    // A port this test holds: a process that tries to listen on it fails, so where it listens is certain.
    const held = net.createServer();
    await new Promise<void>((r) => held.listen(0, '127.0.0.1', r));
    const heldPort = String((held.address() as net.AddressInfo).port);
    const env = { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none', LOG_LEVEL: 'info' };
    try {
      const onPort = apiWithLog({ ...env, PORT: heldPort });
      try {
        // It either fails to listen on PORT (exit 1) or listens somewhere else (it ignored PORT).
        const listening = onPort.port.then((port) => ({ port }), () => new Promise<never>(() => {}));
        expect(await Promise.race([onPort.exited.then((code) => ({ code })), listening])).toEqual({ code: 1 });
        expect(onPort.stdout()).toContain('EADDRINUSE');
      } finally {
        onPort.child.kill('SIGKILL');
      }
      const both = apiWithLog({ ...env, PORT: heldPort, API_PORT: '0' });
      try {
        expect(String(await both.port)).not.toBe(heldPort);
      } finally {
        both.child.kill('SIGTERM');
        expect(await both.exited).toBe(0);
      }
    } finally {
      held.close();
    }
  }, 30_000);

  it('names DATABASE_URL and REDIS_URL with their hosts, never their passwords, when they cannot be reached at start; stays up, not ready', async () => {
    const api = apiWithLog({
      API_PORT: '0',
      LOG_LEVEL: 'info',
      DATABASE_URL: 'postgres://app:db-secret@127.0.0.1:1/none',
      REDIS_URL: 'redis://:redis-secret@127.0.0.1:1',
    });
    try {
      const port = await api.port;
      // The log reaches the pipe on its own schedule: wait for the line the IPC message follows.
      await waitFor('"api listening" in the log', async () => api.stdout().includes('"msg":"api listening"'));
      const lines = () => api.stdout().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { level: string; msg: string; setting?: string });
      const msgs = lines().map((l) => l.msg);
      // Said before it listens, in one line naming the setting and where it points.
      const db = msgs.findIndex((m) => m.startsWith('DATABASE_URL (127.0.0.1:1) cannot be reached: connect ECONNREFUSED 127.0.0.1:1; /ready answers 503'));
      expect(db).toBeGreaterThanOrEqual(0);
      expect(db).toBeLessThan(msgs.indexOf('api listening'));
      expect(lines()[db]).toMatchObject({ level: 'error', setting: 'DATABASE_URL' });
      expect(msgs.find((m) => m.startsWith('REDIS_URL (127.0.0.1:1) cannot be reached: connect ECONNREFUSED 127.0.0.1:1; serving with per-process limits'))).toBeDefined();
      expect((await rawGet(port, '/ready')).status).toBe(503);
      expect(`${api.stdout()}${api.stderr()}`).not.toMatch(/db-secret|redis-secret/);
    } finally {
      api.child.kill('SIGTERM');
      await api.exited;
    }
  }, 30_000);

  it('stops with one clear line without DATABASE_URL', async () => {
    const child = fork(path.join(ROOT, 'server/main.ts'), [], {
      cwd: ROOT,
      execArgv: ['--import', 'tsx'],
      env: { PATH: process.env.PATH ?? '', API_PORT: '0' },
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    expect(code).toBe(1);
    expect(err.trim()).toBe('the API process needs DATABASE_URL (postgres://user@host:5432/dbname)');
  }, 30_000);
});
