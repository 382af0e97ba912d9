import {
  AccountRole,
  address,
  appendTransactionMessageInstructions,
  blockhash as toBlockhash,
  compileTransaction,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  type Instruction,
} from '@solana/kit';
import { COMPUTE_BUDGET_PROGRAM } from '../events/builder';
import { encodeInstructionData, type InstructionArgs, type InstructionName } from './instructions';
import { resolveAccounts, type ResolvedAccount } from './pda';

/**
 * Compute units each instruction asks for (SetComputeUnitLimit): measured program costs
 * plus headroom; place_order is the largest because one order may take several makers.
 */
export const COMPUTE_UNIT_LIMITS: Record<InstructionName, number> = {
  place_order: 200_000,
  cancel_order: 40_000,
  claim_payout: 60_000,
  claim_referral: 60_000,
  claim_creator_fees: 60_000,
};

export interface RecentBlockhash {
  blockhash: string;
  lastValidBlockHeight: bigint;
}

export interface BuildArgs<N extends InstructionName> {
  programId: string;
  name: N;
  /** The fee payer and only signer: the wallet that asked. */
  signer: string;
  /** Accounts neither fixed nor derivable (callerAccounts(name)), the signer included. */
  accounts: Record<string, string>;
  args: InstructionArgs[N];
  recent: RecentBlockhash;
  /** Priority fee in micro-lamports per compute unit; 0 sends no SetComputeUnitPrice. */
  microLamportsPerCu?: bigint;
}

export interface BuiltTransaction {
  /** base64 wire transaction (v0), its one signature slot zeroed for the wallet to fill. */
  transaction: string;
  blockhash: string;
  lastValidBlockHeight: string;
  /** The program instruction's accounts by IDL name. */
  accounts: Record<string, string>;
}

function computeBudget(limit: number, microLamports: bigint): Instruction[] {
  const program = address(COMPUTE_BUDGET_PROGRAM);
  const setLimit = new Uint8Array(5);
  setLimit[0] = 2; // SetComputeUnitLimit(u32)
  new DataView(setLimit.buffer).setUint32(1, limit, true);
  const out: Instruction[] = [{ programAddress: program, data: setLimit }];
  if (microLamports > 0n) {
    const setPrice = new Uint8Array(9);
    setPrice[0] = 3; // SetComputeUnitPrice(u64)
    new DataView(setPrice.buffer).setBigUint64(1, microLamports, true);
    out.push({ programAddress: program, data: setPrice });
  }
  return out;
}

/** An account's role in a compiled message: whether it signs, whether it is written. */
export const accountRole = (a: Pick<ResolvedAccount, 'signer' | 'writable'>): AccountRole =>
  a.signer ? (a.writable ? AccountRole.WRITABLE_SIGNER : AccountRole.READONLY_SIGNER) : a.writable ? AccountRole.WRITABLE : AccountRole.READONLY;

/**
 * A v0 wire transaction (base64, as `sendTransaction` takes it) of these instructions in this
 * order, `feePayer` its first signer and `recent` its lifetime; every signature slot zeroed.
 */
export function compileWireTransaction(feePayer: string, recent: RecentBlockhash, instructions: Instruction[]): string {
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayer(address(feePayer), m),
    (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: toBlockhash(recent.blockhash), lastValidBlockHeight: recent.lastValidBlockHeight }, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  return getBase64EncodedWireTransaction(compileTransaction(message));
}

/**
 * An unsigned v0 transaction: compute budget first, then the program's instruction with the
 * accounts a real client passes (PDAs derived from the IDL's seeds), with `recent` as its
 * lifetime. The service never signs and never sends it.
 */
export async function buildProgramTransaction<N extends InstructionName>(b: BuildArgs<N>): Promise<BuiltTransaction> {
  const accounts = await resolveAccounts(b.name, b.programId, b.accounts);
  const signers = accounts.filter((a) => a.signer);
  if (signers.length !== 1 || signers[0]!.address !== b.signer) throw new Error(`${b.name}: the signer account must be the requesting wallet`);
  const ix: Instruction = {
    programAddress: address(b.programId),
    accounts: accounts.map((a) => ({ address: address(a.address), role: accountRole(a) })),
    data: encodeInstructionData(b.name, b.args),
  };
  return {
    transaction: compileWireTransaction(b.signer, b.recent, [...computeBudget(COMPUTE_UNIT_LIMITS[b.name], b.microLamportsPerCu ?? 0n), ix]),
    blockhash: b.recent.blockhash,
    lastValidBlockHeight: b.recent.lastValidBlockHeight.toString(),
    accounts: Object.fromEntries(accounts.map((a) => [a.name, a.address])),
  };
}
