import type { RawTransaction } from '../../core/events';

/** An account's data as the chain holds it now (`getAccountInfo` / `getMultipleAccounts`). */
export interface AccountData {
  data: Uint8Array;
  owner: string;
  /** The slot the answer reflects (the RPC's context slot). */
  slot: number;
}

export interface Cursor {
  lastSlot: number;
  lastSignature: string | null;
}

/** Progress of a backfill, for the CLI's progress bar. */
export interface Progress {
  done: number;
  total: number;
  unit: 'slots' | 'transactions';
}

/**
 * Where program transactions come from. `batches` yields them in chain order from the
 * cursor on (re-delivering the cursor's own slot is allowed: the ledger drops duplicates),
 * each batch ending on a slot boundary, until the source is exhausted or `signal` aborts.
 */
export interface Source {
  readonly name: string;
  batches(from: Cursor, signal: AbortSignal): AsyncIterable<RawTransaction[]>;
  /** Newest slot the chain has, for slot lag; null while unknown. */
  chainTip(): Promise<number | null>;
  /** False while the chain connection is failing (health `rpc` check). */
  connected(): boolean;
  progress?(): Progress | undefined;
  /**
   * Current data of each address, null for an account that does not exist; in the order
   * asked. Sources that cannot read accounts (webhook-only) leave it out.
   */
  readAccounts?(addresses: readonly string[], signal?: AbortSignal): Promise<(AccountData | null)[]>;
  close(): Promise<void>;
}
