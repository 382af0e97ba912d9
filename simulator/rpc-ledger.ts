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
    /** Newest first, starting below `before`, stopping at (excluding) `until`. */
    list(limit: number, before: string | undefined, until: string | undefined): LedgerEntry[] {
      let i = ledger.length - 1;
      if (before) {
        const b = bySignature.get(before);
        i = b ? indexOf(b) - 1 : -1;
      }
      const out: LedgerEntry[] = [];
      for (; i >= 0 && out.length < limit; i--) {
        const o = ledger[i]!;
        if (o.signature === until) break;
        out.push(o);
      }
      return out;
    },
    entries: (): readonly LedgerEntry[] => ledger,
  };
}
