import type { K8sObject, RenderedTenant, Workload } from '../../local/tenant/manifests';
import type { Pod } from '../../local/tenant/pod';
import { applyTenant, rollTenant, strategyCounts } from '../../local/tenant/rollout';
import type { RunningTenant } from '../../local/tenant/runner';

/**
 * The harness's rollout (local/tenant/rollout.ts) against pods whose readiness the test decides:
 * the Deployment controller's bounds as rendered, and readiness gating (no old pod deleted
 * before a new one is Ready when maxUnavailable is 0).
 */

interface FakePod {
  name: string;
  workload: string;
  ready: boolean;
  deleted: boolean;
}

function fakeTenant(initial: Record<string, number>) {
  const pods: FakePod[] = Object.entries(initial).flatMap(([w, n]) => Array.from({ length: n }, (_, i) => ({ name: `${w}-${i}`, workload: w, ready: true, deleted: false })));
  const listeners = new Set<() => void>();
  const changed = () => listeners.forEach((f) => f());
  const history: string[] = [];
  const asPod = (p: FakePod) => ({ name: p.name, ready: () => p.ready, start: async () => {} }) as unknown as Pod;
  const handles = new Map<FakePod, Pod>();
  const handle = (p: FakePod) => handles.get(p) ?? (handles.set(p, asPod(p)), handles.get(p)!);
  const tenant = {
    podsOf: (w: string) => pods.filter((p) => p.workload === w).map(handle),
    podSource: () => ({}),
    addPod: (w: Workload, name: string) => {
      const p = { name, workload: w.name, ready: false, deleted: false };
      pods.push(p);
      // Terminating pods aside, as the controller counts them.
      const mine = pods.filter((x) => x.workload === w.name && !x.deleted);
      history.push(`+${name} (${mine.length} pods, ${mine.filter((x) => x.ready).length} ready)`);
      return handle(p);
    },
    deletePod: async (h: Pod) => {
      const p = pods.find((x) => handle(x) === h)!;
      p.ready = false;
      p.deleted = true;
      history.push(`-${p.name}`);
      changed();
      await new Promise((r) => setTimeout(r, 5));
      pods.splice(pods.indexOf(p), 1);
    },
    onReadyChange: (f: () => void) => (listeners.add(f), () => void listeners.delete(f)),
  };
  /** Makes the oldest not-ready new pod Ready. */
  const becomeReady = () => {
    const p = pods.find((x) => !x.ready && /-r\d+-/.test(x.name));
    if (p) {
      p.ready = true;
      history.push(`ready ${p.name}`);
      changed();
    }
    return p !== undefined;
  };
  return { tenant: tenant as unknown as RunningTenant, pods, history, becomeReady, tenantObject: tenant as Record<string, unknown> };
}

const deployment = (name: string, replicas: number, rollingUpdate: Record<string, number | string>, image = 'market-indexer:1'): K8sObject =>
  ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: { replicas, strategy: { type: 'RollingUpdate', rollingUpdate }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image }] } } },
  }) as K8sObject;
const rendered = (...objects: K8sObject[]): RenderedTenant => ({ tenant: 't', environment: 'e', namespace: 'mi-t', objects, platform: [] });

