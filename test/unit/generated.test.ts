import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GENERATED_FILES, ROOT } from '../../scripts/generated';

describe('files generated from the catalogs in code', () => {
  it.each(GENERATED_FILES.map((f) => [f.path, f]))('%s is current (npm run generate)', (_p, file) => {
    expect(readFileSync(path.join(ROOT, file.path), 'utf8')).toBe(file.content());
  });

  it('cdk8s/imports is what `cdk8s import` makes of the CRDs in cdk8s/crds (npm run kit:import)', () => {
    const out = mkdtempSync(path.join(os.tmpdir(), 'kit-import-'));
    for (const crd of ['monitoring.coreos.com', 'marketindexer', 'k6.io']) {
      const file = path.join(ROOT, `cdk8s/crds/${crd}.yaml`);
      execFileSync(process.execPath, [path.join(ROOT, 'node_modules/cdk8s-cli/bin/cdk8s'), 'import', file, '--language', 'typescript', '--output', out], {
        cwd: out,
        stdio: 'pipe',
      });
    }
    for (const name of ['monitoring.coreos.com.ts', 'marketindexer.dev.ts', 'k6.io.ts']) {
      expect(readFileSync(path.join(out, name), 'utf8')).toBe(readFileSync(path.join(ROOT, 'cdk8s/imports', name), 'utf8'));
    }
  });
});
