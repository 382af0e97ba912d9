import bs58 from 'bs58';
import { COMPUTE_BUDGET_PROGRAM, type RawTransaction } from '../../core/events';
import { decodeWireTransaction, WireTransactionError } from '../../core/tx';
import { isPrecompileProgram } from './precompiles';
import type { Instruction } from './types';

/** A JSON-RPC error as a Solana node answers `sendTransaction` (codes of its preflight). */
export class RpcSubmitError extends Error {
  override name = 'RpcSubmitError';
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

export const simulationFailed = (index: number, code: number, logs: string[] = []) =>
  new RpcSubmitError(-32002, `Transaction simulation failed: Error processing Instruction ${index}: custom program error: 0x${code.toString(16)}`, {
    err: { InstructionError: [index, { Custom: code }] },
    logs,
  });

export const blockhashNotFound = () => new RpcSubmitError(-32002, 'Transaction simulation failed: Blockhash not found', { err: 'BlockhashNotFound', logs: [] });

/** A transaction the chain has accepted to run: its instructions and the message it records. */
export interface Accepted {
  /** The wallet's signature; unset for an unsigned transaction of an in-process sender (the chain names it). */
  signature?: string;
  instructions: Instruction[];
  /** Index of the hosted program's instruction (the one this chain runs). */
  index: number;
  message: RawTransaction['transaction']['message'];
}

/**
 * This chain runs one program: a transaction is compute-budget and precompile instructions
 * (verified by nobody here: D-470) and exactly one instruction of it. Returns that instruction's index.
 */
export function programInstructionIndex(instructions: readonly Instruction[], programId: string): number {
  let index = -1;
  let ok = true;
  for (let i = 0; i < instructions.length; i++) {
    const p = instructions[i]!.programId;
    if (p === COMPUTE_BUDGET_PROGRAM || isPrecompileProgram(p)) continue;
    ok &&= p === programId && index === -1;
    index = i;
  }
  if (!ok || index === -1) {
    throw new RpcSubmitError(-32002, 'Transaction simulation failed: the simulated chain runs exactly one instruction of its program per transaction', { err: 'UnsupportedProgramId', logs: [] });
  }
  return index;
}

/**
 * What a validator checks of a wire transaction before anything runs: the format, every
 * signature, a recent blockhash, and that it calls the hosted program. Whether the program
 * would accept it is the program's to say (`Program.simulate`).
 */
export function acceptWire(base64: string, programId: string, isRecentBlockhash: (h: string) => boolean): Accepted & { signature: string } {
  let tx: ReturnType<typeof decodeWireTransaction>;
  try {
    tx = decodeWireTransaction(base64);
  } catch (err) {
    if (err instanceof WireTransactionError) throw new RpcSubmitError(-32602, `invalid transaction: ${err.message}`);
    throw err;
  }
  if (!tx.fullySignedAndValid) throw new RpcSubmitError(-32003, 'Transaction signature verification failure');
  if (!isRecentBlockhash(tx.blockhash)) throw blockhashNotFound();
  const instructions: Instruction[] = tx.instructions.map((ix) => ({
    programId: ix.programId,
    accounts: ix.accounts.map((address) => ({ address, signer: tx.signers.includes(address), writable: tx.writable.has(address) })),
    data: ix.data,
  }));
  const index = programInstructionIndex(instructions, programId);
  return {
    signature: tx.signatures[0]!,
    instructions,
    index,
    message: {
      accountKeys: tx.staticAccounts,
      instructions: tx.instructions.map((x) => ({
        programIdIndex: tx.staticAccounts.indexOf(x.programId),
        accounts: x.accounts.map((a) => tx.staticAccounts.indexOf(a)),
        data: bs58.encode(x.data),
        stackHeight: null,
      })),
    },
  };
}
