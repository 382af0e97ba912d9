import { fork } from 'node:child_process';
import path from 'node:path';
import type { RunRequest, RunSummary } from './runner';

export type { RunSummary, ThresholdResult } from './runner';

/**
 * The k6 test adapter (test support, NOT a k6 replacement): runs a bundled k6 script of
 * loadtest/k6 (dist/k6/*.js as `k6 run` would load it, unchanged) for `vus` x `iterations`
 * against a live service, implementing only the k6 API subset those scripts use: k6 (check,
 * group, sleep), k6/http (synchronous requests), k6/metrics, k6/timers, k6/websockets, and
 * __ENV, __VU, __ITER. See docs/load-testing.md. The scripts never import it.
 */
export function runK6Script(
  bundle: string,
  opts: {
    env?: Record<string, string>;
    vus?: number;
    iterations?: number;
    timeoutMs?: number;
    /** k6's `--local-ips` (K6_LOCAL_IPS): the source address of every connection, so a run counts as a client of its own. */
    localIPs?: string;
  } = {},
): Promise<RunSummary> {
  const req: RunRequest = { bundle: path.resolve(bundle), env: opts.env ?? {}, vus: opts.vus ?? 1, iterations: opts.iterations ?? 1 };
  const child = fork(path.join(__dirname, 'runner.ts'), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    env: { PATH: process.env.PATH ?? '', ...(opts.localIPs ? { K6_LOCAL_IPS: opts.localIPs } : {}) },
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout!.resume();
  return new Promise<RunSummary>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`k6 test adapter: ${path.basename(bundle)} did not finish in ${opts.timeoutMs ?? 120_000} ms\n${stderr}`));
    }, opts.timeoutMs ?? 120_000);
    child.once('message', (m: { ok: true; summary: RunSummary } | { ok: false; error: string }) => {
      clearTimeout(timer);
      if (m.ok) resolve(m.summary);
      else reject(new Error(`k6 test adapter: ${m.error}\n${stderr}`));
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`k6 test adapter exited (${code})\n${stderr}`));
    });
    child.send(req);
  });
}

/** The checks that failed, as `[group / ]name (✗ n)` lines (empty when all held). */
export const failedChecks = (s: RunSummary): string[] =>
  s.checks.filter((c) => c.fails > 0).map((c) => `${c.group ? `${c.group.replace(/^::/, '')} / ` : ''}${c.name} (✗ ${c.fails})`);
