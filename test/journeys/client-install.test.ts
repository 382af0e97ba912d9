import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bashBlocks, commandsOf } from '../support/doc-commands';

/**
 * docs/client.md's install, typed as written in a new project next to a checkout (D-522): npm
 * links the folder and runs its `prepare` (the build), and the package loads from the project.
 * A journey: it installs the SDK's dependencies from the registry.
 */
const ROOT = path.resolve(__dirname, '../..');

describe('installing the client SDK as docs/client.md says', () => {
  it('builds on install and imports from the new project', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'sdk-install-'));
    try {
      symlinkSync(ROOT, path.join(dir, 'market-indexer'));
      const app = path.join(dir, 'app');
      mkdirSync(app);
      execFileSync('npm', ['init', '-y'], { cwd: app, stdio: 'pipe' });
      rmSync(path.join(ROOT, 'client/dist'), { recursive: true, force: true });
      for (const cmd of bashBlocks(path.join(ROOT, 'docs/client.md'), '## Install').flatMap(commandsOf)) execFileSync('bash', ['-c', cmd], { cwd: app, stdio: 'pipe' });
      expect(existsSync(path.join(ROOT, 'client/dist/browser.js'))).toBe(true);
      const out = execFileSync(process.execPath, ['--input-type=module', '-e', "const m = await import('@market-indexer/client'); const n = await import('@market-indexer/client/node'); console.log(typeof m.createMarketClient, typeof n.keypairFileSigner)"], { cwd: app, encoding: 'utf8' });
      expect(out.trim()).toBe('function function');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);
});
