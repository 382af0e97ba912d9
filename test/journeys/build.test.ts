import { execFile, fork } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { existsSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { IMAGE } from '../../core/constants';
import { startTestApiServer } from '../../local/kube-apiserver/server';
import { createTestDatabase, type TestDatabase } from '../support/pg';
import { ROOT } from '../support/processes';
import { TEST_REDIS_URL, testTenant } from '../support/redis';

const run = promisify(execFile);

/** The production build (`npm run build`, the Dockerfile's build step) and its entry points under plain node. */
describe('npm run build → node dist/...', () => {
  let tdb: TestDatabase;
  beforeAll(async () => {
    tdb = await createTestDatabase({ migrated: false });
    await run('npm', ['run', 'build'], { cwd: ROOT });
  }, 120_000);
  afterAll(async () => {
    await tdb.drop();
  });

  /** A process as the image runs it: its command's node flags (the indexer's semi-space size) included. */
  const node = (command: readonly string[], args: string[], env: Record<string, string>) => {
    let out = '';
    const entry = command[command.length - 1]!;
    const child = fork(path.join(ROOT, entry), args, {
      cwd: ROOT,
      execArgv: command.slice(1, -1),
      env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    const port = new Promise<number>((resolve, reject) => {
      child.on('message', (m: { type?: string; port?: number }) => m?.type === 'listening' && resolve(m.port!));
      void exited.then((c) => reject(new Error(`${entry} exited ${c}: ${out}`)));
    });
    port.catch(() => {});
    return { child, exited, port, out: () => out };
  };

  it('runs the indexer (migrations from dist/db) and the API (docs from dist/api-reference) in production mode', async () => {
    // RPC_URL: /tx/* needs it in production; nothing here builds a transaction, so none listens.
    const env = { NODE_ENV: 'production', DATABASE_URL: tdb.url, REDIS_URL: TEST_REDIS_URL, RPC_URL: 'http://127.0.0.1:1', TENANT_ID: testTenant(), INDEXER_PORT: '0', API_PORT: '0', API_HOST: '127.0.0.1' };
    const indexer = node(IMAGE.commands.indexer, ['--source', 'simulator', '--until-slot', '120', '--no-progress'], env);
    expect(await indexer.exited).toBe(0);
    const api = node(IMAGE.commands.api, [], env);
    const base = `http://127.0.0.1:${await api.port}`;
    try {
      const status = (await (await fetch(`${base}/api/v1/status`)).json()) as { data: { lastProcessedSlot: string } };
      expect(status.data.lastProcessedSlot).toBe('120');
      expect((await fetch(`${base}/docs`)).status).toBe(200);
      expect(await (await fetch(`${base}/docs/openapi.yaml`)).text()).toContain('openapi: 3.0');
      // The helm test Pod's command, compiled, against the API as the image runs it.
      const check = await run(process.execPath, [IMAGE.commands.check.at(-1)!, '--url', base, '--variant', 'v1'], { cwd: ROOT });
      expect(check.stdout.trim().split('\n').at(-1)).toBe(`tenant API at ${base} (v1): every check passed`);
    } finally {
      api.child.kill('SIGTERM');
    }
    expect(await api.exited).toBe(0);
  }, 60_000);

  it('has every command the image runs, and the operator runs from dist/ against an API server', async () => {
    for (const [name, cmd] of Object.entries(IMAGE.commands)) expect([name, existsSync(path.join(ROOT, cmd[cmd.length - 1]!))]).toEqual([name, true]);
    const api = await startTestApiServer();
    const kubeconfig = path.join(os.tmpdir(), `build-test-${process.pid}.kubeconfig`);
    writeFileSync(kubeconfig, api.kubeconfig());
    const operator = node(IMAGE.commands.operator, ['--kubeconfig', kubeconfig], { NODE_ENV: 'production', OPERATOR_PORT: '0', API_HOST: '127.0.0.1' });
    try {
      const port = await operator.port;
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    } finally {
      operator.child.kill('SIGTERM');
      await operator.exited;
      await api.close();
    }
  }, 60_000);

  it('refuses in-memory stand-ins in production with one line unless ALLOW_EMBEDDED_STORES=true', async () => {
    const api = node(IMAGE.commands.api, [], { NODE_ENV: 'production', DATABASE_URL: tdb.url, API_PORT: '0' });
    expect(await api.exited).toBe(1);
    expect(api.out().trim()).toBe(
      'the API process in production needs REDIS_URL (nonces, rate limits and /ws limits would be per process); set ALLOW_EMBEDDED_STORES=true to run anyway',
    );
    const embedded = node(['node', 'dist/embedded/main.js'], [], { NODE_ENV: 'production' });
    expect(await embedded.exited).toBe(1);
    expect(embedded.out().trim()).toBe('npm start runs on embedded PostgreSQL and in-memory stores, which production refuses; set ALLOW_EMBEDDED_STORES=true to run anyway');
    const allowed = node(IMAGE.commands.api, [], { NODE_ENV: 'production', ALLOW_EMBEDDED_STORES: 'true', DATABASE_URL: tdb.url, RPC_URL: 'http://127.0.0.1:1', API_PORT: '0', API_HOST: '127.0.0.1' });
    await allowed.port;
    allowed.child.kill('SIGTERM');
    expect(await allowed.exited).toBe(0);
  }, 60_000);

  it('refuses to start in production without a setting its catalog entry requires: the API without RPC_URL, an rpc or webhook indexer too', async () => {
    const stores = { NODE_ENV: 'production', DATABASE_URL: tdb.url, REDIS_URL: TEST_REDIS_URL, API_PORT: '0', INDEXER_PORT: '0', API_HOST: '127.0.0.1' };
    const api = node(IMAGE.commands.api, [], stores);
    expect(await api.exited).toBe(1);
    expect(api.out().trim()).toMatch(/^the API process in production needs RPC_URL \(Solana JSON-RPC endpoint: .*\)$/);
    const indexer = node(IMAGE.commands.indexer, ['--source', 'rpc'], stores);
    expect(await indexer.exited).toBe(1);
    expect(indexer.out().trim()).toMatch(/^the indexer with --source rpc in production needs RPC_URL/);
    const webhook = node(IMAGE.commands.indexer, ['--source', 'webhook'], stores);
    expect(await webhook.exited).toBe(1);
    // A webhook indexer needs RPC_URL too: it fetches bodies and the chain tip over RPC (D-472, D-473).
    expect(webhook.out().trim()).toMatch(/^the indexer with --source webhook in production needs RPC_URL \(.*\); WEBHOOK_SECRET \(/);
  }, 60_000);
});
