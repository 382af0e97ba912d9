import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { ENVIRONMENTS } from '../../cdk8s/environments';
import { synthEnvironment } from '../../cdk8s/synth';
import { RELEASE_VERSION } from '../../core/release';
import { ChangelogError, parseChangelog, previousRelease, readChangelog } from '../../local/release/changelog';

const ROOT = path.resolve(__dirname, '../..');
const read = (p: string) => readFileSync(path.join(ROOT, p), 'utf8');

/** Every image of the project's repository a rendered environment runs. */
function projectImages(env: string): string[] {
  const files = synthEnvironment(ENVIRONMENTS[env]!, `cdk8s/environments/${env}.ts`);
  const images = new Set<string>();
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) return v.forEach(walk);
    if (!v || typeof v !== 'object') return;
    for (const [k, x] of Object.entries(v)) {
      if (k === 'image' && typeof x === 'string' && x.startsWith('ghcr.io/market-indexer/market-indexer:')) images.add(x);
      else walk(x);
    }
  };
  files.forEach((f) => walk(f.objects));
  return [...images];
}

describe('a release is one version (D-310)', () => {
  const changelog = readChangelog(ROOT);

  it("package.json's version is the release the code reports", () => {
    expect((JSON.parse(read('package.json')) as { version: string }).version).toBe(RELEASE_VERSION);
    expect(RELEASE_VERSION).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it("the chart's version, appVersion and default image tag are package.json's (npm run generate)", () => {
    const chart = parse(read('charts/market-indexer/Chart.yaml')) as { version: string; appVersion: string };
    const values = parse(read('charts/market-indexer/values.yaml')) as { image: { tag: string } };
    expect({ version: chart.version, appVersion: chart.appVersion, tag: String(values.image.tag) }).toEqual({ version: RELEASE_VERSION, appVersion: RELEASE_VERSION, tag: RELEASE_VERSION });
  });

  it.each(['staging', 'prod'])('the kit renders %s with the release as its image tag', (env) => {
    expect(projectImages(env)).toEqual([`ghcr.io/market-indexer/market-indexer:${RELEASE_VERSION}`]);
  });

  it("CHANGELOG.md's newest entry is this version, with the app and the chart at it", () => {
    const newest = changelog[0]!;
    expect({ version: newest.version, app: newest.app, chart: newest.chart }).toEqual({ version: RELEASE_VERSION, app: RELEASE_VERSION, chart: RELEASE_VERSION });
  });

  it('every released entry names a commit of this history, newest first, and only the newest may be Unreleased', () => {
    const released = changelog.filter((e) => e.commit !== undefined);
    expect(released.length).toBeGreaterThan(0);
    const missing = released.filter((e) => {
      try {
        execFileSync('git', ['cat-file', '-e', `${e.commit}^{commit}`], { cwd: ROOT, stdio: 'ignore' });
        return false;
      } catch {
        return true;
      }
    });
    expect(missing.map((e) => `${e.version}: ${e.commit}`)).toEqual([]);
    expect(changelog.slice(1).filter((e) => e.commit === undefined).map((e) => e.version)).toEqual([]);
    const key = (v: string) => v.split(/[.-]/).slice(0, 3).map(Number);
    const sorted = [...changelog].sort((a, b) => {
      const [x, y] = [key(a.version), key(b.version)];
      return y[0]! - x[0]! || y[1]! - x[1]! || y[2]! - x[2]!;
    });
    expect(changelog.map((e) => e.version)).toEqual(sorted.map((e) => e.version));
    expect(new Set(changelog.map((e) => e.version)).size).toBe(changelog.length);
  });

  it('0.1.0 is the commit the releases start from, and the previous release of this version', () => {
    expect(changelog.find((e) => e.version === '0.1.0')).toMatchObject({ commit: '014be83', date: '2026-11-26' });
    expect(previousRelease(changelog, RELEASE_VERSION).version).not.toBe(RELEASE_VERSION);
  });

  it('refuses an entry it cannot read, naming the line', () => {
    expect(() => parseChangelog('# C\n\n## 0.3.0\n')).toThrow(new ChangelogError('CHANGELOG.md line 3: expected "## [<semver>] - <YYYY-MM-DD or Unreleased>", got "## 0.3.0"'));
    expect(() => parseChangelog('## [0.3.0] - 2026-12-01\n\nApp `0.3.0` · chart `0.3.0` · commit: not cut yet\n')).toThrow('CHANGELOG.md line 3: 0.3.0 is released but names no commit');
    expect(() => parseChangelog('## [0.3.0] - Unreleased\n\nThe chart is 0.3.0.\n')).toThrow(/line 3: expected "App/);
    expect(parseChangelog('## [0.3.0] - 2026-12-01\n\nApp `0.3.0` · chart `1.0.0` · commit `abcdef0`\n')).toEqual([{ version: '0.3.0', date: '2026-12-01', app: '0.3.0', chart: '1.0.0', commit: 'abcdef0', line: 1 }]);
  });
});
