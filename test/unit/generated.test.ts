import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { ENVIRONMENTS } from '../../cdk8s/environments';
import { synthEnvironment } from '../../cdk8s/synth';
import { GENERATED_FILES, ROOT } from '../../scripts/generated';
import { KIT_FIELDS, KIT_IMPORTS, trimmedCrdYaml, trimSchema, type Fields } from '../../scripts/generated/kit-imports';

describe('files generated from the catalogs in code', () => {
  it.each(GENERATED_FILES.map((f) => [f.path, f]))('%s is current (npm run generate)', (_p, file) => {
    expect(readFileSync(path.join(ROOT, file.path), 'utf8')).toBe(file.content());
  });

  it('cdk8s/imports is all generated: `npm run kit:import` (generate cdk8s/imports/) writes each of its files', () => {
    const generated = GENERATED_FILES.map((f) => f.path).filter((p) => p.startsWith('cdk8s/imports/'));
    expect(generated.sort()).toEqual(KIT_IMPORTS.map((i) => i.output).sort());
    expect(generated.length).toBe(5);
  });

  // git's own reading of .gitattributes, for the files of this checkout.
  const attributes = (paths: string[], attr: string) =>
    new Map(
      execFileSync('git', ['check-attr', attr, '--', ...paths], { cwd: ROOT, encoding: 'utf8' })
        .trim()
        .split('\n')
        .map((line) => /^(.*): [\w-]+: (\S+)$/.exec(line)!.slice(1, 3) as [string, string]),
    );

  it('.gitattributes marks every file generated whole as generated, and nothing else', () => {
    const whole = GENERATED_FILES.filter((f) => !f.part).map((f) => f.path);
    const partly = GENERATED_FILES.filter((f) => f.part).map((f) => f.path);
    const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
    const generated = attributes([...new Set([...tracked, ...whole])], 'linguist-generated');
    expect(whole.filter((p) => generated.get(p) !== 'true')).toEqual([]);
    expect([...generated].filter(([p, v]) => v !== 'unspecified' && !whole.includes(p)).map(([p]) => p)).toEqual([]);
    expect(partly.length).toBeGreaterThan(0);
    for (const p of partly) expect(generated.get(p)).toBe('unspecified');
  });

  it('.gitattributes keeps the bulk out of text diffs: the k6 bundles and the cdk8s imports', () => {
    const bulk = GENERATED_FILES.map((f) => f.path).filter((p) => p.startsWith('cdk8s/imports/') || p.startsWith('charts/market-indexer/files/k6/'));
    expect(bulk.length).toBeGreaterThan(5);
    const diff = attributes(bulk, 'diff');
    expect(bulk.filter((p) => diff.get(p) !== 'unset')).toEqual([]);
  });
});

type Crd = { metadata: { name: string }; spec: { names: { kind: string } } };
const vendored = (file: string) => parseAllDocuments(readFileSync(path.join(ROOT, 'cdk8s/crds', file), 'utf8')).map((d) => d.toJS() as Crd);

/** Walks a rendered `spec` along the fields imported: the fields it renders beyond them, and each imported field it renders. */
function walk(value: unknown, fields: Fields, at: string, seen: Set<string>, beyond: string[]): void {
  if (fields === true) {
    seen.add(at);
    return;
  }
  if (Array.isArray(value)) {
    for (const item of value) walk(item, fields, at, seen, beyond);
    return;
  }
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (!(k in fields)) beyond.push(`${at}.${k}`);
    else walk(v, fields[k]!, `${at}.${k}`, seen, beyond);
  }
}

/** The imported fields' paths that hold whole schemas. */
const leaves = (fields: Fields, at: string): string[] => (fields === true ? [at] : Object.entries(fields).flatMap(([k, f]) => leaves(f, `${at}.${k}`)));

