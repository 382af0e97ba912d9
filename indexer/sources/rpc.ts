import type { Common } from '../../core/common';
import type { RawTransaction } from '../../core/events';
import { subscribeProgramLogs } from './logs-subscription';
import { createRpcClient, type RpcClient } from './rpc-client';
import type { Cursor, Progress, Source } from './types';
import type { TransactionSink } from './webhook';

interface SignatureInfo {
  signature: string;
  slot: number;
  err: unknown;
}

export interface RpcSourceOptions {
  common: Common;
  rpcUrl: string;
  wsUrl: string;
  programId: string;
  maxBatchTransactions?: number;
  /** How often the signature poll runs when nothing triggers it. */
  pollIntervalMs?: number;
  fetchConcurrency?: number;
  /** Disables logsSubscribe (the poll alone still finds everything). */
  subscribe?: boolean;
}

const PAGE = 1_000;

/**
 * Solana JSON-RPC source. One ordered path delivers transactions: the signature poll
 * (`getSignaturesForAddress`, newest first, `before`/`until`, 1,000 a page, confirmed) from
 * the last delivered signature, reversed into chain order, each body fetched with
 * `getTransaction` (maxSupportedTransactionVersion 0). The first poll is the backfill.
 * `logsSubscribe` notifications and webhook deliveries only trigger the poll early (webhook
 * bodies also spare the `getTransaction` calls), so a missed notification or a webhook gap
 * never loses or reorders a transaction.
 */
export function createRpcSource(opts: RpcSourceOptions): Source & TransactionSink & { rpc: RpcClient } {
  const { logger, metrics } = opts.common;
  const rpc = createRpcClient({ url: opts.rpcUrl, logger, metrics });
  const maxBatch = opts.maxBatchTransactions ?? 2_000;
  const pollMs = opts.pollIntervalMs ?? 2_000;
  const concurrency = opts.fetchConcurrency ?? 8;
  const bodies = new Map<string, RawTransaction>();
  let trigger: (() => void) | undefined;
  let pending = false;
  let tip: number | null = null;
  let progress: Progress | undefined;
  let subscription: { close(): void } | undefined;

  const wake = () => {
    pending = true;
    trigger?.();
  };

  /** Every signature newer than `until`, oldest first. */
  async function newSignatures(until: string | null, signal: AbortSignal): Promise<SignatureInfo[]> {
    const out: SignatureInfo[] = [];
    let before: string | undefined;
    for (;;) {
      const cfg: Record<string, unknown> = { limit: PAGE, commitment: 'confirmed' };
      if (before) cfg.before = before;
      if (until) cfg.until = until;
      const page = await rpc.call<SignatureInfo[]>('getSignaturesForAddress', [opts.programId, cfg], signal);
      out.push(...page);
      if (page.length < PAGE) break;
      before = page[page.length - 1]!.signature;
    }
    return out.reverse();
  }

  async function fetchBodies(sigs: SignatureInfo[], signal: AbortSignal): Promise<RawTransaction[]> {
    const out = new Array<RawTransaction>(sigs.length);
    let next = 0;
    const worker = async () => {
      while (next < sigs.length && !signal.aborted) {
        const i = next++;
        const s = sigs[i]!;
        const cached = bodies.get(s.signature);
        if (cached) {
          bodies.delete(s.signature);
          out[i] = cached;
          continue;
        }
        // A confirmed signature whose body is not served yet: ask again, never skip it.
        for (let attempt = 0; ; attempt++) {
          const tx = await rpc.call<RawTransaction | null>(
            'getTransaction',
            [s.signature, { encoding: 'json', maxSupportedTransactionVersion: 0, commitment: 'confirmed' }],
            signal,
          );
          if (tx) {
            out[i] = tx;
            break;
          }
          if (signal.aborted) return;
          await new Promise((r) => setTimeout(r, Math.min(2_000, 100 * 2 ** attempt)));
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, sigs.length) }, worker));
    return out;
  }

  return {
    name: 'rpc',
    rpc,
    offer(transactions) {
      for (const tx of transactions) {
        const sig = tx.transaction.signatures[0];
        if (sig) bodies.set(sig, tx);
      }
      // Webhook bodies for signatures the poll never lists again would pile up: keep it bounded.
      if (bodies.size > 50_000) bodies.clear();
      wake();
    },
    async *batches(from: Cursor, signal: AbortSignal) {
      let last = from.lastSignature;
      if (opts.subscribe !== false) {
        subscription = subscribeProgramLogs({ wsUrl: opts.wsUrl, programId: opts.programId, logger, onNotification: wake });
      }
      const onAbort = () => trigger?.();
      signal.addEventListener('abort', onAbort);
      try {
        while (!signal.aborted) {
          pending = false;
          let sigs: SignatureInfo[];
          try {
            sigs = await newSignatures(last, signal);
          } catch (err) {
            if (signal.aborted) break;
            throw err;
          }
          const live = sigs.filter((s) => s.err === null || s.err === undefined);
          progress = { done: 0, total: live.length, unit: 'transactions' };
          for (let i = 0; i < live.length && !signal.aborted; i += maxBatch) {
            const chunk = live.slice(i, i + maxBatch);
            const txs = await fetchBodies(chunk, signal);
            if (signal.aborted) break;
            yield txs;
            progress.done += chunk.length;
            last = chunk[chunk.length - 1]!.signature;
          }
          if (signal.aborted) break;
          // Failed transactions are not fetched; the poll still moves past them.
          if (sigs.length) last = sigs[sigs.length - 1]!.signature;
          if (!pending) {
            await new Promise<void>((resolve) => {
              const t = setTimeout(resolve, pollMs);
              trigger = () => {
                clearTimeout(t);
                resolve();
              };
            });
            trigger = undefined;
          }
        }
      } finally {
        signal.removeEventListener('abort', onAbort);
        subscription?.close();
      }
    },
    async chainTip() {
      tip = await rpc.call<number>('getSlot', [{ commitment: 'confirmed' }], AbortSignal.timeout(2_000));
      return tip;
    },
    connected: () => rpc.connected(),
    progress: () => progress,
    close: async () => {
      subscription?.close();
      trigger?.();
    },
  };
}
