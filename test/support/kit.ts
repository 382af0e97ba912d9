import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import addFormats from 'ajv-formats';
import Ajv from 'ajv';
import { parseAllDocuments, stringify } from 'yaml';
import { KitInputError } from '../../cdk8s/lib/resolve';
import type { EnvironmentInput } from '../../cdk8s/lib/values';
import { synthEnvironment } from '../../cdk8s/synth';
import { ensureTool } from '../../scripts/kit-tools';

export const ROOT = path.resolve(__dirname, '../..');
export const CHART = path.join(ROOT, 'charts/market-indexer');
export const KUBE_VERSION = '1.33.0';
export const ENVIRONMENT_NAMES = ['dev', 'staging', 'prod'] as const;

export type Manifest = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [k: string]: unknown;
};

const run = promisify(execFile);

export const parseManifests = (yaml: string): Manifest[] =>
  parseAllDocuments(yaml)
    .map((d) => d.toJSON() as Manifest | null)
    .filter((d): d is Manifest => d !== null);

export const keyOf = (o: Manifest) => `${o.kind} ${o.metadata.namespace ?? '-'}/${o.metadata.name}`;

/** Helm's own bookkeeping labels, the only thing allowed to differ from the cdk8s output. */
export const HELM_BOOKKEEPING = ['helm.sh/chart', 'app.kubernetes.io/managed-by'];

export function withoutBookkeeping(o: Manifest): Manifest {
  const copy = structuredClone(o);
  const template = (copy as { spec?: { template?: { metadata?: { labels?: Record<string, string> } } } }).spec?.template?.metadata;
  for (const labels of [copy.metadata.labels, template?.labels]) {
    for (const l of HELM_BOOKKEEPING) if (labels) delete labels[l];
  }
  return copy;
}

/** `helm template` of the chart with values files (paths) or values objects; rejects with helm's stderr. */
export async function helmTemplate(values: (string | object)[], release = 'market-indexer'): Promise<Manifest[]> {
  const helm = await ensureTool('helm');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kit-values-'));
  const files = values.map((v, i) => {
    if (typeof v === 'string') return v;
    const f = path.join(dir, `values-${i}.yaml`);
    writeFileSync(f, stringify(v));
    return f;
  });
  const { stdout } = await run(helm, ['template', release, CHART, '--kube-version', KUBE_VERSION, ...files.flatMap((f) => ['-f', f])], {
    maxBuffer: 64 * 1024 * 1024,
  });
  return parseManifests(stdout);
}

/**
 * The chart's NOTES.txt as Helm renders it. `helm install --dry-run` needs a cluster, so the
 * notes are rendered as an ordinary template of a copy of the chart.
 */
export async function helmNotes(values: object): Promise<string> {
  const bin = await ensureTool('helm');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kit-notes-'));
  const chart = path.join(dir, 'chart');
  cpSync(CHART, chart, { recursive: true });
  renameSync(path.join(chart, 'templates/NOTES.txt'), path.join(chart, 'templates/notes.yaml'));
  writeFileSync(path.join(dir, 'values.yaml'), stringify(values));
  const { stdout } = await run(bin, ['template', 'market-indexer', chart, '-f', path.join(dir, 'values.yaml'), '--show-only', 'templates/notes.yaml']);
  return stdout.replace(/^---\n# Source: .*\n/, '');
}

export async function helm(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const bin = await ensureTool('helm');
  try {
    const { stdout, stderr } = await run(bin, args, { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

// --- validation of rendered objects ------------------------------------------------------

type Validating = new (data: unknown) => { validate(): void };

/** The Kubernetes 1.33 (kubernetes-models 4.5) or prometheus-operator model of an object. */
function modelOf(o: Manifest): Validating {
  const module = o.apiVersion.startsWith('monitoring.coreos.com/')
    ? `@kubernetes-models/prometheus-operator/${o.apiVersion}/${o.kind}`
    : `kubernetes-models/${o.apiVersion}/${o.kind}`;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require(module) as Record<string, Validating>)[o.kind]!;
}

const ajv = new Ajv({ allErrors: true, strict: false });
// The OpenAPI formats of the vendored CRDs (the k6-operator's uses these).
ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 });
ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) });
addFormats(ajv, ['date-time']);
const crdValidators = new Map<string, ReturnType<typeof ajv.compile>>();
for (const crd of ['monitoring.coreos.com', 'k6.io', 'gateway.networking.k8s.io', 'postgresql.cnpg.io'].flatMap((f) => parseManifests(readFileSync(path.join(ROOT, `cdk8s/crds/${f}.yaml`), 'utf8')))) {
  const spec = crd.spec as { group: string; names: { kind: string }; versions: { name: string; schema: { openAPIV3Schema: object } }[] };
  for (const v of spec.versions) crdValidators.set(`${spec.group}/${v.name}/${spec.names.kind}`, ajv.compile(v.schema.openAPIV3Schema));
}

