import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { RELEASE_VERSION } from '../../core/release';
import { bashBlocks, commandsOf, runCommand } from '../support/doc-commands';
import { ROOT } from '../support/processes';

/**
 * docs/deploy.md "Releasing", run as typed in a git worktree of this commit: the version bump and
 * `npm run generate` move package.json, the chart and the docs together; the checks then fail
 * naming the changelog until its entry is written, and pass once it is.
 */
describe('docs/deploy.md: releasing the next version', () => {
  let dir: string;
  beforeAll(() => {
    dir = path.join(mkdtempSync(path.join(os.tmpdir(), 'release-doc-')), 'checkout');
    execFileSync('git', ['worktree', 'add', '--detach', dir, 'HEAD'], { cwd: ROOT, stdio: 'ignore' });
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  });
  afterAll(() => {
    execFileSync('git', ['worktree', 'remove', '--force', dir], { cwd: ROOT, stdio: 'ignore' });
    rmSync(path.dirname(dir), { recursive: true, force: true });
  });

  it('bumps, generates, and checks: failing on the changelog until its entry is written', async () => {
    const [bump, check] = bashBlocks(path.join(ROOT, 'docs/deploy.md'), '## Releasing').map(commandsOf);
    expect(bump).toEqual(['npm version minor --no-git-tag-version', 'npm run generate']);
    expect(check).toEqual(['npx jest test/unit/release.test.ts test/unit/migrations-additive.test.ts']);
    const env = { ...process.env, npm_config_update_notifier: 'false' };
    for (const command of bump!) {
      const r = await runCommand(command, { cwd: dir, env });
      expect([command, r.code, r.err.slice(-2000)]).toEqual([command, 0, expect.any(String)]);
    }
    const [major, minor] = RELEASE_VERSION.split('.').map(Number);
    const next = `${major}.${minor! + 1}.0`;
    const read = (p: string) => readFileSync(path.join(dir, p), 'utf8');
    expect((JSON.parse(read('package.json')) as { version: string }).version).toBe(next);
    expect(parse(read('charts/market-indexer/Chart.yaml'))).toMatchObject({ version: next, appVersion: next });
    expect(read('docs/deploy.md')).toContain(`dist/chart/market-indexer-${next}.tgz`);

    const failing = await runCommand(check![0]!, { cwd: dir, env });
    expect(failing.code).not.toBe(0);
    expect(failing.err).toMatch(/CHANGELOG\.md's newest entry is this version/);

    // The entry, as the section says to write it.
    const changelog = read('CHANGELOG.md');
    const at = changelog.indexOf('\n## [');
    writeFileSync(path.join(dir, 'CHANGELOG.md'), `${changelog.slice(0, at)}\n## [${next}] - Unreleased\n\nApp \`${next}\` · chart \`${next}\` · commit: not cut yet\n${changelog.slice(at)}`);
    // The previous Unreleased entry is now below the newest: cut it at this commit, as the section says.
    const head = execFileSync('git', ['rev-parse', '--short=7', 'HEAD'], { cwd: dir, encoding: 'utf8' }).trim();
    writeFileSync(
      path.join(dir, 'CHANGELOG.md'),
      read('CHANGELOG.md').replace(`## [${RELEASE_VERSION}] - Unreleased\n\nApp \`${RELEASE_VERSION}\` · chart \`${RELEASE_VERSION}\` · commit: not cut yet`, `## [${RELEASE_VERSION}] - 2026-12-01\n\nApp \`${RELEASE_VERSION}\` · chart \`${RELEASE_VERSION}\` · commit \`${head}\``),
    );
    const passing = await runCommand(check![0]!, { cwd: dir, env });
    expect([passing.code, passing.err.slice(-3000)]).toEqual([0, expect.stringMatching(/Tests:\s+\d+ passed, \d+ total/)]);
  }, 15 * 60_000);
});
