import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { LOAD_TEST_SCRIPTS } from '../../cdk8s/lib/values';
import { assertSharedOnce, buildK6, catalogModule, K6_SHARED, ROOT, typecheckK6 } from '../../loadtest/k6-build';

describe('k6 scripts build (loadtest/k6)', () => {
  let out: string;
  let bundles: Record<string, string>;
  beforeAll(async () => {
    out = mkdtempSync(path.join(os.tmpdir(), 'k6-build-'));
    bundles = await buildK6(out);
  }, 60_000);
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it('type-checks and bundles every script into plain k6 JavaScript importing k6 modules and the shared module only', () => {
    // The kit's list of scripts (platform.loadTest.script) is the directory's.
    expect(Object.keys(bundles).sort()).toEqual([...LOAD_TEST_SCRIPTS]);
    const importsOf = (js: string) => [...js.matchAll(/^import (.*) from "([^"]+)";$/gm)].map((m) => ({ names: m[1]!, from: m[2]! }));
    const shared = readFileSync(path.join(out, `${K6_SHARED}.js`), 'utf8');
    for (const i of importsOf(shared)) expect(i.from).toMatch(/^k6(\/[a-z]+)?$/);
    const exported = new Set(/^export \{([^}]*)\};$/m.exec(shared)![1]!.split(',').map((n) => n.trim()).filter(Boolean));
    // tweetnacl and every helper, once, in the shared module.
    expect(shared).toContain('crypto_sign');
    expect(shared).not.toMatch(/\brequire\("(node:)?(crypto|fs|http)"\)/);
    for (const name of ['call', 'wallet', 'connect', 'ROUTES']) expect(exported).toContain(name);
    for (const file of Object.values(bundles)) {
      const js = readFileSync(file, 'utf8');
      const imports = importsOf(js);
      expect(imports.length).toBeGreaterThan(0);
      for (const i of imports) expect(i.from).toMatch(/^(k6(\/[a-z]+)?|\.\/lib\.js)$/);
      // What a script takes from the shared module, the shared module has (k6 fails the import otherwise).
      for (const i of imports.filter((x) => x.from === './lib.js')) {
        for (const n of /^\{(.*)\}$/.exec(i.names)![1]!.split(',')) expect(exported).toContain(n.trim().split(/\s+as\s+/)[0]);
      }
      // No helper and no tweetnacl copied into a script.
      expect(js).not.toMatch(/^\/\/ (loadtest\/k6\/lib\/|node_modules\/)/m);
      expect(js).not.toContain('crypto_sign');
      expect(js).toMatch(/^export \{/m);
    }
  });

  it('refuses a script that would copy a helper in instead of importing the shared module', () => {
    expect(() => assertSharedOnce({ 'lib.js': '// loadtest/k6/lib/api.ts\n', 'x.js': '// loadtest/k6/x.ts\n// loadtest/k6/lib/api.ts\nvar a = 1;\n' })).toThrow(/x\.js bundles loadtest\/k6\/lib\/api\.ts/);
    expect(() => assertSharedOnce({ 'lib.js': '// loadtest/k6/lib/api.ts\n', 'x.js': '// loadtest/k6/x.ts\nimport { a } from "./lib.js";\n' })).not.toThrow();
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
