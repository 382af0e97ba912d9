import { fork, spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { IDL } from '../../core/events';
import { TEST_REDIS_URL, testTenant } from './redis';

export const ROOT = path.resolve(__dirname, '../..');

/**
 * The settings of one tenant's processes: its database, the shared Redis, a tenant id no other
 * suite uses, the program; `extra` adds settings or replaces these (another REDIS_URL).
 */
export function tenantEnv(databaseUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return { DATABASE_URL: databaseUrl, REDIS_URL: TEST_REDIS_URL, TENANT_ID: testTenant(), PROGRAM_ID: IDL.address, ...extra };
}

export interface Child {
  child: ChildProcess;
  /** Resolves with the HTTP port once the process listens. */
  port: Promise<number>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr: () => string;
}

/** A process entry point (`indexer/main.ts`, `server/main.ts`) as a child process, run from source. */
function spawnEntry(entry: string, args: string[], env: Record<string, string>): Child {
  let err = '';
  const child = fork(path.join(ROOT, entry), args, {
    cwd: ROOT,
    execArgv: ['--import', 'tsx'],
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', INDEXER_PORT: '0', API_PORT: '0', API_HOST: '127.0.0.1', ...env },
    stdio: ['ignore', process.env.DEBUG_CHILDREN ? 'inherit' : 'ignore', 'pipe', 'ipc'],
  });
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const port = new Promise<number>((resolve, reject) => {
    child.on('message', (m: { type?: string; port?: number }) => {
      if (m?.type === 'listening' && m.port) resolve(m.port);
    });
    child.once('exit', (code) => reject(new Error(`${entry} exited (${code}) before listening: ${err}`)));
  });
  port.catch(() => {});
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, port, exited, stderr: () => err };
}

export type IndexerChild = Child;
export type ApiChild = Child;

/** The real indexer entry point as a child process (no progress bar). */
export const spawnIndexer = (args: string[], env: Record<string, string>): IndexerChild => spawnEntry('indexer/main.ts', [...args, '--no-progress'], env);

/** The real API entry point as a child process. */
export const spawnApi = (env: Record<string, string>): ApiChild => spawnEntry('server/main.ts', [], env);

/** The real operator entry point as a child process. */
export const spawnOperator = (args: string[], env: Record<string, string>): Child => spawnEntry('operator/main.ts', args, { OPERATOR_PORT: '0', ...env });

export interface EntryRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs an entry point from source to its end (`node --import tsx <entry> <args>`), as a user's
 * `npm run` would without npm's own lines: the exit code and the output. The environment is
 * `env` alone (plus PATH), so no setting of the test process leaks into a first-contact check.
 */
export function runEntry(entry: string, args: string[], opts: { env?: Record<string, string>; timeoutMs?: number; cwd?: string } = {}): Promise<EntryRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, entry), ...args], {
      cwd: opts.cwd ?? ROOT,
      env: { PATH: process.env.PATH ?? '', ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: opts.timeoutMs ?? 30_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}
