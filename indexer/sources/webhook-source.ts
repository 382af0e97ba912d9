import type { Common } from '../../core/common';
import type { RawTransaction } from '../../core/events';
import { createRpcClient, type RpcClient } from './rpc-client';
import { createRpcLimiter } from './rpc-limiter';
import type { Cursor, Source } from './types';
import type { TransactionSink } from './webhook';
import { createWebhookChain, type ListedSignature, type WebhookChain } from './webhook-chain';

export interface WebhookSourceOptions {
  common: Common;
  /** The provider's JSON-RPC: the order, what a delivery missed, and the chain tip come from it. */
  rpcUrl: string;
  programId: string;
  /** Credits/s the RPC calls keep to (RPC_REQUESTS_PER_SECOND); 0 or unset: unpaced until a 429. */
  requestsPerSecond?: number;
  maxBatchTransactions?: number;
  /**
   * A listed transaction whose delivery has not come while the chain moved this many slots past
   * it is fetched from the RPC instead (its delivery was dropped, or is late). 150 slots: about a
   * minute, longer than a provider's retries of one delivery take.
   */
  holdBackSlots?: number;
  /** How often the listing runs without a delivery to wake it. */
  pollIntervalMs?: number;
  requestTimeoutMs?: number;
  /** For tests: the chain the source reads, instead of one over `rpcUrl`. */
  chain?: WebhookChain;
}

export interface WebhookSourceStats {
  /** Deliveries' transactions taken in (duplicates included). */
  delivered: number;
  /** Delivered transactions dropped as already applied or already held. */
  duplicates: number;
  /** Bodies fetched from the RPC because no delivery brought them within the hold-back. */
  recovered: number;
}

/** Deliveries held while they wait for their turn; past this many the oldest are dropped (the walk recovers them). */
const MAX_HELD = 200_000;

/**
 * Webhook ingestion (D-472). A provider's webhook retries a failed delivery a few times and then
 * drops it, may deliver one twice, and does not keep the order between deliveries. So deliveries
 * only bring bodies; what is applied and in which order comes from the RPC: the program's
 * signatures after the cursor (`getSignaturesForAddress`, cheap), released oldest first, a slot
 * at a time, once every successful transaction of the slot has its body. A body no delivery has
 * brought once the chain is `holdBackSlots` past its slot is fetched (`getTransaction`). The
 * chain tip is the RPC's `getSlot`, so the slot lag grows while deliveries stop.
 */
export function createWebhookSource(opts: WebhookSourceOptions): Source & TransactionSink & { stats(): WebhookSourceStats } {
  const { logger, metrics } = opts.common;
  let rpc: RpcClient | undefined;
  const chain =
    opts.chain ??
    createWebhookChain(
      (rpc = createRpcClient({ url: opts.rpcUrl, logger, metrics, timeoutMs: opts.requestTimeoutMs, limiter: createRpcLimiter({ requestsPerSecond: opts.requestsPerSecond, concurrency: 4 }) })),
      opts.programId,
    );
  const holdBack = opts.holdBackSlots ?? 150;
  const pollMs = opts.pollIntervalMs ?? 1_000;
  const maxBatch = opts.maxBatchTransactions ?? 1_000;
  const held = new Map<string, RawTransaction>();
  const stats: WebhookSourceStats = { delivered: 0, duplicates: 0, recovered: 0 };
  let wake: (() => void) | undefined;
  let tip: number | null = null;
  // Everything at or below this slot is applied: a delivery of it is a duplicate.
  let floorSlot = -1;
  let closed = false;

  function offer(transactions: RawTransaction[]) {
    for (const tx of transactions) {
      stats.delivered++;
      const sig = tx.transaction.signatures[0]!;
      if (tx.slot <= floorSlot || held.has(sig)) {
        stats.duplicates++;
        continue;
      }
      if (held.size >= MAX_HELD) held.delete(held.keys().next().value!);
      held.set(sig, tx);
    }
    wake?.();
  }

  const idle = (signal: AbortSignal) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, pollMs);
      function done() {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        wake = undefined;
        resolve();
      }
      wake = done;
      signal.addEventListener('abort', done, { once: true });
    });

  /**
   * The bodies of `listed` (oldest first) that can be applied now: the longest run of whole
   * slots whose successful transactions all have a body, from deliveries or fetched once overdue.
   */
  async function releasable(listed: ListedSignature[], now: number, signal: AbortSignal): Promise<{ txs: RawTransaction[]; last: ListedSignature | undefined }> {
    const overdue = listed.filter((s) => s.err === null && !held.has(s.signature) && now - s.slot > holdBack);
    for (let i = 0; i < overdue.length; i += 8) {
      const bodies = await Promise.all(overdue.slice(i, i + 8).map((s) => chain.transaction(s.signature, signal)));
      for (const b of bodies) {
        if (!b) continue;
        held.set(b.transaction.signatures[0]!, b);
        stats.recovered++;
      }
    }
    const txs: RawTransaction[] = [];
    // Released so far: whole slots only.
    let whole = 0;
    let lastWhole: ListedSignature | undefined;
    for (let i = 0; i < listed.length; i++) {
      const s = listed[i]!;
      if (i > 0 && s.slot !== listed[i - 1]!.slot) {
        whole = txs.length;
        lastWhole = listed[i - 1];
        if (whole >= maxBatch) return { txs: txs.slice(0, whole), last: lastWhole };
      }
      if (s.err !== null) continue;
      const body = held.get(s.signature);
      if (!body) return { txs: txs.slice(0, whole), last: lastWhole };
      txs.push(body);
    }
    // Every listed transaction has its body; the newest slot is whole too (a confirmed block is listed at once).
    return { txs, last: listed[listed.length - 1] };
  }

  return {
    name: 'webhook',
    offer,
    async *batches(from: Cursor, signal: AbortSignal) {
      let until = from.lastSignature;
      let anchored = until !== null;
      floorSlot = from.lastSlot;
      while (!signal.aborted && !closed) {
        try {
          if (!anchored) {
            // Nothing applied yet: a webhook brings what comes from now on, so the walk starts
            // at the program's newest transaction of this moment.
            const newest = await chain.newest(signal);
            until = newest?.signature ?? null;
            floorSlot = newest?.slot ?? -1;
            anchored = true;
          }
          const now = await chain.slot(signal);
          tip = now;
          const listed = await chain.signaturesAfter(until, signal);
          const { txs, last } = await releasable(listed, now, signal);
          if (last) {
            until = last.signature;
            floorSlot = last.slot;
            for (const [sig, tx] of held) if (tx.slot <= floorSlot) held.delete(sig);
            if (txs.length) {
              yield txs;
              continue;
            }
          }
        } catch (err) {
          if (signal.aborted) return;
          logger.warn({ err: (err as Error).message }, 'webhook source: the RPC walk failed; retrying');
        }
        await idle(signal);
      }
    },
    async chainTip() {
      try {
        tip = await chain.slot(AbortSignal.timeout(2_000));
      } catch {
        // The last tip read stands: the lag keeps growing against it only once it is read again.
      }
      return tip;
    },
    connected: () => (rpc ? rpc.connected() : true),
    stats: () => ({ ...stats }),
    async close() {
      closed = true;
      wake?.();
      rpc?.close();
    },
  };
}
