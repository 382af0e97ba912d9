import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { LOAD_TEST_SCRIPTS } from '../../cdk8s/lib/values';
import { buildK6, catalogModule, ROOT, typecheckK6 } from '../../loadtest/k6-build';

describe('k6 scripts build (loadtest/k6)', () => {
  let out: string;
  let bundles: Record<string, string>;
  beforeAll(async () => {
    out = mkdtempSync(path.join(os.tmpdir(), 'k6-build-'));
    bundles = await buildK6(out);
  }, 60_000);
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it('type-checks and bundles every script into plain k6 JavaScript importing only k6 modules', () => {
    // The kit's list of scripts (platform.loadTest.script) is the directory's.
    expect(Object.keys(bundles).sort()).toEqual([...LOAD_TEST_SCRIPTS]);
    for (const file of Object.values(bundles)) {
      const js = readFileSync(file, 'utf8');
      const imports = [...js.matchAll(/^import .* from "([^"]+)";$/gm)].map((m) => m[1]);
      expect(imports.length).toBeGreaterThan(0);
      for (const spec of imports) expect(spec).toMatch(/^k6(\/[a-z]+)?$/);
      expect(js).not.toMatch(/\brequire\("(node:)?(crypto|fs|http)"\)/);
      expect(js).toMatch(/^export \{/m);
    }
    // Signing scripts carry tweetnacl inside.
    expect(readFileSync(bundles['limits-rest']!, 'utf8')).toContain('crypto_sign');
  });

  it('derives the route catalog from every /api/v1 path of the OpenAPI description', () => {
    const api = parse(readFileSync(path.join(ROOT, 'api-reference/openapi.yaml'), 'utf8')) as { paths: Record<string, unknown> };
    const catalog = catalogModule();
    const versioned = Object.keys(api.paths).filter((p) => p.startsWith('/api/v1/'));
    expect(versioned.length).toBeGreaterThan(10);
    for (const p of versioned) expect(catalog).toContain(`"${p.slice('/api/v1'.length)}": {`);
  });

  it('fails the type check (hence the build) when a script names a route the OpenAPI description lacks', () => {
    // In a directory of its own, so builds running beside this test never see the broken script.
    const dir = mkdtempSync(path.join(ROOT, 'loadtest/k6/.renamed-'));
    try {
      writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ extends: '../tsconfig.json', include: ['bad.ts'] }));
      writeFileSync(path.join(dir, 'bad.ts'), "import { fill } from '../lib/api';\nexport default function (): void {\n  fill('/markets/{marketId}/renamed');\n}\n");
      expect(() => typecheckK6(path.join(dir, 'tsconfig.json'))).toThrow(/bad\.ts.*'"\/markets\/\{marketId\}\/renamed"' is not assignable/s);
      writeFileSync(path.join(dir, 'bad.ts'), "import { fill } from '../lib/api';\nexport default function (): void {\n  fill('/markets/{marketId}', { marketId: 1 });\n}\n");
      expect(() => typecheckK6(path.join(dir, 'tsconfig.json'))).not.toThrow();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
