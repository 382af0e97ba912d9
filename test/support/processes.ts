import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '../..');

export interface IndexerChild {
  child: ChildProcess;
  /** Resolves with the indexer's HTTP port once it listens. */
  port: Promise<number>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr: () => string;
}

/** The real indexer entry point (`indexer/main.ts`) as a child process. */
export function spawnIndexer(args: string[], env: Record<string, string>): IndexerChild {
  let err = '';
  const child = fork(path.join(ROOT, 'indexer/main.ts'), [...args, '--no-progress'], {
    cwd: ROOT,
    execArgv: ['--import', 'tsx'],
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', INDEXER_PORT: '0', API_HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const port = new Promise<number>((resolve, reject) => {
    child.on('message', (m: { type?: string; port?: number }) => {
      if (m?.type === 'listening' && m.port) resolve(m.port);
    });
    child.once('exit', (code) => reject(new Error(`indexer exited (${code}) before listening: ${err}`)));
  });
  port.catch(() => {});
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, port, exited, stderr: () => err };
}

export interface ApiChild {
  child: ChildProcess;
  port: Promise<number>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr: () => string;
}

/** The real API entry point (`server/main.ts`) as a child process. */
export function spawnApi(env: Record<string, string>): ApiChild {
  let err = '';
  const child = fork(path.join(ROOT, 'server/main.ts'), [], {
    cwd: ROOT,
    execArgv: ['--import', 'tsx'],
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', API_PORT: '0', API_HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const port = new Promise<number>((resolve, reject) => {
    child.on('message', (m: { type?: string; port?: number }) => {
      if (m?.type === 'listening' && m.port) resolve(m.port);
    });
    child.once('exit', (code) => reject(new Error(`api exited (${code}) before listening: ${err}`)));
  });
  port.catch(() => {});
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, port, exited, stderr: () => err };
}
