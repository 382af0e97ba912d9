import { fork } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { ROOT } from '../support/processes';

describe('API process (real child process)', () => {
  it('on SIGTERM finishes the in-flight request, refuses new connections and exits 0', async () => {
    // A "database" that accepts connections and never answers keeps the request in flight.
    let reached!: () => void;
    const inHandler = new Promise<void>((r) => (reached = r));
    const hang = net.createServer(() => reached());
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
