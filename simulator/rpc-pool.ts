/**
 * The simulated chain's JSON-RPC served as a hosted provider serves it: a pool of nodes behind
 * a balancer, each node with its own confirmed slot some slots behind the chain's, answering
 * from what it has (D-460). Off unless set: one node that never lags, as the chain always was.
 *
 * What a node answers from its own view copies Agave (`rpc/src/rpc.rs`,
 * `ledger/src/blockstore.rs`), see D-460: `minContextSlot` above its slot is -32016; a
 * `before` it has not confirmed lists nothing; an `until` it has not confirmed is ignored
 * (it lists down to its first available block); a transaction in a slot it has not confirmed
 * has no body (null).
 */
import { type RpcErrorResponse, type RpcId } from './rpc-request';

export interface RpcPoolOptions {
  /**
   * One entry a node: how many slots its confirmed slot is behind the chain's. Unset or empty:
   * a single node that never lags.
   */
  lags?: readonly number[];
}

/** What the node that takes one request has: its confirmed slot. */
export interface NodeView {
  /** The node's position in the pool (0 without a pool). */
  node: number;
  slot: number;
}

/** Agave's `RpcCustomError::MinContextSlotNotReached` code. */
export const MIN_CONTEXT_SLOT_NOT_REACHED = -32016;

export function createRpcPool(initial: RpcPoolOptions, chainSlot: () => number) {
  let lags = [...(initial.lags ?? [])];
  const turns = new Map<string, number>();
  let served = lags.map(() => 0);

  return {
    /** True when requests are spread over nodes that lag. */
    enabled: () => lags.length > 0,
    /**
     * The node that takes the next HTTP request for `method`: round-robin over the pool, a
     * turn per method (providers route method families to their own groups of nodes; within
     * one a balancer has no affinity). A batch is one request: one node answers all of it.
     */
    pick(method: string): NodeView {
      if (!lags.length) return { node: 0, slot: chainSlot() };
      const node = (turns.get(method) ?? 0) % lags.length;
      turns.set(method, node + 1);
      served[node]! += 1;
      return { node, slot: Math.max(0, chainSlot() - lags[node]!) };
    },
    /** The nodes' lags from now on (a test makes one node fall behind, or catch up). */
    configure(opts: RpcPoolOptions) {
      lags = [...(opts.lags ?? [])];
      turns.clear();
      served = lags.map(() => 0);
    },
    /** Requests each node took. */
    served: () => [...served],
  };
}

export type RpcPool = ReturnType<typeof createRpcPool>;

/**
 * A `minContextSlot` the node has not reached: -32016 with the node's slot in `data`, as
 * Agave's `get_bank_with_config` answers for every method that takes the setting
 * (getSlot, getSignaturesForAddress, getAccountInfo, getMultipleAccounts, getLatestBlockhash).
 * A value that is not a whole number is -32602, as serde's refusal is.
 */
export function minContextSlotRefusal(id: RpcId, cfg: Record<string, unknown>, view: NodeView): RpcErrorResponse | undefined {
  const min = cfg.minContextSlot;
  if (min === undefined || min === null) return undefined;
  if (typeof min !== 'number' || !Number.isInteger(min) || min < 0) return { jsonrpc: '2.0', id, error: { code: -32602, message: 'Invalid params: minContextSlot must be a slot' } };
  if (view.slot >= min) return undefined;
  return { jsonrpc: '2.0', id, error: { code: MIN_CONTEXT_SLOT_NOT_REACHED, message: 'Minimum context slot has not been reached', data: { contextSlot: view.slot } } };
}

/**
 * `processed` where Agave's `check_is_at_least_confirmed` refuses it (getSignaturesForAddress,
 * getTransaction, getBlock): -32602 "Method does not support commitment below `confirmed`".
 */
export function belowConfirmedRefusal(id: RpcId, cfg: Record<string, unknown>): RpcErrorResponse | undefined {
  if (cfg.commitment !== 'processed') return undefined;
  return { jsonrpc: '2.0', id, error: { code: -32602, message: 'Method does not support commitment below `confirmed`' } };
}
