/**
 * What a Solana JSON-RPC call costs against a provider's rate limit, in credits: the simulated
 * chain's provider mode charges it (simulator/rpc-provider.ts) and the `rpc` source budgets its
 * calls with it (indexer/sources/rpc-limiter.ts), so both count the same way (D-240).
 *
 * Providers publish such tables (each its own numbers): cheap state reads cost the least, calls
 * that read the ledger's history cost more. The ratios here are illustrative, not one provider's
 * prices: a light call costs 1, so a limit of N credits/s is N requests/s of light calls, and
 * a `getTransaction` costs 2, so that limit lets a backfill fetch N / 2 transactions a second.
 * A JSON-RPC batch costs the sum of its calls, as most providers count it.
 */
export const RPC_CREDITS: Readonly<Record<string, number>> = {
  getHealth: 1,
  getSlot: 1,
  getBlockHeight: 1,
  getLatestBlockhash: 1,
  getAccountInfo: 1,
  sendTransaction: 1,
  getMultipleAccounts: 2,
  getTransaction: 2,
  getSignaturesForAddress: 3,
};

/** A method's cost; one not in the table costs what a light call does. */
export const creditsOf = (method: string | undefined): number => (method !== undefined && RPC_CREDITS[method]) || 1;