/**
 * Problems of one object against the Kubernetes 1.33 schemas, or for prometheus-operator kinds
 * against the complete upstream schema and the CRD vendored in cdk8s/crds/ (for the k6-operator's
 * and Gateway API's, the vendored CRD alone: it is the upstream one, unchanged). An object of a kind
 * with no schema here is a problem too, so nothing goes unchecked.
 */
export function schemaProblems(o: Manifest): string[] {
  const problems: string[] = [];
  // k6-operator, Gateway API and CloudNativePG kinds have no model package here: the vendored CRD's schema is theirs.
  const k6 = o.apiVersion.startsWith('k6.io/') || o.apiVersion.startsWith('gateway.networking.k8s.io/') || o.apiVersion.startsWith('postgresql.cnpg.io/');
  try {
    if (!k6) new (modelOf(o))(o).validate();
  } catch (err) {
    problems.push(`${keyOf(o)}: ${(err as Error).message}`);
  }
  const crd = crdValidators.get(`${o.apiVersion}/${o.kind}`);
  if (o.apiVersion.startsWith('monitoring.coreos.com/') || k6) {
    if (!crd) problems.push(`${keyOf(o)}: no vendored CRD`);
    else if (!crd(o)) problems.push(`${keyOf(o)}: ${ajv.errorsText(crd.errors)}`);
  }
  return problems;
}


// --- the restricted Pod Security profile -------------------------------------------------

type PodSecurityView = {
  automountServiceAccountToken?: boolean;
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
  securityContext?: Record<string, unknown>;
  volumes?: Record<string, unknown>[];
  initContainers?: ContainerSecurityView[];
  containers: ContainerSecurityView[];
};
type ContainerSecurityView = { name: string; resources?: { requests?: Record<string, unknown>; limits?: Record<string, unknown> }; securityContext?: Record<string, unknown> };

/** The volume types the restricted profile admits (Kubernetes Pod Security Standards). */
const RESTRICTED_VOLUME_TYPES = ['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'persistentVolumeClaim', 'projected', 'secret'];

/**
 * What keeps a pod spec from the namespace's `restricted` Pod Security profile, and from the
 * kit's own rules on top of it (no service-account token, a read-only root filesystem, requests
 * and limits on every container). `where` prefixes each problem.
 */
export function restrictedPodProblems(where: string, pod: PodSecurityView): string[] {
  const v: string[] = [];
  if (pod.automountServiceAccountToken !== false) v.push(`${where}: mounts a service-account token`);
  const ps = pod.securityContext ?? {};
  if (ps.runAsNonRoot !== true || (ps.seccompProfile as { type?: string })?.type !== 'RuntimeDefault' || ps.runAsUser === 0) v.push(`${where}: pod security`);
  if (pod.hostNetwork || pod.hostPID || pod.hostIPC) v.push(`${where}: host namespaces`);
  for (const vol of pod.volumes ?? []) {
    const type = Object.keys(vol).find((k) => k !== 'name');
    if (!type || !RESTRICTED_VOLUME_TYPES.includes(type)) v.push(`${where}: volume ${String(vol.name)} of type ${type}`);
  }
  for (const c of [...(pod.initContainers ?? []), ...pod.containers]) {
    const r = c.resources;
    if (!r?.requests?.cpu || !r.requests.memory || !r.limits?.cpu || !r.limits.memory) v.push(`${where}/${c.name}: requests and limits`);
    const s = c.securityContext ?? {};
    const caps = (s.capabilities ?? {}) as { drop?: string[]; add?: string[] };
    if (
      s.allowPrivilegeEscalation !== false ||
      s.readOnlyRootFilesystem !== true ||
      s.runAsNonRoot !== true ||
      s.privileged === true ||
      s.runAsUser === 0 ||
      !(caps.drop ?? []).includes('ALL') ||
      (caps.add ?? []).some((cap) => cap !== 'NET_BIND_SERVICE')
    ) {
      v.push(`${where}/${c.name}: container security`);
    }
  }
  return v;
}

/** What the cdk8s app says of an environment it refuses (its problems, one a line), or `accepted`. */
export function cdk8sRefusal(input: EnvironmentInput): string {
  try {
    synthEnvironment(input, 'values');
  } catch (err) {
    if (err instanceof KitInputError) return err.problems.join('\n');
    throw err;
  }
  return 'accepted';
}

/** What `helm template` prints when it refuses the same environment's values, or `accepted`. */
export async function helmRefusal(input: EnvironmentInput): Promise<string> {
  try {
    await helmTemplate([input]);
    return 'accepted';
  } catch (err) {
    return (err as { stderr: string }).stderr;
  }
}
