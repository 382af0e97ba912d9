import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './processes';

/**
 * A script of docs/client.md run as a reader runs it (D-529): the first ```js block after the
 * heading, saved under the name the guide gives and run with `node` in a new project where
 * `npm install ../market-indexer/client` puts the package (a link to the folder: the install
 * journey checks that). The SDK must be built (client/build.mjs).
 */
export async function runGuideScript(heading: string, file: string, env: Record<string, string>, timeoutMs = 60_000): Promise<string> {
  const guide = readFileSync(path.join(ROOT, 'docs/client.md'), 'utf8');
  const at = guide.indexOf(`\n## ${heading}\n`);
  if (at < 0) throw new Error(`docs/client.md has no section "${heading}"`);
  const end = guide.indexOf('\n## ', at + 1);
  const section = guide.slice(at, end < 0 ? undefined : end);
  expect(section).toContain(`as \`${file}\` and run \`node ${file}\``);
  const code = /```js\n([\s\S]*?)```/.exec(section)![1]!;
  const app = mkdtempSync(path.join(os.tmpdir(), 'sdk-app-'));
  try {
    mkdirSync(path.join(app, 'node_modules/@market-indexer'), { recursive: true });
    symlinkSync(path.join(ROOT, 'client'), path.join(app, 'node_modules/@market-indexer/client'));
    writeFileSync(path.join(app, file), code);
    const { stdout } = await promisify(execFile)(process.execPath, [file], { cwd: app, env: { ...process.env, ...env }, timeout: timeoutMs });
    return stdout;
  } finally {
    rmSync(app, { recursive: true, force: true });
  }
}
