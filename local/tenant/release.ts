import { spawn } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { git, resolveCommit } from '../release/git';
import type { PodCode } from './runner';

/**
 * An earlier release as the harness runs it (docs/local-tenant.md#an-earlier-release): its sources
 * from a git worktree at the commit CHANGELOG.md names, its node_modules this checkout's when the
 * lock files are the same (else its own `npm ci`), built with its own `npm run build`, and its
 * tenant rendered by its own `npm run synth`. Kept in a cache folder per commit, so a second run
 * reuses the worktree and its build.
 */

export interface PreparedRelease {
  version: string;
  commit: string;
  /** The worktree. */
  dir: string;
  /** `npm run synth -- --env-file … --out <manifestsDir>`: `<tenant>.yaml` per tenant. */
  manifestsDir: string;
  code: PodCode;
}

export class ReleaseBuildError extends Error {
  override name = 'ReleaseBuildError';
}

/** A lock file's packages, the project's own version aside (a release bumps it; the dependencies stay). */
function lockedPackages(file: string): string {
  const lock = JSON.parse(readFileSync(file, 'utf8')) as { version?: string; packages?: Record<string, { version?: string }> };
  delete lock.version;
  if (lock.packages?.['']) delete lock.packages[''].version;
  return JSON.stringify(lock);
}

/** Runs a command in `cwd` to its end; refuses with its last lines when it fails. */
function run(cmd: string, args: string[], cwd: string, log: (line: string) => void): Promise<void> {
  log(`${path.basename(cwd)}: ${cmd} ${args.join(' ')}`);
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_update_notifier: 'false' } });
    let out = '';
    const keep = (d: Buffer) => (out = (out + d.toString()).slice(-4000));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new ReleaseBuildError(`${cmd} ${args.join(' ')} in ${cwd} exited ${code}:\n${out.split('\n').slice(-15).join('\n')}`))));
  });
}

/**
 * An environment file for the release's own synth: its environment `env` with `overlay` merged
 * over it (objects merged key by key, anything else replaced), written inside its worktree so its
 * imports resolve there.
 */
function overlayEnvironmentFile(dir: string, env: string, overlay: unknown): string {
  const file = path.join(dir, '.harness-environment.ts');
  writeFileSync(
    file,
    `// Written by the tenant harness: environment ${env} with the run's overlay.
import env from './cdk8s/environments/${env}';
const merge = (a: unknown, b: unknown): unknown => {
  if (!a || !b || typeof a !== 'object' || typeof b !== 'object' || Array.isArray(a) || Array.isArray(b)) return b === undefined ? a : b;
  const out: Record<string, unknown> = { ...(a as Record<string, unknown>) };
  for (const [k, v] of Object.entries(b as Record<string, unknown>)) out[k] = merge(out[k], v);
  return out;
};
export default merge(env, ${JSON.stringify(overlay ?? {})});
`,
  );
  return file;
}

export async function prepareRelease(opts: {
  /** This checkout (whose git history holds the commit). */
  root: string;
  version: string;
  commit: string;
  cacheDir: string;
  env: string;
  /** Merged over the environment before its synth, as `startTenant`'s overlay is. */
  overlay?: unknown;
  log?: (line: string) => void;
}): Promise<PreparedRelease> {
  const log = opts.log ?? (() => {});
  const commit = resolveCommit(opts.root, opts.commit);
  const dir = path.join(opts.cacheDir, `${opts.version}-${commit.slice(0, 12)}`);
  mkdirSync(opts.cacheDir, { recursive: true });
  // A worktree of this repository at the commit, detached (no branch); pruned first in case a
  // cache folder was deleted by hand.
  if (!existsSync(path.join(dir, '.git'))) {
    git(opts.root, ['worktree', 'prune']);
    rmSync(dir, { recursive: true, force: true });
    git(opts.root, ['worktree', 'add', '--detach', '--force', dir, commit]);
  }
  const modules = path.join(dir, 'node_modules');
  if (!existsSync(modules)) {
    const same = lockedPackages(path.join(opts.root, 'package-lock.json')) === lockedPackages(path.join(dir, 'package-lock.json'));
    if (same) symlinkSync(path.join(opts.root, 'node_modules'), modules, 'dir');
    else await run('npm', ['ci', '--no-audit', '--no-fund'], dir, log);
  }
  // Its own build, once per cache folder (the marker is written after a build that succeeded).
  const built = path.join(dir, 'dist', '.harness-built');
  if (!existsSync(built)) {
    await run('npm', ['run', 'build'], dir, log);
    writeFileSync(built, `${commit}\n`);
  }
  const manifestsDir = path.join(dir, 'dist', 'harness-k8s', opts.env);
  await run('npm', ['run', 'synth', '--', '--env-file', overlayEnvironmentFile(dir, opts.env, opts.overlay), '--out', manifestsDir], dir, log);
  return { version: opts.version, commit, dir, manifestsDir, code: { root: dir, built: true } };
}

/** Removes the release's worktree (and its cache folder) from this repository. */
export function removeRelease(root: string, release: PreparedRelease): void {
  git(root, ['worktree', 'remove', '--force', release.dir]);
}

/**
 * The next release as far as the projection is concerned (docs/local-tenant.md#a-re-index): this
 * checkout's files as they are (tracked and new, not ignored), hard-linked into `dir`, with
 * `PROJECTION_VERSION` one higher, run from its sources. A release that fixes how an event
 * becomes rows ships exactly that bump beside the fix; with no fix, the rows it builds must equal
 * the live ones, which is what a re-index journey can then compare. Made afresh on each call.
 */
export function projectionNextRelease(root: string, dir: string): { version: number; code: PodCode } {
  rmSync(dir, { recursive: true, force: true });
  const files = git(root, ['ls-files', '--cached', '--others', '--exclude-standard', '-z']).split('\0').filter(Boolean);
  for (const f of files) {
    const from = path.join(root, f);
    if (!existsSync(from)) continue; // deleted in the work tree, not yet in the index
    mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    linkSync(from, path.join(dir, f));
  }
  symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  const file = path.join(dir, 'core/db/projection-version.ts');
  const text = readFileSync(file, 'utf8');
  const current = Number(/export const PROJECTION_VERSION = (\d+);/.exec(text)?.[1]);
  if (!Number.isInteger(current)) throw new ReleaseBuildError(`${file}: no PROJECTION_VERSION to bump`);
  // A new file, not the hard link written through: the checkout keeps its own version.
  rmSync(file);
  writeFileSync(file, text.replace(`export const PROJECTION_VERSION = ${current};`, `export const PROJECTION_VERSION = ${current + 1};`));
  return { version: current + 1, code: { root: dir } };
}
