import type { RawTransaction } from '../../core/events';
import type { RpcClient } from './rpc-client';

/** A program signature as `getSignaturesForAddress` lists it. */
export interface ListedSignature {
  signature: string;
  slot: number;
  err: unknown;
}

/** What the webhook source asks the RPC (D-472). */
export interface WebhookChain {
  /** The newest confirmed slot (`getSlot`): the chain tip. */
  slot(signal: AbortSignal): Promise<number>;
  /** The program's newest transaction now, or null if it has none. */
  newest(signal: AbortSignal): Promise<ListedSignature | null>;
  /** Every program signature after `until` (all of them when null), oldest first. */
  signaturesAfter(until: string | null, signal: AbortSignal): Promise<ListedSignature[]>;
  /** One transaction's body, null while the node does not serve it. */
  transaction(signature: string, signal: AbortSignal): Promise<RawTransaction | null>;
}

const PAGE = 1_000;

/**
 * The webhook source's reads over JSON-RPC at `confirmed`. The listing pages back from the newest
 * signature to `until`; every page after the first asks for `minContextSlot` of the newest slot
 * the first page showed, so a node behind that one answers -32016 (retried) rather than an empty
 * page that would end the walk short (Agave lists nothing before a signature it does not have).
 */
export function createWebhookChain(rpc: RpcClient, programId: string): WebhookChain {
  const list = (cfg: Record<string, unknown>, signal: AbortSignal) =>
    rpc.call<ListedSignature[]>('getSignaturesForAddress', [programId, { commitment: 'confirmed', ...cfg }], signal);
  return {
    slot: (signal) => rpc.call<number>('getSlot', [{ commitment: 'confirmed' }], signal),
    async newest(signal) {
      const [s] = await list({ limit: 1 }, signal);
      return s ? { signature: s.signature, slot: s.slot, err: s.err } : null;
    },
    async signaturesAfter(until, signal) {
      const out: ListedSignature[] = [];
      let before: string | undefined;
      let minContextSlot: number | undefined;
      for (;;) {
        const page = await list({ limit: PAGE, ...(until ? { until } : {}), ...(before ? { before } : {}), ...(minContextSlot !== undefined ? { minContextSlot } : {}) }, signal);
        for (const s of page) out.push({ signature: s.signature, slot: s.slot, err: s.err ?? null });
        if (page.length < PAGE) break;
        before = page[page.length - 1]!.signature;
        minContextSlot ??= page[0]!.slot;
      }
      return out.reverse();
    },
    transaction: (signature, signal) =>
      rpc.call<RawTransaction | null>('getTransaction', [signature, { encoding: 'json', maxSupportedTransactionVersion: 0, commitment: 'confirmed' }], signal),
  };
}
