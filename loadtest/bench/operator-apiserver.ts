// The operator bench's test API server, in a process of its own so that its CPU, heap and
// event-loop delay are its own (the operator runs in another, the bench's stand-in controllers in
// the bench). It answers the bench over IPC: `stats` (what happened since the last `mark`).
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { marketIndexerCrd } from '../../cdk8s/lib/crd';
import { startTestApiServer } from '../../local/kube-apiserver/server';

export interface VerbStats {
  count: number;
  p50Ms: number;
  p99Ms: number;
}

export interface ApiServerStats {
  cpuSeconds: number;
  eventLoopP99Ms: number;
  eventLoopMaxMs: number;
  heapMb: number;
  rssMb: number;
  openWatches: number;
  /** Requests answered since the mark, by client (the bearer token) and verb. */
  requests: Record<string, VerbStats>;
  /** The operator's write requests since the mark (leases aside), by verb and resource, refused ones with their code. */
  operatorWrites: Record<string, number>;
  /** The first few objects each of those wrote to (names), so that a handful of writes says whom. */
  operatorWriteNames: Record<string, string[]>;
}

const pctOf = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? 0;

void (async () => {
  const api = await startTestApiServer({ historySize: Number(process.env.BENCH_HISTORY ?? 100_000) });
  const s = api.store;
  s.create(s.typeOf('apiextensions.k8s.io', 'v1', 'customresourcedefinitions'), undefined, marketIndexerCrd(), 'bench');
  s.create(s.typeOf('', 'v1', 'namespaces'), undefined, { metadata: { name: 'market-indexer-system' } }, 'bench');
  const eld = monitorEventLoopDelay({ resolution: 10 });
  eld.enable();
  let markRequests = 0;
  let markCpu = process.cpuUsage();

  const stats = (): ApiServerStats => {
    const by = new Map<string, number[]>();
    const writes: Record<string, number> = {};
    const names: Record<string, string[]> = {};
    for (const r of api.requests.slice(markRequests)) {
      if (r.ms === undefined) continue;
      const key = `${r.token ?? '-'} ${r.verb}`;
      (by.get(key) ?? by.set(key, []).get(key)!).push(r.ms);
      if (r.token === 'operator' && !['get', 'list', 'watch'].includes(r.verb) && r.resource !== 'leases') {
        // A refused write (409: the binding it makes is there already) is named with its code.
        const w = `${r.verb} ${r.resource}${r.status >= 400 ? ` (${r.status})` : ''}`;
        writes[w] = (writes[w] ?? 0) + 1;
        if ((names[w] ??= []).length < 5 && r.name) names[w].push(r.name);
      }
    }
    const requests: Record<string, VerbStats> = {};
    for (const [k, ms] of by) {
      ms.sort((a, b) => a - b);
      requests[k] = { count: ms.length, p50Ms: pctOf(ms, 50), p99Ms: pctOf(ms, 99) };
    }
    const cpu = process.cpuUsage(markCpu);
    const mem = process.memoryUsage();
    return {
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      eventLoopP99Ms: eld.percentile(99) / 1e6,
      eventLoopMaxMs: eld.max / 1e6,
      heapMb: mem.heapUsed / 2 ** 20,
      rssMb: mem.rss / 2 ** 20,
      openWatches: api.openWatches,
      requests,
      operatorWrites: writes,
      operatorWriteNames: names,
    };
  };

  process.on('message', (m: { type: string }) => {
    switch (m.type) {
      case 'stats':
        process.send?.({ type: 'stats', stats: stats() });
        break;
      case 'mark':
        markRequests = api.requests.length;
        markCpu = process.cpuUsage();
        eld.reset();
        process.send?.({ type: 'marked' });
        break;
    }
  });
  process.send?.({ type: 'listening', port: api.port });
  process.once('SIGTERM', () => void api.close().then(() => process.exit(0)));
})();
