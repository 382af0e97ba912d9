import type { RecentBlockhash } from './build';

/** The tenant's chain as the transaction builders need it: a recent blockhash. */
export interface ChainAccess {
  /** A blockhash, the last block height it is valid at, and the slot it was read at. */
  recentBlockhash(): Promise<RecentBlockhash & { slot: number }>;
}

export class ChainUnavailableError extends Error {
  override name = 'ChainUnavailableError';
}

/**
 * `getLatestBlockhash` over the tenant's JSON-RPC endpoint (RPC_URL). One attempt within
 * `timeoutMs`: a client waiting for a transaction to sign is better told to retry.
 */
export function createRpcChain(opts: { url: string; timeoutMs?: number; commitment?: 'confirmed' | 'finalized' }): ChainAccess {
  let id = 0;
  return {
    async recentBlockhash() {
      let body: { result?: { context: { slot: number }; value: { blockhash: string; lastValidBlockHeight: number } }; error?: { message: string } };
      try {
        const res = await fetch(opts.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'getLatestBlockhash', params: [{ commitment: opts.commitment ?? 'confirmed' }] }),
          signal: AbortSignal.timeout(opts.timeoutMs ?? 5_000),
        });
        if (!res.ok) throw new ChainUnavailableError(`RPC answered HTTP ${res.status}`);
        body = (await res.json()) as typeof body;
      } catch (err) {
        throw err instanceof ChainUnavailableError ? err : new ChainUnavailableError(`RPC unreachable: ${err instanceof Error ? err.message : String(err)}`);
      }
      if (!body.result) throw new ChainUnavailableError(`RPC error: ${body.error?.message ?? 'no result'}`);
      const { context, value } = body.result;
      return { blockhash: value.blockhash, lastValidBlockHeight: BigInt(value.lastValidBlockHeight), slot: context.slot };
    },
  };
}
