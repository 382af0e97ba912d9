import { getCompiledTransactionMessageDecoder, getTransactionDecoder } from '@solana/kit';
import bs58 from 'bs58';
import { verifyEd25519 } from '../ed25519';

export interface WireInstruction {
  programId: string;
  accounts: string[];
  data: Uint8Array;
}

export interface DecodedWireTransaction {
  version: 'legacy' | number;
  /** base58 signatures in signer order; null where the slot is still empty (all zeros). */
  signatures: (string | null)[];
  signers: string[];
  feePayer: string;
  blockhash: string;
  staticAccounts: string[];
  writable: Set<string>;
  instructions: WireInstruction[];
  /** Every required signer signed these exact message bytes. */
  fullySignedAndValid: boolean;
}

export class WireTransactionError extends Error {
  override name = 'WireTransactionError';
}

/**
 * A wire transaction (base64, as `sendTransaction` takes it) decoded with kit's decoders,
 * its signatures checked against the message bytes. Lookup tables are refused: the builders
 * never use them, and resolving them needs account state the simulated chain does not keep.
 */
export function decodeWireTransaction(base64: string): DecodedWireTransaction {
  let tx: ReturnType<ReturnType<typeof getTransactionDecoder>['decode']>;
  let msg: ReturnType<ReturnType<typeof getCompiledTransactionMessageDecoder>['decode']>;
  try {
    tx = getTransactionDecoder().decode(Buffer.from(base64, 'base64'));
    msg = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
  } catch (err) {
    throw new WireTransactionError(`undecodable transaction: ${err instanceof Error ? err.message : String(err)}`);
  }
  if ('addressTableLookups' in msg && (msg.addressTableLookups?.length ?? 0) > 0) throw new WireTransactionError('address lookup tables are not supported');
  const keys = msg.staticAccounts.map(String);
  const h = msg.header;
  const nSigners = h.numSignerAccounts;
  const writable = new Set<string>();
  keys.forEach((k, i) => {
    const isWritable = i < nSigners ? i < nSigners - h.numReadonlySignerAccounts : i < keys.length - h.numReadonlyNonSignerAccounts;
    if (isWritable) writable.add(k);
  });
  const signers = keys.slice(0, nSigners);
  const signatures = signers.map((s) => {
    const sig = (tx.signatures as Record<string, Uint8Array | null>)[s];
    return sig && sig.some((b) => b !== 0) ? bs58.encode(sig) : null;
  });
  const fullySignedAndValid = signers.every((s, i) => {
    const sig = signatures[i];
    return sig !== null && verifyEd25519(Uint8Array.from(tx.messageBytes), bs58.decode(sig!), bs58.decode(s));
  });
  const instructions = msg.instructions.map((ix) => {
    const programId = keys[ix.programAddressIndex];
    const accounts = (ix.accountIndices ?? []).map((i) => keys[i]);
    if (programId === undefined || accounts.some((a) => a === undefined)) throw new WireTransactionError('instruction names an account index out of range');
    return { programId, accounts: accounts as string[], data: Uint8Array.from(ix.data ?? []) };
  });
  return {
    version: msg.version,
    signatures,
    signers,
    feePayer: keys[0]!,
    blockhash: String(msg.lifetimeToken),
    staticAccounts: keys,
    writable,
    instructions,
    fullySignedAndValid,
  };
}
