import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { dropDatabase } from '../../local/tenant/stores';
import { ADMIN_DATABASE_URL } from '../support/env';
import { eventually } from './support';

const ROOT = path.resolve(__dirname, '../..');

/**
 * The README's command, run as written: `npm run tenant -- up --env staging --tenant alpha`
 * brings the tenant up on the default ports, prints what to open, passes `helm test`'s check,
 * and Ctrl-C (SIGINT to the process group, as a terminal sends it) stops every process it started.
 */
describe('npm run tenant, as the README gives it', () => {
  afterAll(() => dropDatabase(ADMIN_DATABASE_URL, 'mi_staging_alpha'));

  it('comes up, says where everything is, and stops on Ctrl-C', async () => {
    const line = /^npm run tenant -- up --env staging --tenant alpha$/m.exec(readFileSync(path.join(ROOT, 'README.md'), 'utf8'));
    expect(line).not.toBeNull();
    const [cmd, ...args] = line![0].split(' ');
    const child = spawn(cmd!, [...args, '--fresh'], { cwd: ROOT, detached: true, env: { ...process.env, TEST_DATABASE_URL: ADMIN_DATABASE_URL }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    try {
      await eventually('the banner', async () => {
        if (child.exitCode !== null) throw new Error(`npm run tenant exited: ${out}`);
        return out.includes('Ctrl-C stops everything.');
      }, 3 * 60_000);
      expect(out).toContain('API (the edge)      http://127.0.0.1:8080/api/v1');
      expect(out).toContain('Prometheus          http://127.0.0.1:9090/alerts');
      expect(out).toContain('Alertmanager        http://127.0.0.1:9093');
      expect(out).toContain("helm test's check   ready ok, read ok, ws ok");
      expect(out).toMatch(/Try a trade {9}npm run wallet -- trade --api http:\/\/127\.0\.0\.1:8080 --rpc http:\/\/127\.0\.0\.1:\d+ --domain alpha\.staging\.markets\.example/);
      const status = (await (await fetch('http://127.0.0.1:8080/api/v1/status')).json()) as { data: { indexerRunning: boolean } };
      expect(status.data.indexerRunning).toBe(true);
    } finally {
      process.kill(-child.pid!, 'SIGINT');
    }
    // npm dies of the signal at once (npm's own behaviour); the harness stops what it started.
    await exited;
    await eventually('the process group gone', async () => {
      try {
        process.kill(-child.pid!, 0);
        return false;
      } catch {
        return true;
      }
    }, 60_000);
    expect(out).toContain('stopping…');
    for (const url of ['http://127.0.0.1:8080/ready', 'http://127.0.0.1:9090/-/ready', 'http://127.0.0.1:9093/-/ready', 'http://127.0.0.1:8899/health']) {
      await eventually(`${url} closed`, async () => fetch(url).then(() => false, () => true), 60_000);
    }
  }, 5 * 60_000);
});
