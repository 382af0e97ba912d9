import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from '../../loadtest/k6-build';
import { K6_TREND_STATS } from '../../observability/grafana/k6';

const run = promisify(execFile);
const TSX = path.join(ROOT, 'node_modules/tsx/dist/cli.mjs');

async function k6Cli(args: string[], env: Record<string, string>) {
  try {
    const r = await run(process.execPath, [TSX, path.join(ROOT, 'scripts/k6.ts'), ...args], { cwd: ROOT, env });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('npm run k6', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'k6-cli-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const nodeDir = path.dirname(process.execPath);

  it('stops with a clear error when no k6 binary is on PATH', async () => {
    const r = await k6Cli(['load', '--profile', 'load'], { PATH: nodeDir });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^no k6 binary on PATH: install k6/);
  }, 60_000);

  it('refuses an unknown script or profile with its usage', async () => {
    expect((await k6Cli(['nope'], { PATH: nodeDir })).stderr).toMatch(/^unknown script nope\nusage: npm run k6 -- <fanout-ws\|limits-rest\|limits-ws\|load\|build>/);
    expect((await k6Cli(['load', '--profile', 'huge'], { PATH: nodeDir })).stderr).toMatch(/--profile must be one of smoke, load, stress, soak, spike/);
  }, 60_000);

  it('builds and runs `k6 run` with the environment, the test id and remote write when configured', async () => {
    // A stand-in k6 that prints what it was given.
    const bin = path.join(dir, 'bin');
    const out = path.join(dir, 'bundles');
    mkdirSync(bin);
    writeFileSync(path.join(bin, 'k6'), '#!/bin/sh\necho "args: $*"\necho "trend stats: $K6_PROMETHEUS_RW_TREND_STATS"\nexit 7\n');
    chmodSync(path.join(bin, 'k6'), 0o755);
    const r = await k6Cli(['load', '--profile', 'stress', '--vus', '3'], {
      PATH: `${bin}${path.delimiter}${nodeDir}${path.delimiter}/usr/bin${path.delimiter}/bin`,
      K6_BUILD_DIR: out,
      BASE_URL: 'http://api.tenant-a.svc:3000',
      TENANT: 'tenant-a',
      RUN_ID: 'r1',
      K6_PROMETHEUS_RW_SERVER_URL: 'http://prometheus:9090/api/v1/write',
    });
    expect(r.code).toBe(7); // k6's exit status is the command's
    expect(r.stdout).toContain(
      `args: run -e BASE_URL=http://api.tenant-a.svc:3000 -e RUN_ID=r1 -e PROFILE=stress -e TENANT=tenant-a --tag testid=r1 -o experimental-prometheus-rw --vus 3 ${path.join(out, 'load.js')}`,
    );
    expect(r.stdout).toContain(`trend stats: ${K6_TREND_STATS}`);
    // The scripts and the shared module they import from beside them.
    expect(readdirSync(out).sort()).toEqual(['fanout-ws.js', 'lib.js', 'limits-rest.js', 'limits-ws.js', 'load.js', 'package.json']);
  }, 90_000);
});
