/**
 * The `getTransaction` result shape (encoding `json`, or `jsonParsed` for the fields we
 * read), as Solana JSON-RPC returns it with `maxSupportedTransactionVersion: 0`, and as
 * chain-data providers POST it to the webhook.
 */
export interface RawInstruction {
  programIdIndex?: number;
  /** jsonParsed form names the program directly. */
  programId?: string;
  accounts?: number[] | string[];
  /** base58 in both encodings for instructions the RPC does not parse. */
  data?: string;
  stackHeight?: number | null;
}

export interface RawTransaction {
  slot: number;
  blockTime: number | null;
  version?: 'legacy' | 0;
  transaction: {
    signatures: string[];
    message: {
      accountKeys: (string | { pubkey: string })[];
      instructions: RawInstruction[];
    };
  };
  meta: {
    err: unknown;
    logMessages?: string[] | null;
    innerInstructions?: { index: number; instructions: RawInstruction[] }[] | null;
    loadedAddresses?: { writable: string[]; readonly: string[] } | null;
  } | null;
}
