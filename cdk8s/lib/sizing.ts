import { parseQuantity } from './quantity';
import type { Resources, TenantValues } from './values';

/** Resources of the one-shot migration init container of the API pods. */
export const MIGRATE_RESOURCES: Resources = { requests: { cpu: '50m', memory: '96Mi' }, limits: { cpu: '500m', memory: '256Mi' } };
/**
 * Resources of a simulator-source tenant's chain: the simulator and 20,000 slots of RPC history
 * (about 140 MB); rebuilding after a restart takes a core while it lasts (about 1,800 slots/s).
 */
export const CHAIN_RESOURCES: Resources = { requests: { cpu: '100m', memory: '256Mi' }, limits: { cpu: '1', memory: '512Mi' } };
/**
 * Resources of the chart's `helm test` Pod (check/main.ts; ~92 MB peak RSS measured under plain
 * node). Below an API pod's, so a quota that admits a rollout's surge API pod admits it once the
 * rollout is done.
 */
export const CHECK_RESOURCES: Resources = { requests: { cpu: '50m', memory: '96Mi' }, limits: { cpu: '500m', memory: '192Mi' } };
/** Resources of each dev store (PostgreSQL, Redis). */
export const DEV_STORE_RESOURCES: Resources = { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '512Mi' } };

/**
 * The operator's V8 heap cap, in MB, for its pods' memory limit: half of the limit (D-420). V8
 * grows the heap lazily and lets it reach the cap before it collects hard, so the cap must leave
 * the rest of the process room under the limit: about 150 MB with no tenant (cdk8s and its
 * schemas, code, buffers) and 0.05 MB a tenant more, while the heap takes about 60 MB and
 * 0.14 MB a tenant. Half holds both from 512Mi (256 MB, 1,000 tenants) up; the chart derives the
 * same number (`market-indexer.heapMb`).
 */
export function operatorHeapMb(memoryLimit: string): number {
  return Math.floor(parseQuantity(memoryLimit) / 2 ** 21);
}

/**
 * The smallest memory limit the kit renders for the operator (D-445): half of it, the heap cap,
 * holds the process's 60 MB of heap and about 500 tenants, and the other half its 90 MB outside
 * the heap. Below it the operator would crash-loop on V8's out-of-memory before reconciling
 * anything. The chart refuses the same (`templates/operator.yaml`).
 */
export const OPERATOR_MIN_MEMORY_LIMIT = '256Mi';

/** The problem with an operator memory limit below OPERATOR_MIN_MEMORY_LIMIT, or undefined. */
export function operatorMemoryProblem(memoryLimit: string): string | undefined {
  if (parseQuantity(memoryLimit) >= parseQuantity(OPERATOR_MIN_MEMORY_LIMIT)) return undefined;
  return `platform.operator.resources.limits.memory: at least ${OPERATOR_MIN_MEMORY_LIMIT} (the operator caps its heap at half of it, and takes about 150 MB with no tenant), got "${memoryLimit}"`;
}

type Totals = { requestsCpu: number; requestsMemory: number; limitsCpu: number; limitsMemory: number; pods: number; pvcs: number };

/** A pod's effective resources: the larger of its containers' sum and its largest init container. */
function podTotals(containers: Resources[], init: Resources[] = []): Omit<Totals, 'pods' | 'pvcs'> {
  const sum = (f: (r: Resources) => string, list: Resources[]) => list.reduce((a, r) => a + parseQuantity(f(r)), 0);
  const max = (f: (r: Resources) => string, list: Resources[]) => Math.max(0, ...list.map((r) => parseQuantity(f(r))));
  const pick = (f: (r: Resources) => string) => Math.max(sum(f, containers), max(f, init));
  return {
    requestsCpu: pick((r) => r.requests.cpu),
    requestsMemory: pick((r) => r.requests.memory),
    limitsCpu: pick((r) => r.limits.cpu),
    limitsMemory: pick((r) => r.limits.memory),
  };
}

/** Pods of each workload at the peak of a rollout (one surge pod each), and what they take. */
export function worstCase(v: TenantValues): { apiPods: number; indexerPods: number; devPods: number; chainPods: number; databasePods: number; totals: Totals } {
  const apiPods = (v.api.autoscaling.enabled ? v.api.autoscaling.maxReplicas : v.api.replicas) + 1;
  const indexerPods = v.indexer.replicas + 1;
  const devPods = v.devStores.enabled ? 2 : 0;
  // A StatefulSet replaces its pod without a surge.
  const chainPods = v.source.type === 'simulator' ? 1 : 0;
  // CloudNativePG replaces an instance in place, but a joining instance's job pod (a base
  // backup, with the instances' resources) runs beside the others; one volume per instance.
  const cnpg = v.database.cloudnativepg;
  const databasePods = cnpg.enabled ? cnpg.instances + 1 : 0;
  const databaseVolumes = cnpg.enabled ? cnpg.instances : 0;
  const database = podTotals([cnpg.resources]);
  const api = podTotals([v.api.resources], [MIGRATE_RESOURCES]);
  const indexer = podTotals([v.indexer.resources]);
  const dev = podTotals([DEV_STORE_RESOURCES]);
  const chain = podTotals([CHAIN_RESOURCES]);
  const total = (k: keyof typeof api) => api[k] * apiPods + indexer[k] * indexerPods + dev[k] * devPods + chain[k] * chainPods + database[k] * databasePods;
  return {
    apiPods,
    indexerPods,
    devPods,
    chainPods,
    databasePods,
    totals: {
      requestsCpu: total('requestsCpu'),
      requestsMemory: total('requestsMemory'),
      limitsCpu: total('limitsCpu'),
      limitsMemory: total('limitsMemory'),
      pods: apiPods + indexerPods + devPods + chainPods + databasePods,
      pvcs: devPods + chainPods + databaseVolumes,
    },
  };
}

const cpu = (n: number) => `${Math.round(n * 1000)}m`;
const mem = (n: number) => `${Math.ceil(n / 2 ** 20)}Mi`;

/** The quota must admit every pod at the peak of a rollout (at the autoscaler's maximum). */
export function quotaProblems(v: TenantValues): string[] {
  if (!v.quota.enabled) return [];
  const w = worstCase(v);
  const why = `${w.apiPods} API pods at the peak of a rollout, ${w.indexerPods} indexer pods${w.devPods ? `, ${w.devPods} dev stores` : ''}${w.chainPods ? ', the chain' : ''}${w.databasePods ? `, ${w.databasePods - 1} database instances and a joining one's job` : ''}`;
  const q = v.quota;
  const p: string[] = [];
  const check = (field: keyof typeof q, have: number, need: number, show: (n: number) => string) => {
    if (have < need) p.push(`quota.${field} (${String(q[field])}) is below the ${show(need)} the tenant needs (${why})`);
  };
  check('requestsCpu', parseQuantity(q.requestsCpu), w.totals.requestsCpu, cpu);
  check('requestsMemory', parseQuantity(q.requestsMemory), w.totals.requestsMemory, mem);
  check('limitsCpu', parseQuantity(q.limitsCpu), w.totals.limitsCpu, cpu);
  check('limitsMemory', parseQuantity(q.limitsMemory), w.totals.limitsMemory, mem);
  check('pods', q.pods, w.totals.pods, String);
  check('persistentVolumeClaims', q.persistentVolumeClaims, w.totals.pvcs, String);
  return p;
}
