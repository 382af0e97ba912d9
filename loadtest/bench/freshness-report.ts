import { pct } from './support';

/** One transaction's way from its block to the last /ws client: absolute ms at each boundary. */
export interface Sample {
  block: number;
  notified: number;
  fetched: number;
  committed: number;
  published: number;
  delivered: number;
}

export interface PhaseResult {
  label: string;
  samples: Sample[];
  /** Live program transactions produced while recording; `unseen` lacked a notification or fetch seen by the proxy. */
  txs: number;
  unseen: number;
  /** Samples whose update did not reach every client. */
  incomplete: number;
  updates: number;
  slots: number;
  callsPerTx: { getSignaturesForAddress: number; getTransaction: number };
  /** CPU over the recorded phase (100 = one core); `bench` is this process: the chain, the proxy and the observers. */
  cpuPct: { indexer: number; api: number; clients: number; bench: number };
}

const STAGES = [
  ['notification', (s: Sample) => s.notified - s.block],
  ['fetch', (s: Sample) => s.fetched - s.notified],
  ['commit', (s: Sample) => s.committed - s.fetched],
  ['publish', (s: Sample) => s.published - s.committed],
  ['fan-out', (s: Sample) => s.delivered - s.published],
] as const;

const total = (s: Sample) => s.delivered - s.block;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const f = (n: number, d = 1) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

/**
 * The bench's table: per phase, the block-to-client time (p50, p99) and each stage's p50, p99,
 * share of the mean and mean among the slowest 1 % (what makes the p99). "Beyond the RPC" takes
 * off the latency no design avoids: one notification and one getTransaction round trip
 * (2 x the proxy's latency); the stage holding most of the rest is named.
 */
export function freshnessReport(
  results: PhaseResult[],
  o: { clients: number; seconds: number; latencyMs: number; loadBefore: string; loadAfter: string },
): string {
  const lines: string[] = [];
  const rpcFloor = 2 * o.latencyMs;
  lines.push(
    `\nChain-to-client freshness (${new Date().toISOString()}; realtime simulated chain, 400 ms slots; RPC latency ${o.latencyMs} ms a call and per notification; indexer on its rpc source and API from dist/; ${o.clients} /ws clients on one market's channel; ${o.seconds} s per phase)`,
    `load before: ${o.loadBefore}`,
    `load after:  ${o.loadAfter}`,
    '',
  );
  for (const r of results) {
    const totals = r.samples.map(total);
    const p99 = pct(totals, 99);
    const tail = [...r.samples].sort((a, b) => total(a) - total(b)).slice(Math.floor(r.samples.length * 0.99));
    lines.push(
      `[${r.label}] ${r.slots} slots, ${r.txs} transactions, ${r.samples.length} timed (their batch updated the channel), ${r.updates} channel updates; unseen ${r.unseen}, incomplete fan-out ${r.incomplete}`,
      `  block -> last client: p50 ${f(pct(totals, 50))} ms, p99 ${f(p99)} ms; beyond the RPC's ${rpcFloor} ms: p99 ${f(p99 - rpcFloor)} ms (target <= 400)`,
      `  RPC calls per transaction: getSignaturesForAddress ${f(r.callsPerTx.getSignaturesForAddress, 2)}, getTransaction ${f(r.callsPerTx.getTransaction, 2)}; CPU: indexer ${f(r.cpuPct.indexer, 0)} %, API ${f(r.cpuPct.api, 0)} %, clients ${f(r.cpuPct.clients, 0)} %, chain + proxy + bench ${f(r.cpuPct.bench, 0)} %`,
      '  stage          p50 ms   p99 ms   share of mean   mean in slowest 1 %',
    );
    const meanTotal = mean(totals);
    let worst = { name: '', excess: -Infinity };
    for (const [name, of] of STAGES) {
      const xs = r.samples.map(of);
      const tailMean = mean(tail.map(of));
      lines.push(`  ${name.padEnd(13)} ${f(pct(xs, 50)).padStart(7)}  ${f(pct(xs, 99)).padStart(7)}  ${f((mean(xs) / meanTotal) * 100).padStart(13)} %  ${f(tailMean).padStart(19)}`);
      const own = name === 'notification' || name === 'fetch' ? o.latencyMs : 0;
      if (tailMean - own > worst.excess) worst = { name, excess: tailMean - own };
    }
    if (r.samples.length) lines.push(`  the rest (beyond the RPC's latency) is held mostly by: ${worst.name} (${f(worst.excess)} ms in the slowest 1 %)`);
    lines.push('');
  }
  return `${lines.join('\n')}\n`;
}
