import type { RawTransaction } from '../../core/events';

export interface NotifiedPrefetch {
  /** A `logsNotification`: fetch its transaction now, unless the poll has listed its slot already. */
  notified(signature: string, slot: number, err: unknown): void;
  /** The poll listed every signature up to `slot`: their notifications come too late to help. */
  listed(slot: number): void;
  /**
   * The prefetched body of a listed signature (taken: asked once), or undefined. Null if it
   * failed, or once `signal` aborts (a shutdown does not wait for a prefetch).
   */
  take(signature: string, signal?: AbortSignal): Promise<RawTransaction | null> | undefined;
  /** The poll delivered all it listed: a body of a listed slot still held will never be taken. */
  forgetListed(): void;
  close(): void;
}

/**
 * `getTransaction` of a notified signature as soon as its `logsNotification` arrives, alongside
 * the signature poll it triggers, instead of after it: the poll's `getSignaturesForAddress`
 * round trip and the body's no longer follow each other (D-250). Only bodies: the poll stays
 * the one ordered path (D-64) and takes a prefetched body when it reaches its signature, so
 * nothing is delivered twice or out of order, and a prefetch that fails or finds nothing yet
 * just leaves the fetch to the poll. Signatures of a slot the poll has listed already are not
 * fetched again; a failed transaction is not fetched at all (the poll skips it). At most
 * `maxInFlight` prefetches run at once and `maxHeld` bodies wait; past that, notifications only
 * wake the poll, so a burst of them during a backfill costs no call the poll would not make.
 */
export function createNotifiedPrefetch(opts: {
  fetch: (signature: string, signal: AbortSignal) => Promise<RawTransaction | null>;
  maxInFlight: number;
  maxHeld: number;
}): NotifiedPrefetch {
  const held = new Map<string, { slot: number; body: Promise<RawTransaction | null> }>();
  const closing = new AbortController();
  let listedSlot = -1;
  let inFlight = 0;
  return {
    notified(signature, slot, err) {
      if (closing.signal.aborted || (err !== null && err !== undefined) || slot <= listedSlot || held.has(signature)) return;
      if (inFlight >= opts.maxInFlight || held.size >= opts.maxHeld) return;
      inFlight += 1;
      const body = opts
        .fetch(signature, closing.signal)
        .catch(() => null)
        .finally(() => (inFlight -= 1));
      held.set(signature, { slot, body });
    },
    listed(slot) {
      if (slot > listedSlot) listedSlot = slot;
    },
    take(signature, signal) {
      const h = held.get(signature);
      if (!h) return undefined;
      held.delete(signature);
      if (!signal) return h.body;
      return new Promise((resolve) => {
        const onAbort = () => resolve(null);
        if (signal.aborted) return onAbort();
        signal.addEventListener('abort', onAbort, { once: true });
        void h.body.then((tx) => {
          signal.removeEventListener('abort', onAbort);
          resolve(tx);
        });
      });
    },
    forgetListed() {
      for (const [signature, h] of held) if (h.slot <= listedSlot) held.delete(signature);
    },
    close() {
      closing.abort();
      held.clear();
    },
  };
}
