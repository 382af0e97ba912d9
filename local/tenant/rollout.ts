import { ofKind, workloadsOf, type K8sObject, type RenderedTenant, type Workload } from './manifests';
import type { Pod } from './pod';
import type { PodCode, RunningTenant } from './runner';

/**
 * A new revision of a running tenant applied as the Deployment controller applies it
 * (docs/local-tenant.md#a-rollout): per Deployment, at once, a RollingUpdate bounded by the
 * rendered `maxSurge` and `maxUnavailable`: new pods are created while the total stays within
 * replicas + maxSurge; an old pod is deleted only while the ready pods stay at least replicas −
 * maxUnavailable, so a new pod must be Ready first (readiness gating). Each new pod runs its init
 * containers first (the API's migration, once per pod); a deleted pod leaves the endpoints at once
 * and gets its preStop, then SIGTERM, then SIGKILL at the grace period (the pods' own kill path).
 * Pods the controller would delete are not chosen by age or node: the old ones go not-ready
 * first, then in order.
 */

interface DeploymentObject extends K8sObject {
  spec: { replicas?: number; minReadySeconds?: number; strategy?: { type?: 'RollingUpdate' | 'Recreate'; rollingUpdate?: { maxSurge?: number | string; maxUnavailable?: number | string } } };
}

/** `maxSurge`/`maxUnavailable` as counts: a percentage of replicas, surge rounded up, unavailable down (Kubernetes' rule). */
export function strategyCounts(d: DeploymentObject['spec'], replicas: number): { type: 'RollingUpdate' | 'Recreate'; maxSurge: number; maxUnavailable: number } {
  if (d.strategy?.type === 'Recreate') return { type: 'Recreate', maxSurge: 0, maxUnavailable: replicas };
  const count = (v: number | string | undefined, fallback: string, round: (x: number) => number) => {
    const x = v ?? fallback;
    return typeof x === 'number' ? x : round((Number(x.replace('%', '')) / 100) * replicas);
  };
  const maxSurge = count(d.strategy?.rollingUpdate?.maxSurge, '25%', Math.ceil);
  let maxUnavailable = count(d.strategy?.rollingUpdate?.maxUnavailable, '25%', Math.floor);
  // Both zero would never progress; the API server refuses it, the controller then takes one.
  if (maxSurge === 0 && maxUnavailable === 0) maxUnavailable = 1;
  return { type: 'RollingUpdate', maxSurge, maxUnavailable };
}

export interface RolloutStep {
  at: number;
  deployment: string;
  action: 'create' | 'delete' | 'deleted';
  pod: string;
}

export interface DeploymentRollout {
  deployment: string;
  replicas: number;
  maxSurge: number;
  maxUnavailable: number;
  /** The most pods (old and new, not yet deleted) that existed at once. */
  mostPods: number;
  /** The fewest Ready pods seen once the rollout started. */
  fewestReady: number;
  steps: RolloutStep[];
}

/**
 * Rolls every Deployment of the tenant to `to`'s, its pods running `code`; resolves when each
 * has only new pods, all Ready, and the old ones are gone. `revision` names the new pods
 * (`<deployment>-<revision>-<n>`), as a ReplicaSet's hash does.
 */
export async function rollTenant(opts: { tenant: RunningTenant; to: RenderedTenant; code: PodCode; revision: string; log?: (line: string) => void }): Promise<DeploymentRollout[]> {
  const { tenant } = opts;
  const source = tenant.podSource(opts.to.objects, opts.code);
  const deployments = ofKind<DeploymentObject>(opts.to.objects, 'Deployment');
  const workloads = workloadsOf(opts.to.objects).filter((w) => w.kind === 'Deployment' && tenant.podsOf(w.name).length > 0);
  const rolled = await Promise.all(
    workloads.map((w) => {
      const d = deployments.find((x) => x.metadata.name === w.name)!;
      return rollDeployment({ ...opts, workload: w, strategy: strategyCounts(d.spec, w.replicas), addPod: (name) => tenant.addPod(w, name, source) });
    }),
  );
  for (const d of deployments) appliedTemplates(tenant).set(d.metadata.name, templateOf(d));
  return rolled;
}

/** The pod template each Deployment of a running tenant was last applied with, as the API server keeps it. */
const applied = new WeakMap<RunningTenant, Map<string, string>>();
const templateOf = (d: K8sObject) => JSON.stringify((d as unknown as { spec: { template: unknown } }).spec.template);
function appliedTemplates(tenant: RunningTenant): Map<string, string> {
  let m = applied.get(tenant);
  if (!m) applied.set(tenant, (m = new Map(ofKind<DeploymentObject>(tenant.rendered?.objects ?? [], 'Deployment').map((d) => [d.metadata.name, templateOf(d)]))));
  return m;
}

/**
 * `kubectl apply` of a new rendering of a running tenant, as the controllers then act on it
 * (docs/local-tenant.md#a-rollout): a Deployment that is new gets its pods; one whose pod
 * template changed is rolled as `rollTenant` rolls it; one the rendering no longer has loses its
 * pods; one unchanged is left alone. Each pod runs the code of its container's image
 * (`codeOf`), so two releases can run side by side (a re-index's builder beside the live
 * indexer). Resolves when every Deployment of `to` has only its new pods, all Ready.
 */
