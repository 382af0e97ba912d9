// `npm run k6 -- <script> [--profile <name>] [k6 run flags...]`: builds loadtest/k6 into dist/k6
// and runs `k6 run` on the script with its environment (docs/load-testing.md).
// `npm run k6 -- build` only builds (the scripts and lib.js, the module they import from beside
// them). K6_BUILD_DIR puts the bundles elsewhere than dist/k6.
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import { LOAD_TEST_PROFILES as PROFILES } from '../cdk8s/lib/values';
import { SETTINGS } from '../core/config/settings';
import { buildK6, DEFAULT_OUT, K6_SHARED, k6Scripts } from '../loadtest/k6-build';
import { K6_LABELS, K6_TREND_STATS } from '../observability/grafana/k6';

/** The environment a script reads (loadtest/k6/lib/env.ts and the scripts' own knobs). */
export const SCRIPT_ENV = ['BASE_URL', 'TENANT', 'AUTH_DOMAIN', 'CHAIN_ID', 'RUN_ID', 'RATE', 'SUBSCRIBERS', 'FANOUT_SECONDS', 'CHANNELS', 'THINK_SECONDS'] as const;

/** The first executable `name` on PATH, or undefined. */
export function onPath(name: string, pathVar = process.env.PATH ?? ''): string | undefined {
  for (const dir of pathVar.split(path.delimiter).filter(Boolean)) {
    const file = path.join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

export interface K6Invocation {
  args: string[];
  env: Record<string, string>;
}

/** The `k6 run` command line for `script` (a bundle path) from the options and the environment. */
export function k6Run(script: string, bundle: string, opts: { profile?: string; extra: string[] }, env: NodeJS.ProcessEnv): K6Invocation {
  const runId = env.RUN_ID || `${script}-${new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '')}`;
  const vars: Record<string, string> = {
    BASE_URL: env.BASE_URL || `http://localhost:${SETTINGS.API_PORT.default}`,
    RUN_ID: runId,
    ...(opts.profile ? { PROFILE: opts.profile } : {}),
  };
  for (const name of SCRIPT_ENV) if (env[name] && !(name in vars)) vars[name] = env[name]!;
  const args = ['run', ...Object.entries(vars).flatMap(([k, v]) => ['-e', `${k}=${v}`]), '--tag', `${K6_LABELS.testid}=${runId}`];
  const out: Record<string, string> = {};
  if (env.K6_PROMETHEUS_RW_SERVER_URL) {
    // Results to Prometheus remote write, as the load-test dashboard reads them.
    args.push('-o', 'experimental-prometheus-rw');
    out.K6_PROMETHEUS_RW_TREND_STATS = env.K6_PROMETHEUS_RW_TREND_STATS || K6_TREND_STATS;
  }
  args.push(...opts.extra, bundle);
  return { args, env: out };
}

export function k6Usage(): string {
  return [
    `usage: npm run k6 -- <${[...k6Scripts(), 'build'].join('|')}> [--profile <${PROFILES.join('|')}>] [k6 run flags]`,
    '  builds loadtest/k6 into dist/k6 (K6_BUILD_DIR) and runs `k6 run` on the script with its environment',
    `  (${SCRIPT_ENV.join(', ')}); \`build\` only builds. Needs a k6 binary on PATH (docs/load-testing.md).`,
  ].join('\n');
}

export function parseArgs(argv: string[]): { script: string; profile?: string; extra: string[] } {
  const [script, ...rest] = argv;
  const scripts = k6Scripts();
  if (!script) throw new Error(k6Usage());
  if (script !== 'build' && !scripts.includes(script)) throw new Error(`${script.startsWith('-') ? 'unknown option' : 'unknown script'} ${script}\n${k6Usage()}`);
  const extra: string[] = [];
  let profile: string | undefined;
  for (let i = 0; i < rest.length; i++) {
    if (rest[i] === '--profile') {
      profile = rest[++i];
      if (!profile || !(PROFILES as readonly string[]).includes(profile)) throw new Error(`--profile must be one of ${PROFILES.join(', ')}`);
      if (script !== 'load') throw new Error('--profile applies to the load script only');
    } else extra.push(rest[i]!);
  }
  return { script, profile, extra };
}

async function main(): Promise<number> {
  if (process.argv[2] === '--help' || process.argv[2] === '-h') {
    process.stdout.write(`${k6Usage()}\n`);
    return 0;
  }
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    return 2;
  }
  const k6 = parsed.script === 'build' ? undefined : onPath('k6');
  if (parsed.script !== 'build' && !k6) {
    process.stderr.write(
      'no k6 binary on PATH: install k6 (https://grafana.com/docs/k6/latest/set-up/install-k6/), or run the scripts once through the test adapter with `npx jest test/e2e/k6-scripts.test.ts`\n',
    );
    return 2;
  }
  const outDir = process.env.K6_BUILD_DIR || DEFAULT_OUT;
  const bundles = await buildK6(outDir);
  if (parsed.script === 'build') {
    const rel = (f: string) => path.relative(process.cwd(), f);
    process.stdout.write(`built ${Object.values(bundles).map(rel).join(', ')} and the module they share, ${rel(path.join(outDir, `${K6_SHARED}.js`))}\n`);
    return 0;
  }
  const run = k6Run(parsed.script, bundles[parsed.script]!, parsed, process.env);
  const r = spawnSync(k6!, run.args, { stdio: 'inherit', env: { ...process.env, ...run.env } });
  return r.status ?? 1;
}

if (require.main === module) {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
