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

  const node = (entry: string, args: string[], env: Record<string, string>) => {
    let out = '';
    const child = fork(path.join(ROOT, entry), args, { cwd: ROOT, env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
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
    const env = { NODE_ENV: 'production', DATABASE_URL: tdb.url, REDIS_URL: TEST_REDIS_URL, TENANT_ID: testTenant(), INDEXER_PORT: '0', API_PORT: '0', API_HOST: '127.0.0.1' };
    const indexer = node('dist/indexer/main.js', ['--source', 'simulator', '--until-slot', '120', '--no-progress'], env);
    expect(await indexer.exited).toBe(0);
    const api = node('dist/server/main.js', [], env);
    const base = `http://127.0.0.1:${await api.port}`;
    try {
      const status = (await (await fetch(`${base}/api/v1/status`)).json()) as { data: { lastProcessedSlot: string } };
      expect(status.data.lastProcessedSlot).toBe('120');
      expect((await fetch(`${base}/docs`)).status).toBe(200);
      expect(await (await fetch(`${base}/docs/openapi.yaml`)).text()).toContain('openapi: 3.0');
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
    const operator = node(IMAGE.commands.operator[IMAGE.commands.operator.length - 1]!, ['--kubeconfig', kubeconfig], { NODE_ENV: 'production', OPERATOR_PORT: '0', API_HOST: '127.0.0.1' });
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
    const api = node('dist/server/main.js', [], { NODE_ENV: 'production', DATABASE_URL: tdb.url, API_PORT: '0' });
    expect(await api.exited).toBe(1);
    expect(api.out().trim()).toBe(
      'the API process in production needs REDIS_URL (nonces, rate limits and /ws limits would be per process); set ALLOW_EMBEDDED_STORES=true to run anyway',
    );
    const embedded = node('dist/embedded/main.js', [], { NODE_ENV: 'production' });
    expect(await embedded.exited).toBe(1);
    expect(embedded.out().trim()).toBe('npm start runs on embedded PostgreSQL and in-memory stores, which production refuses; set ALLOW_EMBEDDED_STORES=true to run anyway');
    const allowed = node('dist/server/main.js', [], { NODE_ENV: 'production', ALLOW_EMBEDDED_STORES: 'true', DATABASE_URL: tdb.url, API_PORT: '0', API_HOST: '127.0.0.1' });
    await allowed.port;
    allowed.child.kill('SIGTERM');
    expect(await allowed.exited).toBe(0);
  }, 60_000);
});
