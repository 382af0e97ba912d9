import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ROOT, runEntry } from '../support/processes';

/**
 * LOG_FORMAT (D-351): JSON lines when stdout is not a terminal, pino-pretty lines when it is or
 * when asked. The indexer with an unreachable database logs one line ("shutting down") and exits,
 * which is all a format needs.
 */
const ENV = { DATABASE_URL: 'postgres://app@127.0.0.1:1/none', LOG_LEVEL: 'info', INDEXER_PORT: '0' };
const ARGS = ['--source', 'simulator', '--no-progress'];
const PRETTY = /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: indexer: shutting down\n {4}reason: "failure"$/m;
const run = promisify(execFile);
// eslint-disable-next-line no-control-regex
const plain = (s: string) => s.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '').replace(/\r/g, '');

/** The indexer on a pseudo-terminal (util-linux `script`), as a person starts it. */
async function onTerminal(env: Record<string, string>): Promise<string> {
  const assignments = Object.entries({ ...ENV, ...env }).map(([k, v]) => `${k}=${v}`);
  const command = ['env', ...assignments, process.execPath, '--import', 'tsx', 'indexer/main.ts', ...ARGS].join(' ');
  const r = await run('script', ['-qec', command, '/dev/null'], { cwd: ROOT, env: { PATH: process.env.PATH ?? '' }, timeout: 60_000 }).catch((e: { stdout: string }) => e);
  return plain(r.stdout);
}

describe('log format', () => {
  it('writes JSON lines when stdout is not a terminal', async () => {
    const r = await runEntry('indexer/main.ts', ARGS, { env: ENV });
    const lines = r.stdout.split('\n').filter(Boolean);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(() => JSON.parse(line) as unknown).not.toThrow();
    expect(lines.map((l) => (JSON.parse(l) as { msg: string }).msg)).toContain('shutting down');
  });

  it('writes pino-pretty lines with LOG_FORMAT=pretty, whatever stdout is', async () => {
    const r = await runEntry('indexer/main.ts', ARGS, { env: { ...ENV, LOG_FORMAT: 'pretty' } });
    expect(r.stdout).toMatch(PRETTY);
    expect(r.stdout).not.toMatch(/^\{/m);
  });

  it('is pretty on a terminal by default, and JSON there with LOG_FORMAT=json', async () => {
    expect(await onTerminal({})).toMatch(PRETTY);
    const json = (await onTerminal({ LOG_FORMAT: 'json' })).split('\n').filter((l) => l.startsWith('{'));
    expect(json.map((l) => (JSON.parse(l) as { msg: string }).msg)).toContain('shutting down');
  });
});
