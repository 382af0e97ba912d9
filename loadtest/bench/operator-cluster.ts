// The operator bench's view of the cluster, over HTTP as any client sees it: a keep-alive client,
// watch streams, the stand-in Deployment controller (it rolls out each Deployment when it changes,
// as the real one would, touching only what changed), readiness tracked from the MarketIndexers'
// watch events, and what the operator's /metrics and /proc say about it.
import { readFileSync } from 'node:fs';
import http from 'node:http';

type Json = Record<string, any>;

export function createClient(url: string, token: string, maxSockets = 16) {
  const agent = new http.Agent({ keepAlive: true, maxSockets });
  const { hostname, port } = new URL(url);
  const request = (method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<{ status: number; body: Json }> =>
    new Promise((resolve, reject) => {
      const text = body === undefined ? undefined : JSON.stringify(body);
      const req = http.request({ agent, hostname, port, method, path, headers: { authorization: `Bearer ${token}`, ...(text ? { 'content-type': contentType, 'content-length': Buffer.byteLength(text) } : {}) } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString() || '{}') as Json }));
      });
      req.on('error', reject);
      // A request never answered fails instead of hanging its caller (the controller retries).
      req.setTimeout(10_000, () => req.destroy(new Error(`${method} ${path}: no answer within 10 s`)));
      req.end(text);
    });
  /** A watch from now (every current object comes first as ADDED); returns its stop. */
  const watch = (path: string, onEvent: (type: string, o: Json) => void): (() => void) => {
    const req = http.get({ hostname, port, path: `${path}?watch=true`, headers: { authorization: `Bearer ${token}` } }, (res) => {
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buf += chunk;
        for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
          const line = buf.slice(0, i);
          buf = buf.slice(i + 1);
          if (line) {
            const e = JSON.parse(line) as { type: string; object: Json };
            onEvent(e.type, e.object);
          }
        }
      });
    });
    req.on('error', () => {});
    return () => req.destroy();
  };
  return { request, watch, close: () => agent.destroy() };
}
export type Client = ReturnType<typeof createClient>;

/**
 * The Deployment controller's part: each Deployment whose status has not observed its generation
 * is rolled out (its status says every replica is ready), one PATCH per change, retried with a
 * back-off when it fails as the real controller's queue would (one lost request at 3,000 tenants
 * left a tenant never Ready). The Deployments seen per namespace tell when every tenant's objects
 * are applied.
 */
export function startDeploymentController(client: Client) {
  const perNamespace = new Map<string, Set<string>>();
  let retries = 0;
  const rollOut = (ns: string, name: string, status: object, attempt = 0): void =>
    void client
      .request('PATCH', `/apis/apps/v1/namespaces/${ns}/deployments/${name}/status`, { status }, 'application/merge-patch+json')
      .then((r) => {
        if (r.status >= 300 && r.status !== 404) throw new Error(`HTTP ${r.status}`);
      })
      .catch(() => {
        // A retry of an older generation is harmless: its own watch event shows the status behind, and rolls out again.
        retries += 1;
        if (attempt < 8) setTimeout(() => rollOut(ns, name, status, attempt + 1), 100 * 2 ** attempt);
      });
  const stop = client.watch('/apis/apps/v1/deployments', (type, d) => {
    const m = d.metadata;
    const names = perNamespace.get(m.namespace) ?? perNamespace.set(m.namespace, new Set()).get(m.namespace)!;
    if (type === 'DELETED') return void names.delete(m.name);
    names.add(m.name);
    if (d.status?.observedGeneration === m.generation) return;
    const replicas = d.spec?.replicas ?? 1;
    const status = { observedGeneration: m.generation, replicas, updatedReplicas: replicas, availableReplicas: replicas, readyReplicas: replicas };
    rollOut(m.namespace, m.name, status);
  });
  return { deploymentsIn: (ns: string) => perNamespace.get(ns)?.size ?? 0, retries: () => retries, stop };
}

/** The MarketIndexers that are Ready, from their watch events; `waitFor` resolves when a condition on them holds. */
export function trackReadiness(client: Client) {
  const ready = new Set<string>();
  const waiting = new Set<{ check: () => boolean; resolve: () => void }>();
  const stop = client.watch('/apis/marketindexer.dev/v1alpha1/marketindexers', (type, mi) => {
    const name = mi.metadata.name as string;
    const isReady = type !== 'DELETED' && (mi.status?.conditions ?? []).some((c: Json) => c.type === 'Ready' && c.status === 'True');
    if (isReady) ready.add(name);
    else ready.delete(name);
    for (const w of waiting) if (w.check()) (waiting.delete(w), w.resolve());
  });
  const waitFor = (check: () => boolean, timeoutMs: number, what: string) =>
    new Promise<void>((resolve, reject) => {
      if (check()) return resolve();
      const w = { check, resolve: () => (clearTimeout(t), resolve()) };
      const t = setTimeout(() => (waiting.delete(w), reject(new Error(`${what}: not within ${timeoutMs / 1000} s`))), timeoutMs);
      waiting.add(w);
    });
  return { ready, waitFor, stop };
}

/** CPU seconds a process has used (user + system, from /proc; clock ticks of 10 ms). */
export const cpuSecondsOf = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
};
export const rssMbOf = (pid: number) => Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

export interface OperatorMetrics {
  queueDepth: number;
  /** p99 of the event-loop delay since the previous scrape (prom-client resets it at each). */
  eventLoopP99Ms: number;
  heapMb: number;
  reconciles: number;
  /** Cumulative counts per bucket upper bound (seconds) of the reconcile duration. */
  buckets: [number, number][];
  writes: number;
}

const sample = (text: string, name: string) => [...text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, 'gm'))].reduce((n, m) => n + Number(m[1]), 0);

export async function scrapeOperator(port: number): Promise<OperatorMetrics> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const buckets = [...text.matchAll(/^service_operator_reconcile_duration_seconds_bucket\{le="([^"]+)"[^}]*\} ([0-9.e+]+)$/gm)].map((m): [number, number] => [m[1] === '+Inf' ? Infinity : Number(m[1]), Number(m[2])]);
  return {
    queueDepth: sample(text, 'service_operator_queue_depth'),
    eventLoopP99Ms: sample(text, 'nodejs_eventloop_lag_p99_seconds') * 1000,
    heapMb: sample(text, 'nodejs_heap_size_used_bytes') / 2 ** 20,
    reconciles: sample(text, 'service_operator_reconcile_duration_seconds_count'),
    buckets,
    writes: sample(text, 'service_operator_writes_total'),
  };
}

/** The reconciles between two scrapes: how many, and the bucket bounds their p50 and p99 fall under. */
export function reconcilesBetween(a: OperatorMetrics, b: OperatorMetrics): { count: number; p50: string; p99: string } {
  const count = b.reconciles - a.reconciles;
  const bound = (p: number) => {
    for (const [le, n] of b.buckets) {
      const before = a.buckets.find(([l]) => l === le)?.[1] ?? 0;
      if (n - before >= (p / 100) * count) return le === Infinity ? '> 10 s' : `≤ ${le * 1000} ms`;
    }
    return '-';
  };
  return { count, p50: count ? bound(50) : '-', p99: count ? bound(99) : '-' };
}
