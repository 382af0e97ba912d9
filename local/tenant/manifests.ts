import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { ENVIRONMENTS } from '../../cdk8s/environments';
import { deepMerge } from '../../cdk8s/lib/resolve';
import type { EnvironmentInput } from '../../cdk8s/lib/values';
import { synthEnvironment } from '../../cdk8s/synth';

/**
 * The objects a tenant is deployed as: what `npm run synth` renders for it (in process, the
 * same code), or what a directory of rendered files holds (`npm run synth -- --out`, or `helm
 * template` output split per tenant). The harness reads nothing else of the kit.
 */

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [k: string]: unknown;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    secretKeyRef?: { name: string; key: string; optional?: boolean };
    configMapKeyRef?: { name: string; key: string; optional?: boolean };
    fieldRef?: { fieldPath: string };
  };
}

export interface Probe {
  httpGet?: { path?: string; port: number | string; scheme?: string };
  tcpSocket?: { port: number | string };
  exec?: { command: string[] };
  initialDelaySeconds?: number;
  periodSeconds?: number;
  timeoutSeconds?: number;
  failureThreshold?: number;
  successThreshold?: number;
}

export interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  envFrom?: { configMapRef?: { name: string; optional?: boolean }; secretRef?: { name: string; optional?: boolean }; prefix?: string }[];
  ports?: { name?: string; containerPort: number; protocol?: string }[];
  startupProbe?: Probe;
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  lifecycle?: { preStop?: { sleep?: { seconds: number }; exec?: unknown; httpGet?: unknown } };
  volumeMounts?: { name: string; mountPath: string }[];
}

export interface PodSpec {
  initContainers?: Container[];
  containers: Container[];
  terminationGracePeriodSeconds?: number;
  restartPolicy?: 'Always' | 'OnFailure' | 'Never';
}

export interface Workload {
  kind: 'Deployment' | 'StatefulSet' | 'Job';
  name: string;
  replicas: number;
  labels: Record<string, string>;
  pod: PodSpec;
}

export interface RenderedTenant {
  tenant: string;
  environment: string;
  namespace: string;
  objects: K8sObject[];
  /** The environment's platform part (dashboards, the operator). */
  platform: K8sObject[];
}

/** `npm run tenant -- --values`: an environment file's shape, merged over the environment. */
export function withOverlay(env: EnvironmentInput, overlay: unknown): EnvironmentInput {
  return overlay ? deepMerge(env, overlay) : env;
}

export class TenantNotFoundError extends Error {
  override name = 'TenantNotFoundError';
}

/** Renders the tenant with the kit, as `npm run synth -- --env <env>` does. */
export function renderTenant(envName: string, tenant: string, overlay?: unknown): RenderedTenant {
  const env = ENVIRONMENTS[envName];
  if (!env) throw new TenantNotFoundError(`unknown environment "${envName}": ${Object.keys(ENVIRONMENTS).join(', ')}`);
  if (!Object.hasOwn(env.tenants, tenant)) throw new TenantNotFoundError(`environment ${envName} has no tenant "${tenant}": ${Object.keys(env.tenants).join(', ')}`);
  const files = synthEnvironment(withOverlay(env, overlay), `cdk8s/environments/${envName}.ts`);
  const own = files.find((f) => f.tenant === tenant)!;
  const platform = files.find((f) => f.tenant === undefined)!;
  return fromObjects(own.objects as K8sObject[], platform.objects as K8sObject[]);
}

/** Reads `<dir>/<tenant>.yaml` and `<dir>/platform.yaml` (what `npm run synth` writes). */
export function readRenderedTenant(dir: string, tenant: string): RenderedTenant {
  const read = (file: string) =>
    parseAllDocuments(readFileSync(path.join(dir, file), 'utf8'))
      .map((d) => d.toJSON() as K8sObject | null)
      .filter((o): o is K8sObject => o !== null);
  let platform: K8sObject[] = [];
  try {
    platform = read('platform.yaml');
  } catch {
    // A directory without the platform part: no dashboards to check.
  }
  return fromObjects(read(`${tenant}.yaml`), platform);
}

/** A tenant from its objects (its Namespace among them) and the platform part beside it. */
export function fromObjects(objects: K8sObject[], platform: K8sObject[]): RenderedTenant {
  const ns = objects.find((o) => o.kind === 'Namespace');
  if (!ns) throw new TenantNotFoundError('the rendered tenant has no Namespace');
  const labels = ns.metadata.labels ?? {};
  return {
    tenant: labels['marketindexer.dev/tenant'] ?? ns.metadata.name.replace(/^mi-/, ''),
    environment: labels['marketindexer.dev/environment'] ?? '',
    namespace: ns.metadata.name,
    objects,
    platform,
  };
}

export const ofKind = <T extends K8sObject = K8sObject>(objects: K8sObject[], kind: string): T[] => objects.filter((o) => o.kind === kind) as T[];

/**
 * The workloads whose pods the harness runs, with the replica count the environment renders:
 * a Deployment's `replicas`, or its autoscaler's `minReplicas` when it has none.
 */
export function workloadsOf(objects: K8sObject[]): Workload[] {
  const hpas = ofKind<K8sObject & { spec: { scaleTargetRef: { kind: string; name: string }; minReplicas?: number } }>(objects, 'HorizontalPodAutoscaler');
  return objects
    .filter((o): o is K8sObject & { spec: Record<string, unknown> } => ['Deployment', 'StatefulSet', 'Job'].includes(o.kind))
    .map((o) => {
      const spec = o.spec as { replicas?: number; parallelism?: number; template: { metadata?: { labels?: Record<string, string> }; spec: PodSpec } };
      const hpa = hpas.find((h) => h.spec.scaleTargetRef.kind === o.kind && h.spec.scaleTargetRef.name === o.metadata.name);
      const replicas = o.kind === 'Job' ? (spec.parallelism ?? 1) : (spec.replicas ?? hpa?.spec.minReplicas ?? 1);
      return { kind: o.kind as Workload['kind'], name: o.metadata.name, replicas, labels: spec.template.metadata?.labels ?? {}, pod: spec.template.spec };
    });
}
