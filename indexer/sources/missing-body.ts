import type { RawTransaction } from '../../core/events';
import { RpcError, type RpcClient } from './rpc-client';

/**
 * A listed signature whose body the provider never served (D-463): handed to the projection in
 * its place, which dead-letters it with this reason (the dead-letter retry can fetch it later),
 * so it neither stalls everything behind it nor vanishes without a trace.
 */
export interface BodyUnavailable {
  reason: 'body_unavailable' | 'transaction_unknown';
  detail: string;
}

export type SourceTransaction = RawTransaction & { unavailable?: BodyUnavailable };

/** The stand-in for a body that never came: the signature and slot the listing gave. */
export function standIn(signature: string, slot: number, unavailable: BodyUnavailable): SourceTransaction {
  return { slot, blockTime: null, transaction: { signatures: [signature], message: { accountKeys: [], instructions: [] } }, meta: null, unavailable };
}

interface SignatureStatus {
  slot: number;
  err: unknown;
  confirmationStatus: string | null;
}

/**
 * Why the bodies of `signatures` never came, after `waitedMs` of asking: the provider's own
 * record of each (`getSignatureStatuses` with `searchTransactionHistory`, the blockstore and
 * long-term storage, not only recent slots). No status: the provider no longer knows the
 * transaction (its block dropped, or pruned everywhere). A status: it has the transaction but
 * serves no body (a node without the slot's data, an archive gap).
 */
export async function whyUnavailable(rpc: RpcClient, items: { signature: string; slot: number; cause?: RpcError }[], waitedMs: number, signal: AbortSignal): Promise<SourceTransaction[]> {
  const out: SourceTransaction[] = [];
  for (let i = 0; i < items.length; i += 256) {
    const chunk = items.slice(i, i + 256);
    const res = await rpc.call<{ value: (SignatureStatus | null)[] }>('getSignatureStatuses', [chunk.map((c) => c.signature), { searchTransactionHistory: true }], signal);
    chunk.forEach((c, k) => {
      const status = res.value[k];
      const why = c.cause ? `getTransaction answered ${c.cause.code}: ${c.cause.message}` : `no body in ${Math.round(waitedMs / 1000)} s of asking`;
      out.push(
        standIn(c.signature, c.slot, status
          ? { reason: 'body_unavailable', detail: `${why}; the provider has its status (slot ${status.slot}, ${status.confirmationStatus ?? 'unknown'})` }
          : { reason: 'transaction_unknown', detail: `${why}; the provider has no status for it (its block dropped, or its history pruned)` }),
      );
    });
  }
  return out;
}
