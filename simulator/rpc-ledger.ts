import type { RawTransaction } from '../core/events';

/** One transaction in the RPC's ledger: what `getSignaturesForAddress` lists, and the `getTransaction` body serialized once. */
export interface LedgerEntry {
  signature: string;
  slot: number;
  err: unknown;
  blockTime: number | null;
  version: RawTransaction['version'];
  json: string;
}

/**
 * The RPC's ledger, like a pruned RPC node's: the transactions of the last `historySlots` slots
 * (all when unset), by signature and in order, for `getSignaturesForAddress` and `getTransaction`.
 */
export function createRpcLedger(opts: { historySlots: number | undefined; slot: () => number }) {
  // Oldest first, trimmed by dropping a prefix; `dropped` counts what went, so an entry's index
  // is found from its sequence number without a search.
  let ledger: LedgerEntry[] = [];
  const bySignature = new Map<string, LedgerEntry>();
  let dropped = 0;
  const seqOf = new WeakMap<LedgerEntry, number>();
  const indexOf = (e: LedgerEntry) => seqOf.get(e)! - dropped;

  return {
    add(tx: RawTransaction): LedgerEntry {
      const signature = tx.transaction.signatures[0]!;
      const entry: LedgerEntry = { signature, slot: tx.slot, err: tx.meta?.err ?? null, blockTime: tx.blockTime, version: tx.version, json: JSON.stringify(tx) };
      seqOf.set(entry, dropped + ledger.length);
      ledger.push(entry);
      bySignature.set(signature, entry);
      return entry;
    },
    trim(): void {
      if (opts.historySlots === undefined || !ledger.length) return;
      const oldest = opts.slot() - opts.historySlots;
      let n = 0;
      while (n < ledger.length && ledger[n]!.slot <= oldest) n++;
      // Trimming copies the array: do it when a tenth of it has aged out, not every block.
      if (n === 0 || n < ledger.length / 10) return;
      for (const e of ledger.slice(0, n)) bySignature.delete(e.signature);
      ledger = ledger.slice(n);
      dropped += n;
    },
    get: (signature: string) => bySignature.get(signature),
    /**
     * Newest first, starting below `before`, stopping at (excluding) `until`, as a node whose
     * confirmed slot is `maxSlot` lists them (Agave's get_confirmed_signatures_for_address2,
     * D-460): a `before` it does not have lists nothing; an `until` it does not have is ignored,
     * so the list runs down to its first available block.
     */
    list(limit: number, before: string | undefined, until: string | undefined, maxSlot = Infinity): LedgerEntry[] {
      const has = (e: LedgerEntry | undefined): e is LedgerEntry => e !== undefined && e.slot <= maxSlot;
      let i: number;
      if (before) {
        const b = bySignature.get(before);
        if (!has(b)) return [];
        i = indexOf(b) - 1;
      } else {
        // The newest entry the node has: the ledger is in slot order.
        let lo = 0;
        let hi = ledger.length;
        while (lo < hi) {
          const mid = (lo + hi) >> 1;
          if (ledger[mid]!.slot <= maxSlot) lo = mid + 1;
          else hi = mid;
        }
        i = lo - 1;
      }
      const stop = until !== undefined && has(bySignature.get(until)) ? until : undefined;
      const out: LedgerEntry[] = [];
      for (; i >= 0 && out.length < limit; i--) {
        const o = ledger[i]!;
        if (o.signature === stop) break;
        out.push(o);
      }
      return out;
    },
    entries: (): readonly LedgerEntry[] => ledger,
  };
}
export type RpcLedger = ReturnType<typeof createRpcLedger>;
