import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { marketIndexerCrdYaml } from './crd';

/**
 * cdk8s/imports: what `cdk8s import` makes of the CRDs the kit renders objects of (decision
 * D-207). Third-party CRDs are imported trimmed to the kinds and fields the kit renders
 * (`KIT_FIELDS`), from the vendored CRDs in cdk8s/crds, so the k6-operator's 6,000-line
 * TestRun schema yields a few hundred lines of types rather than 20,000; the trimming is
 * mechanical, so a new operator release is a new vendored file and `npm run kit:import`.
 * The project's own MarketIndexer CRD is imported whole: it is for cdk8s users, not the kit.
 */

/** A field the kit renders: `true` keeps its whole schema, an object keeps only the fields named (of an array, its items'). */
export type Fields = true | { readonly [field: string]: Fields };

const POD_SECURITY = { runAsNonRoot: true, runAsUser: true, runAsGroup: true, seccompProfile: { type: true } } as const;
const CONTAINER_SECURITY = { allowPrivilegeEscalation: true, capabilities: { drop: true } } as const;
/** What the kit sets on each of a TestRun's pods (cdk8s/lib/load-test.ts). */
const K6_POD = { metadata: { labels: true }, securityContext: POD_SECURITY, containerSecurityContext: CONTAINER_SECURITY } as const;

/**
 * The fields of `spec` the kit renders, by CRD (metadata.name); a CRD of the vendored files
 * that is not named here is not imported. `test/unit/generated.test.ts` fails when the kit
 * renders a field not listed here, or never renders one that is.
 */
export const KIT_FIELDS: Readonly<Record<string, Fields>> = {
  // cdk8s/lib/load-test.ts
  'testruns.k6.io': {
    parallelism: true,
    script: { configMap: { name: true, file: true } },
    arguments: true,
    runner: { ...K6_POD, image: true, resources: { requests: true, limits: true }, env: { name: true, value: true } },
    initializer: { ...K6_POD, image: true },
    starter: K6_POD,
  },
  // cdk8s/lib/monitoring.ts and operator.ts
  'servicemonitors.monitoring.coreos.com': {
    selector: { matchLabels: true },
    endpoints: { port: true, path: true, interval: true, honorLabels: true, relabelings: { action: true, targetLabel: true, replacement: true } },
  },
  // cdk8s/lib/edge.ts: the tenant's public route, on the platform's Gateway (D-480)
  'httproutes.gateway.networking.k8s.io': {
    parentRefs: { name: true, namespace: true, sectionName: true },
    hostnames: true,
    rules: {
      matches: { path: { type: true, value: true } },
      filters: { type: true, requestHeaderModifier: { remove: true } },
      backendRefs: { name: true, port: true },
      timeouts: { request: true, backendRequest: true },
    },
  },
  // cdk8s/lib/cloudnativepg.ts
  'clusters.postgresql.cnpg.io': {
    instances: true,
    imageName: true,
    storage: { size: true, storageClass: true },
    postgresql: { synchronous: { method: true, number: true, dataDurability: true } },
    resources: { requests: true, limits: true },
    monitoring: { enablePodMonitor: true },
    bootstrap: { initdb: { database: true, owner: true } },
  },
  // cdk8s/lib/alerts.ts (observability/prometheus/rules.ts)
  'prometheusrules.monitoring.coreos.com': {
    groups: { name: true, rules: { alert: true, record: true, expr: true, for: true, labels: true, annotations: true } },
  },
};

type Schema = { type?: string; properties?: Record<string, Schema>; required?: string[]; items?: Schema; [k: string]: unknown };
type Crd = { metadata: { name: string }; spec: { group: string; versions: { storage?: boolean; schema: { openAPIV3Schema: Schema } }[] } };

/** `schema` with only `fields` (throws naming a field the schema lacks, or a required one left out). */
export function trimSchema(schema: Schema, fields: Fields, at: string): Schema {
  if (fields === true) return schema;
  if (schema.type === 'array' && schema.items) return { ...schema, items: trimSchema(schema.items, fields, `${at}[]`) };
  if (!schema.properties) throw new Error(`${at} has no fields to choose from`);
  const unknown = Object.keys(fields).filter((f) => !(f in schema.properties!));
  if (unknown.length) throw new Error(`${unknown.map((f) => `${at}.${f}`).join(', ')}: not in the CRD`);
  const dropped = (schema.required ?? []).filter((f) => !(f in fields));
  if (dropped.length) throw new Error(`${dropped.map((f) => `${at}.${f}`).join(', ')}: required by the CRD, so the kit must render it`);
  // The CRD's order, so the generated types read like the CRD.
  const properties = Object.fromEntries(Object.entries(schema.properties).filter(([f]) => f in fields).map(([f, s]) => [f, trimSchema(s, fields[f]!, `${at}.${f}`)]));
  return { ...schema, properties };
}