describe('cdk8s/imports: the third-party kinds trimmed to what the kit renders (scripts/generated/kit-imports.ts)', () => {
  const crdOf = new Map(
    [...vendored('k6.io.yaml'), ...vendored('monitoring.coreos.com.yaml'), ...vendored('gateway.networking.k8s.io.yaml'), ...vendored('postgresql.cnpg.io.yaml')].map((c) => [c.spec.names.kind, c.metadata.name]),
  );
  // Every environment, one with a load test (with remote write, its default), one with a country
  // header (its route removes it) and one whose CloudNativePG volumes name a StorageClass: every
  // object of an imported kind.
  const objects = [
    ...Object.entries(ENVIRONMENTS).flatMap(([name, env]) => synthEnvironment(env, name)),
    ...synthEnvironment({ ...ENVIRONMENTS.prod!, platform: { loadTest: { enabled: true, tenant: 'beta' } } }, 'prod with a load test'),
    ...synthEnvironment({ ...ENVIRONMENTS.staging!, settings: { GEO_COUNTRY_HEADER: 'CF-IPCountry' } }, 'staging with a country header'),
    ...synthEnvironment({ ...ENVIRONMENTS.prod!, database: { cloudnativepg: { ...ENVIRONMENTS.prod!.database!.cloudnativepg, storage: { storageClass: 'fast-ssd' } } } }, 'prod on a StorageClass'),
  ]
    .flatMap((f) => f.objects as { kind: string; spec: unknown }[])
    .filter((o) => crdOf.has(o.kind));

  it('imports exactly the fields the kit renders, of exactly the kinds it renders', () => {
    const seen = new Set<string>();
    const beyond: string[] = [];
    for (const o of objects) {
      const crd = crdOf.get(o.kind)!;
      walk(o.spec, KIT_FIELDS[crd]!, crd, seen, beyond);
    }
    expect(new Set(objects.map((o) => o.kind))).toEqual(new Set(['TestRun', 'ServiceMonitor', 'PrometheusRule', 'HTTPRoute', 'Cluster']));
    expect([...new Set(beyond)]).toEqual([]);
    const imported = Object.entries(KIT_FIELDS).flatMap(([crd, fields]) => leaves(fields, crd));
    expect(imported.filter((p) => !seen.has(p))).toEqual([]);
  });

  it('keeps the vendored schema of each field it keeps, and drops the rest', () => {
    const [run] = parseAllDocuments(trimmedCrdYaml(readFileSync(path.join(ROOT, 'cdk8s/crds/k6.io.yaml'), 'utf8'))).map((d) => d.toJS());
    const [full] = vendored('k6.io.yaml') as unknown as (typeof run)[];
    const schema = (crd: typeof run) => crd.spec.versions[0].schema.openAPIV3Schema;
    expect(Object.keys(schema(run).properties)).toEqual(['apiVersion', 'kind', 'metadata', 'spec']);
    expect(Object.keys(schema(run).properties.spec.properties).sort()).toEqual(['arguments', 'initializer', 'parallelism', 'runner', 'script', 'starter']);
    expect(schema(run).properties.spec.properties.runner.properties.resources.properties.limits).toEqual(schema(full).properties.spec.properties.runner.properties.resources.properties.limits);
    expect(schema(run).properties.spec.required).toEqual(['parallelism', 'script']);
    // The CRD's other kinds and everything else the CRD declares stay as they are.
    expect(run.spec.names).toEqual(full.spec.names);
  });

  it('refuses a field the CRD lacks, and leaving out a field the CRD requires', () => {
    const schema = { type: 'object', required: ['a'], properties: { a: { type: 'string' }, b: { type: 'array', items: { type: 'object', properties: { c: { type: 'string' } } } } } };
    expect(trimSchema(schema, { a: true, b: { c: true } }, 'x')).toEqual(schema);
    expect(trimSchema(schema, { a: true }, 'x')).toEqual({ type: 'object', required: ['a'], properties: { a: { type: 'string' } } });
    expect(() => trimSchema(schema, { a: true, b: { d: true } }, 'x')).toThrow('x.b[].d: not in the CRD');
    expect(() => trimSchema(schema, { b: true }, 'x')).toThrow('x.a: required by the CRD, so the kit must render it');
    expect(() => trimSchema({ type: 'string' }, { a: true }, 'x')).toThrow('x has no fields to choose from');
  });
});
