// One VU of the k6 test adapter (test support), in its own thread as k6 gives each VU its own
// JavaScript runtime: installs the k6 modules, loads the bundle, runs what the runner asks.
import { register } from 'node:module';
import { pathToFileURL } from 'node:url';
import { parentPort, workerData } from 'node:worker_threads';
import { createModules, type CheckSample, type Sample } from './modules';

export type VuJob =
  | { role: 'init' | 'setup'; bundle: string; env: Record<string, string>; vu: number }
  | { role: 'default' | 'teardown'; bundle: string; env: Record<string, string>; vu: number; iterations: number; data: unknown };

export type VuReport =
  | { kind: 'samples'; samples: (Sample | CheckSample)[] }
  | { kind: 'error'; message: string }
  | { kind: 'done'; options?: unknown; data?: unknown };

const job = workerData as VuJob;
const port = parentPort!;
let batch: (Sample | CheckSample)[] = [];
const flush = () => {
  if (batch.length) port.postMessage({ kind: 'samples', samples: batch } satisfies VuReport);
  batch = [];
};
const error = (err: unknown) => port.postMessage({ kind: 'error', message: err instanceof Error ? (err.stack ?? err.message) : String(err) } satisfies VuReport);
process.on('uncaughtException', error);
process.on('unhandledRejection', error);

let group = '';
const pending = { count: 0 };
const modules = createModules({
  emit: (s) => {
    batch.push(s);
    if (batch.length >= 500) flush();
  },
  pending,
  groupPath: () => group,
  setGroup: (g) => (group = g),
});
(globalThis as Record<string, unknown>).__k6adapter = { modules };
Object.assign(globalThis, { __ENV: job.env, __VU: job.vu, __ITER: 0 });

/** Resolves once the iteration's sockets and timers are done (k6 waits for its event loop too). */
function idle(): Promise<void> {
  return new Promise((resolve) => {
    const poll = () => (pending.count === 0 ? resolve() : setTimeout(poll, 5));
    poll();
  });
}

async function main(): Promise<void> {
  register('./loader.mjs', pathToFileURL(__filename));
  const mod = (await import(pathToFileURL(job.bundle).href)) as {
    options?: unknown;
    setup?: () => unknown;
    default?: (data: unknown) => unknown;
    teardown?: (data: unknown) => unknown;
  };
  switch (job.role) {
    case 'init':
      return finish({ options: JSON.parse(JSON.stringify(mod.options ?? {})) });
    case 'setup': {
      const data = mod.setup ? await mod.setup() : undefined;
      await idle();
      // k6 hands setup's result to every VU as JSON.
      return finish({ data: data === undefined ? undefined : JSON.parse(JSON.stringify(data)) });
    }
    case 'default':
      for (let i = 0; i < job.iterations; i++) {
        (globalThis as Record<string, unknown>).__ITER = i;
        try {
          await mod.default!(job.data);
          await idle();
        } catch (err) {
          error(err);
        }
      }
      return finish({});
    case 'teardown':
      if (mod.teardown) await mod.teardown(job.data);
      await idle();
      return finish({});
  }
}

function finish(r: { options?: unknown; data?: unknown }): void {
  flush();
  port.postMessage({ kind: 'done', ...r } satisfies VuReport);
  void modules.close();
}

main().catch((err: unknown) => {
  error(err);
  finish({});
});
