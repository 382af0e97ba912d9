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
  return Promise.all(
    workloads.map((w) => {
      const d = deployments.find((x) => x.metadata.name === w.name)!;
      return rollDeployment({ ...opts, workload: w, strategy: strategyCounts(d.spec, w.replicas), addPod: (name) => tenant.addPod(w, name, source) });
    }),
  );
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
