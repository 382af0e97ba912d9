import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, symlinkSync, writeSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

// Commands the documentation tells a user to type, run as typed: the ```bash blocks under a
// heading of a Markdown file, split into commands (a heredoc or a `\` continuation stays one
// command) and run by bash from a checkout.

/** The ```bash blocks of the section under `heading` (up to the next heading of its level or above). */
export function bashBlocks(file: string, heading: string): string[] {
  const text = readFileSync(file, 'utf8');
  const at = text.indexOf(`\n${heading}\n`);
  if (at < 0) throw new Error(`${file}: no heading "${heading}"`);
  const level = /^#+/.exec(heading)![0].length;
  const rest = text.slice(at + heading.length + 2);
  const end = rest.search(new RegExp(`\\n#{1,${level}} `));
  const section = end < 0 ? rest : rest.slice(0, end);
  return [...section.matchAll(/```bash\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

/** A block's commands: comment-only lines dropped, continuations and heredocs kept whole. */
export function commandsOf(block: string): string[] {
  const lines = block.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (!line.trim() || line.trim().startsWith('#')) continue;
    const cmd = [line];
    const heredoc = /<<'?(\w+)'?/.exec(line)?.[1];
    if (heredoc) {
      while (i + 1 < lines.length && lines[i] !== heredoc) cmd.push(lines[++i]!);
    } else {
      while (cmd[cmd.length - 1]!.trimEnd().endsWith('\\') && i + 1 < lines.length) cmd.push(lines[++i]!);
    }
    out.push(cmd.join('\n'));
  }
  return out;
}

/**
 * A checkout to run commands from: every top-level entry of `root` linked, but `dist/` its own,
 * so what a command writes there (`npm run synth`) is not touched by a suite that rebuilds
 * `dist/` at the same time.
 */
export function checkoutOf(root: string): { dir: string; remove: () => void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'checkout-'));
  for (const name of readdirSync(root)) if (name !== 'dist' && name !== '.git') symlinkSync(path.join(root, name), path.join(dir, name));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface Ran {
  code: number | null;
  out: string;
  err: string;
}

/** Runs one command with bash to its end. */
export function runCommand(command: string, opts: { cwd: string; env: NodeJS.ProcessEnv }): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', command], { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('close', (code) => resolve({ code, out, err }));
  });
}

export interface Running {
  child: ChildProcess;
  output: () => string;
  /** Resolves once the output (stdout and stderr) matches; rejects if the command ends first. */
  waitForOutput: (re: RegExp, timeoutMs?: number) => Promise<string>;
  /** SIGTERM to the command's process group (bash, npm and node), then waits for bash to exit. */
  stop: () => Promise<void>;
}

/** Starts a command that runs until stopped (a server, the operator), in its own process group. */
export function startCommand(command: string, opts: { cwd: string; env: NodeJS.ProcessEnv }): Running {
  const child = spawn('bash', ['-c', command], { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  const listeners = new Set<() => void>();
  const onData = (d: Buffer) => {
    output += d.toString();
    for (const l of listeners) l();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    output: () => output,
    waitForOutput: (re, timeoutMs = 30_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const m = re.exec(output);
          if (!m) return;
          done();
          resolve(m[0]);
        };
        const timer = setTimeout(() => (done(), reject(new Error(`no ${re} within ${timeoutMs} ms from \`${command}\`:\n${output}`))), timeoutMs);
        const done = () => (clearTimeout(timer), listeners.delete(check));
        void exited.then(() => (done(), reject(new Error(`\`${command}\` ended before printing ${re}:\n${output}`))));
        listeners.add(check);
        check();
      }),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGTERM');
      await exited;
    },
  };
}

/** Whether nothing listens on `port` (any address). */
export function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, () => s.close(() => resolve(true)));
  });
}

/**
 * A lock shared by every checkout on this machine, for commands that use fixed ports and paths
 * (the README's 6443 and /tmp/kube.yaml): a run waits for another to finish, and takes over a
 * lock whose process is gone.
 */
export async function machineLock(name: string, timeoutMs: number): Promise<() => void> {
  const file = path.join(os.tmpdir(), `${name}.lock`);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(file, { force: true });
    } catch {
      const holder = Number(existsSync(file) ? readFileSync(file, 'utf8') : 0);
      let alive = false;
      try {
        alive = holder > 0 && process.kill(holder, 0);
      } catch {
        alive = false;
      }
      if (!alive) rmSync(file, { force: true });
      else if (Date.now() > deadline) throw new Error(`${file} is held by process ${holder} for more than ${timeoutMs} ms`);
      else await new Promise((r) => setTimeout(r, 200));
    }
  }
}
