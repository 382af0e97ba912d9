import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import YAML from 'yaml';
import { OPENAPI_LEGACY_PATH, OPENAPI_PATH } from '../support/openapi';

/**
 * The documents as client authors' generators read them (D-520): `openapi-typescript` writes a
 * declaration file of every operation, the deprecated aliases included, and `tsc --strict`
 * accepts it and a consumer reading an alias's body as its canonical operation's.
 */
const BIN = resolve('node_modules/.bin/openapi-typescript');

function diagnostics(files: string[]): string[] {
  const program = ts.createProgram(files, { strict: true, noEmit: true, skipLibCheck: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler, types: [] });
  return ts.getPreEmitDiagnostics(program).map((d) => `${d.file ? `${d.file.fileName.split('/').pop()}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1} ` : ''}TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`);
}

/** Every `$ref` of a document. */
function refsOf(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((n) => refsOf(n, out));
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else refsOf(v, out);
    }
  }
  return out;
}

const DOCUMENTS = [
  { name: 'openapi.yaml', path: OPENAPI_PATH },
  { name: 'openapi-legacy.yaml', path: OPENAPI_LEGACY_PATH },
];

describe('api-reference for generators', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'openapi-client-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each(DOCUMENTS)('$name has only references into components, each a valid URI reference (no raw braces)', ({ path }) => {
    const refs = refsOf(YAML.parse(readFileSync(path, 'utf8')));
    expect(refs.length).toBeGreaterThan(0);
    // RFC 3986: a fragment may not hold `{`, `}` or spaces; orval refuses such a pointer.
    expect(refs.filter((r) => !/^#\/components\/[A-Za-z]+\/[A-Za-z0-9._-]+$/.test(r))).toEqual([]);
  });

  it('both generate with openapi-typescript, deprecated operations included, into files tsc --strict accepts', () => {
    const files = DOCUMENTS.map(({ name, path }) => {
      // A .ts, not a .d.ts: checked in full while the standard library's declarations are skipped.
      const out = join(dir, name.replace('.yaml', '.ts'));
      execFileSync(BIN, [path, '-o', out], { stdio: 'pipe' });
      const doc = YAML.parse(readFileSync(path, 'utf8'));
      const deprecated = Object.values(doc.paths as Record<string, Record<string, { deprecated?: boolean }>>).flatMap((ops) => Object.values(ops)).filter((o) => o.deprecated);
      expect(deprecated.length).toBeGreaterThan(0);
      expect(readFileSync(out, 'utf8').match(/@deprecated/g)?.length ?? 0).toBeGreaterThanOrEqual(deprecated.length);
      return out;
    });
    // An alias's body is its canonical operation's type, by name: assignable both ways.
    const consumer = join(dir, 'consumer.ts');
    writeFileSync(
      consumer,
      [
        `import type { paths, components } from './openapi';`,
        `type Alias = paths['/config']['get']['responses'][200]['content']['application/json'];`,
        `type Canonical = paths['/api/v1/config']['get']['responses'][200]['content']['application/json'];`,
        `export const a = (x: Canonical): Alias => x;`,
        `export const b = (x: Alias): components['schemas']['ConfigResponse'] => x;`,
        `export const chain = (x: Alias): string => x.chainId;`,
      ].join('\n'),
    );
    expect(diagnostics([...files, consumer])).toEqual([]);
  });
});
