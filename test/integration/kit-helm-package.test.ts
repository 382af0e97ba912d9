import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { CHART, ENVIRONMENT_NAMES, KUBE_VERSION, helm } from '../support/kit';

// The chart as users install it: the archive `helm package` makes (what a chart repository or
// an OCI registry serves), linted and rendered as it is, and compared with the directory the
// rest of the suite checks against the cdk8s app.
jest.setTimeout(120_000);

const run = promisify(execFile);
const valuesFile = (env: string) => path.join(CHART, `values-${env}.yaml`);

/** Every file under `dir`, relative to it. */
function filesUnder(dir: string, prefix = ''): string[] {
  return readdirSync(path.join(dir, prefix)).flatMap((name) => {
    const rel = path.posix.join(prefix, name);
    return statSync(path.join(dir, rel)).isDirectory() ? filesUnder(dir, rel) : [rel];
  });
}

describe('helm package: the archive users install', () => {
  let out: string;
  let archive: string;
  beforeAll(async () => {
    out = mkdtempSync(path.join(os.tmpdir(), 'chart-package-'));
    const res = await helm(['package', CHART, '--destination', out]);
    expect([res.code, res.stderr]).toEqual([0, '']);
    archive = path.join(out, 'market-indexer-0.1.1.tgz');
    expect(res.stdout.trim()).toBe(`Successfully packaged chart and saved it to: ${archive}`);
  });
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it('holds the chart and nothing else: Chart.yaml, values, schema, README, templates/, files/ (not the repository\'s environments)', async () => {
    const { stdout } = await run('tar', ['-tzf', archive]);
    const packed = stdout.trim().split('\n').map((f) => f.replace(/^market-indexer\//, '')).sort();
    const needed = [
      'Chart.yaml',
      'values.yaml',
      'values.schema.json',
      'README.md',
      ...filesUnder(CHART, 'templates'),
      ...filesUnder(CHART, 'files'),
    ].sort();
    expect(packed).toEqual(needed);
    // The directory has more: this repository's environments and the ignore file itself.
    expect(filesUnder(CHART).filter((f) => !needed.includes(f)).sort()).toEqual(['.helmignore', ...ENVIRONMENT_NAMES.map((e) => `values-${e}.yaml`)].sort());
  });

  it.each(ENVIRONMENT_NAMES)('passes helm lint --strict with values-%s.yaml', async (env) => {
    const res = await helm(['lint', '--strict', archive, '-f', valuesFile(env)]);
    expect(res.stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
    expect(res.code).toBe(0);
  });

  it.each(ENVIRONMENT_NAMES)('renders with values-%s.yaml exactly what the chart directory renders, hooks included', async (env) => {
    const template = async (chart: string) => (await helm(['template', 'market-indexer', chart, '--kube-version', KUBE_VERSION, '-f', valuesFile(env)])).stdout;
    const fromArchive = await template(archive);
    expect(fromArchive).toContain('kind: Deployment');
    expect(fromArchive).toContain('helm.sh/hook: test');
    expect(fromArchive).toBe(await template(CHART));
  });
});