export async function applyTenant(opts: { tenant: RunningTenant; to: RenderedTenant; codeOf: (image: string) => PodCode; revision: string; log?: (line: string) => void }): Promise<DeploymentRollout[]> {
  const { tenant } = opts;
  const templates = appliedTemplates(tenant);
  const deployments = ofKind<DeploymentObject>(opts.to.objects, 'Deployment');
  const workloads = workloadsOf(opts.to.objects).filter((w) => w.kind === 'Deployment' && templates.get(w.name) !== templateOf(deployments.find((d) => d.metadata.name === w.name)!));
  const removed = [...templates.keys()].filter((name) => !deployments.some((d) => d.metadata.name === name));
  const rolled = await Promise.all([
    ...workloads.map((w) => {
      const d = deployments.find((x) => x.metadata.name === w.name)!;
      const source = tenant.podSource(opts.to.objects, opts.codeOf(w.pod.containers[0]!.image));
      return rollDeployment({ ...opts, workload: w, strategy: strategyCounts(d.spec, w.replicas), addPod: (name) => tenant.addPod(w, name, source) });
    }),
    ...removed.map(async (name): Promise<DeploymentRollout> => {
      const pods = tenant.podsOf(name);
      const report: DeploymentRollout = { deployment: name, replicas: 0, maxSurge: 0, maxUnavailable: 0, mostPods: pods.length, fewestReady: 0, steps: [] };
      await Promise.all(
        pods.map(async (p) => {
          report.steps.push({ at: Date.now(), deployment: name, action: 'delete', pod: p.name });
          await tenant.deletePod(p);
          report.steps.push({ at: Date.now(), deployment: name, action: 'deleted', pod: p.name });
        }),
      );
      return report;
    }),
  ]);
  for (const name of removed) templates.delete(name);
  for (const d of deployments) templates.set(d.metadata.name, templateOf(d));
  return rolled;
}

async function rollDeployment(opts: {
  tenant: RunningTenant;
  workload: Workload;
  strategy: ReturnType<typeof strategyCounts>;
  revision: string;
  addPod: (name: string) => Pod;
  log?: (line: string) => void;
}): Promise<DeploymentRollout> {
  const { tenant, workload: w, strategy } = opts;
  const log = opts.log ?? (() => {});
  const n = w.replicas;
  const old = new Set(tenant.podsOf(w.name));
  const fresh: Pod[] = [];
  const deleting = new Set<Pod>();
  const deletions: Promise<void>[] = [];
  const report: DeploymentRollout = { deployment: w.name, replicas: n, maxSurge: strategy.maxSurge, maxUnavailable: strategy.maxUnavailable, mostPods: old.size, fewestReady: n, steps: [] };
  const step = (action: RolloutStep['action'], pod: Pod) => {
    report.steps.push({ at: Date.now(), deployment: w.name, action, pod: pod.name });
    log(`rollout ${w.name}: ${action} ${pod.name}`);
  };
  let created = 0;
  let wake: () => void = () => {};
  const stopWatching = tenant.onReadyChange(() => wake());
  try {
    for (;;) {
      const alive = [...old].filter((p) => !deleting.has(p));
      const readyNew = fresh.filter((p) => p.ready()).length;
      const readyOld = alive.filter((p) => p.ready()).length;
      report.fewestReady = Math.min(report.fewestReady, readyNew + readyOld);
      if (alive.length === 0 && readyNew === n) break;
      // Scale the new revision up within replicas + maxSurge.
      const room = Math.min(n + strategy.maxSurge - (alive.length + fresh.length), n - fresh.length);
      for (let i = 0; i < room; i++) {
        const pod = opts.addPod(`${w.name}-${opts.revision}-${created++}`);
        fresh.push(pod);
        step('create', pod);
        void pod.start();
      }
      report.mostPods = Math.max(report.mostPods, alive.length + fresh.length);
      // Scale the old one down while Ready pods stay at replicas − maxUnavailable (not-ready old pods first).
      const minAvailable = n - strategy.maxUnavailable;
      const newUnavailable = fresh.length - readyNew;
      const down = Math.max(0, Math.min(alive.length, alive.length + fresh.length - minAvailable - newUnavailable));
      for (const pod of [...alive.filter((p) => !p.ready()), ...alive.filter((p) => p.ready())].slice(0, down)) {
        deleting.add(pod);
        step('delete', pod);
        deletions.push(tenant.deletePod(pod).then(() => step('deleted', pod)));
      }
      // Wait for a readiness change (a new pod Ready, or a deleted one leaving), as the controller waits on its informers.
      await new Promise<void>((resolve) => {
        wake = resolve;
        if (room > 0 || down > 0) setImmediate(resolve);
      });
    }
    await Promise.all(deletions);
    return report;
  } finally {
    stopWatching();
  }
}
