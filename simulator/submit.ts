import bs58 from 'bs58';
import { COMPUTE_BUDGET_PROGRAM, type RawTransaction } from '../core/events';
import {
  callerAccounts,
  decodeInstructionData,
  decodeWireTransaction,
  deriveAccountSync,
  instructionDef,
  programError,
  WireTransactionError,
  type DecodedInstruction,
} from '../core/tx';
import { IDL } from '../core/events';

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

export type Submitted = DecodedInstruction & {
  signature: string;
  signer: string;
  /** The program instruction's accounts by IDL name. */
  accounts: Record<string, string>;
  /** Index of the program instruction in the message (for InstructionError). */
  index: number;
  message: RawTransaction['transaction']['message'];
};

export const simulationFailed = (index: number, code: number, logs: string[] = []) =>
  new RpcSubmitError(-32002, `Transaction simulation failed: Error processing Instruction ${index}: custom program error: 0x${code.toString(16)}`, {
    err: { InstructionError: [index, { Custom: code }] },
    logs,
  });

/**
 * What a validator checks before running a transaction, for the simulated chain: the wire
 * format, every signature, a recent blockhash, and that it calls one instruction of this
 * program (after compute-budget instructions) with the accounts its IDL derives. Program
 * rules on market state are the engine's.
 */
export function parseSubmission(base64: string, programId: string, isRecentBlockhash: (h: string) => boolean): Submitted {
  let tx: ReturnType<typeof decodeWireTransaction>;
  try {
    tx = decodeWireTransaction(base64);
  } catch (err) {
    if (err instanceof WireTransactionError) throw new RpcSubmitError(-32602, `invalid transaction: ${err.message}`);
    throw err;
  }
  if (!tx.fullySignedAndValid) throw new RpcSubmitError(-32003, 'Transaction signature verification failure');
  if (!isRecentBlockhash(tx.blockhash)) throw new RpcSubmitError(-32002, 'Transaction simulation failed: Blockhash not found', { err: 'BlockhashNotFound', logs: [] });
  const ours = tx.instructions.map((ix, i) => ({ ix, i })).filter(({ ix }) => ix.programId !== COMPUTE_BUDGET_PROGRAM);
  if (ours.length !== 1 || ours[0]!.ix.programId !== programId) {
    throw new RpcSubmitError(-32002, 'Transaction simulation failed: the simulated chain runs exactly one instruction of its program per transaction', { err: 'UnsupportedProgramId', logs: [] });
  }
  const { ix, i: index } = ours[0]!;
  const decoded = decodeInstructionData(ix.data);
  // Anchor's InstructionFallbackNotFound (101) for data that is none of the instructions.
  if (!decoded) throw simulationFailed(index, 101);
  const def = instructionDef(decoded.name);
  if (ix.accounts.length !== def.accounts.length) throw simulationFailed(index, programError('InvalidAccount').code);
  const accounts = Object.fromEntries(def.accounts.map((a, k) => [a.name, ix.accounts[k]!]));
  const given = Object.fromEntries(callerAccounts(decoded.name).map((n) => [n, accounts[n]!]));
  for (const a of def.accounts) {
    const want = a.address !== undefined ? (a.address === IDL.address ? programId : a.address) : a.pda ? deriveAccountSync(decoded.name, a.name, programId, accounts) : given[a.name];
    const writableOk = !a.writable || tx.writable.has(accounts[a.name]!);
    const signerOk = !a.signer || tx.signers.includes(accounts[a.name]!);
    if (want !== accounts[a.name] || !writableOk || !signerOk) throw simulationFailed(index, programError('InvalidAccount').code, [`Program log: account ${a.name} is not the expected one`]);
  }
  const signerName = def.accounts.find((a) => a.signer)!.name;
  return {
    ...decoded,
    signature: tx.signatures[0]!,
    signer: accounts[signerName]!,
    accounts,
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
  } as Submitted;
}