describe('the harness rolls a Deployment as its controller does', () => {
  it('resolves maxSurge up and maxUnavailable down from percentages, and never both zero', () => {
    expect(strategyCounts({}, 4)).toEqual({ type: 'RollingUpdate', maxSurge: 1, maxUnavailable: 1 });
    expect(strategyCounts({ strategy: { rollingUpdate: { maxSurge: '30%', maxUnavailable: '30%' } } }, 5)).toEqual({ type: 'RollingUpdate', maxSurge: 2, maxUnavailable: 1 });
    expect(strategyCounts({ strategy: { rollingUpdate: { maxSurge: 0, maxUnavailable: 0 } } }, 2)).toEqual({ type: 'RollingUpdate', maxSurge: 0, maxUnavailable: 1 });
    expect(strategyCounts({ strategy: { type: 'Recreate' } }, 3)).toEqual({ type: 'Recreate', maxSurge: 0, maxUnavailable: 3 });
  });

  it('maxSurge 1, maxUnavailable 0: one new pod at a time, an old one deleted only once a new one is Ready', async () => {
    const f = fakeTenant({ api: 2 });
    const done = rollTenant({ tenant: f.tenant, to: rendered(deployment('api', 2, { maxSurge: 1, maxUnavailable: 0 })), code: { root: '/' }, revision: 'r2' });
    let settled = false;
    void done.then(() => (settled = true));
    for (let i = 0; i < 50 && !settled; i++) {
      await new Promise((r) => setTimeout(r, 10));
      f.becomeReady();
    }
    const [r] = await done;
    expect(f.history).toEqual(['+api-r2-0 (3 pods, 2 ready)', 'ready api-r2-0', '-api-0', '+api-r2-1 (3 pods, 2 ready)', 'ready api-r2-1', '-api-1']);
    expect(r).toMatchObject({ deployment: 'api', replicas: 2, maxSurge: 1, maxUnavailable: 0, mostPods: 3, fewestReady: 2 });
    expect(f.pods.map((p) => p.name)).toEqual(['api-r2-0', 'api-r2-1']);
  });

  it('holds the old pods while the new one never gets Ready', async () => {
    const f = fakeTenant({ api: 2 });
    void rollTenant({ tenant: f.tenant, to: rendered(deployment('api', 2, { maxSurge: 1, maxUnavailable: 0 })), code: { root: '/' }, revision: 'r2' });
    await new Promise((r) => setTimeout(r, 50));
    expect(f.history).toEqual(['+api-r2-0 (3 pods, 2 ready)']);
    expect(f.pods.filter((p) => p.ready).map((p) => p.name)).toEqual(['api-0', 'api-1']);
  });

  it('maxSurge 0, maxUnavailable 1: deletes first, then replaces, every Deployment at once', async () => {
    const f = fakeTenant({ api: 2, indexer: 1 });
    const done = rollTenant({ tenant: f.tenant, to: rendered(deployment('api', 2, { maxSurge: 0, maxUnavailable: 1 }), deployment('indexer', 1, { maxSurge: 1, maxUnavailable: 0 })), code: { root: '/' }, revision: 'r2' });
    let settled = false;
    void done.then(() => (settled = true));
    for (let i = 0; i < 80 && !settled; i++) {
      await new Promise((r) => setTimeout(r, 10));
      f.becomeReady();
    }
    const rolls = await done;
    expect(rolls.map((r) => [r.deployment, r.mostPods, r.fewestReady])).toEqual([
      ['api', 2, 1],
      ['indexer', 2, 1],
    ]);
    expect(f.history.filter((h) => h.includes('api')).slice(0, 2)).toEqual(['-api-0', '+api-r2-0 (2 pods, 1 ready)']);
    expect(f.pods.map((p) => p.name).sort()).toEqual(['api-r2-0', 'api-r2-1', 'indexer-r2-0']);
  });
});

describe('the harness applies a new rendering as kubectl apply and the controllers do', () => {
  it('gives a new Deployment its pods with its image\'s code, rolls a changed one, leaves an unchanged one and empties a removed one', async () => {
    const f = fakeTenant({ api: 1, indexer: 1, old: 1 });
    const surge = { maxSurge: 1, maxUnavailable: 0 };
    f.tenantObject.rendered = rendered(deployment('api', 1, surge), deployment('indexer', 1, surge), deployment('old', 1, surge));
    const codes: string[] = [];
    f.tenantObject.podSource = (_objects: unknown, code: { root: string }) => (codes.push(code.root), {});
    const done = applyTenant({
      tenant: f.tenant,
      to: rendered(deployment('api', 1, surge, 'market-indexer:2'), deployment('indexer', 1, surge), deployment('build', 1, surge, 'market-indexer:2')),
      codeOf: (image) => ({ root: image.endsWith(':2') ? '/next' : '/current' }),
      revision: 'r2',
    });
    let settled = false;
    void done.then(() => (settled = true));
    for (let i = 0; i < 80 && !settled; i++) {
      await new Promise((r) => setTimeout(r, 10));
      f.becomeReady();
    }
    const rolls = await done;
    expect(rolls.map((r) => r.deployment).sort()).toEqual(['api', 'build', 'old']);
    expect(f.pods.map((p) => p.name).sort()).toEqual(['api-r2-0', 'build-r2-0', 'indexer-0']);
    expect(codes).toEqual(['/next', '/next']);
    // Applied again unchanged: nothing to do.
    const again = await applyTenant({ tenant: f.tenant, to: rendered(deployment('api', 1, surge, 'market-indexer:2'), deployment('indexer', 1, surge), deployment('build', 1, surge, 'market-indexer:2')), codeOf: () => ({ root: '/' }), revision: 'r3' });
    expect(again).toEqual([]);
  });
});
