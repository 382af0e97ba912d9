import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** A port nothing listens on right now (the kernel's choice). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/**
 * A redis-server of the test's own, by default without persistence (`--save '' --appendonly no`), that the
 * test kills and restarts on the same port: what a restart without persistence does to the
 * service's Redis state. `start` resolves when the server says it accepts connections.
 */
export async function startRedisServer(args: readonly string[] = ['--save', '', '--appendonly', 'no']) {
  const port = await freePort();
  // Its files (an AOF, once a test turns it on) go to a folder of its own, removed on stop.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'test-redis-'));
  let child: ChildProcess | undefined;
  const start = () =>
    new Promise<void>((resolve, reject) => {
      const c = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, ...args, '--loglevel', 'notice'], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child = c;
      let out = '';
      c.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('Ready to accept connections')) resolve();
      });
      c.once('exit', (code) => reject(new Error(`redis-server exited (${code}) before it was ready: ${out.slice(-500)}`)));
    });
  const kill = async () => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const gone = new Promise<void>((r) => c.once('exit', () => r()));
    c.kill('SIGKILL');
    await gone;
  };
  await start();
  const stop = async () => {
    await kill();
    rmSync(dir, { recursive: true, force: true });
  };
  return { port, url: `redis://127.0.0.1:${port}`, kill, restart: async () => (await kill(), await start()), stop };
}