/** The CRDs of a vendored file the kit renders objects of, their schemas trimmed to `KIT_FIELDS` (YAML, for `cdk8s import`). */
export function trimmedCrdYaml(text: string, fields: Readonly<Record<string, Fields>> = KIT_FIELDS): string {
  const crds = parseAllDocuments(text)
    .map((d) => d.toJS() as Crd | null)
    .filter((c): c is Crd => !!c && c.metadata.name in fields);
  return crds
    .map((crd) => {
      // The version the kit renders, the stored one: an older one served beside it (Gateway API's v1beta1) would only double the types.
      const versions = crd.spec.versions.filter((v) => v.storage !== false).map((v) => {
        const root = v.schema.openAPIV3Schema;
        const spec = trimSchema(root.properties!.spec!, fields[crd.metadata.name]!, `${crd.metadata.name} spec`);
        // apiVersion, kind and metadata are every object's; status is the operator's to write.
        const properties = Object.fromEntries(Object.entries(root.properties!).filter(([k]) => ['apiVersion', 'kind', 'metadata'].includes(k)));
        return { ...v, schema: { openAPIV3Schema: { ...root, properties: { ...properties, spec }, required: root.required?.filter((r) => r !== 'status') } } };
      });
      return stringify({ ...crd, spec: { ...crd.spec, versions } }, { lineWidth: 0 });
    })
    .join('---\n');
}

const read = (root: string, p: string) => readFileSync(path.join(root, p), 'utf8');

/** What each file of cdk8s/imports is imported from. */
export const KIT_IMPORTS: readonly { output: string; source: string; crd: (root: string) => string }[] = [
  { output: 'cdk8s/imports/k6.io.ts', source: 'cdk8s/crds/k6.io.yaml trimmed to KIT_FIELDS (scripts/generated/kit-imports.ts)', crd: (root) => trimmedCrdYaml(read(root, 'cdk8s/crds/k6.io.yaml')) },
  {
    output: 'cdk8s/imports/monitoring.coreos.com.ts',
    source: 'cdk8s/crds/monitoring.coreos.com.yaml trimmed to KIT_FIELDS (scripts/generated/kit-imports.ts)',
    crd: (root) => trimmedCrdYaml(read(root, 'cdk8s/crds/monitoring.coreos.com.yaml')),
  },
  {
    output: 'cdk8s/imports/gateway.networking.k8s.io.ts',
    source: 'cdk8s/crds/gateway.networking.k8s.io.yaml trimmed to KIT_FIELDS (scripts/generated/kit-imports.ts)',
    crd: (root) => trimmedCrdYaml(read(root, 'cdk8s/crds/gateway.networking.k8s.io.yaml')),
  },
  {
    output: 'cdk8s/imports/postgresql.cnpg.io.ts',
    source: 'cdk8s/crds/postgresql.cnpg.io.yaml trimmed to KIT_FIELDS (scripts/generated/kit-imports.ts)',
    crd: (root) => trimmedCrdYaml(read(root, 'cdk8s/crds/postgresql.cnpg.io.yaml')),
  },
  { output: 'cdk8s/imports/marketindexer.dev.ts', source: 'cdk8s/lib/crd.ts (the CRD of cdk8s/crds/marketindexer.yaml, whole)', crd: () => marketIndexerCrdYaml() },
];

/** Runs `cdk8s import` once on every CRD of `KIT_IMPORTS` (one file, in a scratch directory: it writes one module per API group); the generated modules by output path. */
export function kitImports(root: string): Record<string, string> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kit-import-'));
  try {
    const input = path.join(dir, 'crds.yaml');
    writeFileSync(input, KIT_IMPORTS.map((imp) => imp.crd(root)).join('---\n'));
    execFileSync(process.execPath, [path.join(root, 'node_modules/cdk8s-cli/bin/cdk8s'), 'import', input, '--language', 'typescript', '--output', dir, '--no-check-upgrade'], {
      cwd: dir,
      stdio: 'pipe',
    });
    return Object.fromEntries(KIT_IMPORTS.map((imp) => [imp.output, read(dir, path.basename(imp.output))]));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
