import { COMPUTE_BUDGET_PROGRAM } from '../../core/events';
import type { SlotContext } from '../chain/chain';
import type { Instruction, UnsignedTransaction } from '../chain/types';
import type { ProgramState } from '../program/state';
import { encodeProgramInstruction, instructionAccounts, unitLimitOf, type ProgramArgs, type ProgramInstructionName } from '../program/interface';
import type { PriceFeed } from './prices';
import type { Random } from './random';

const budgets = new Map<number, Instruction>();
/** SetComputeUnitLimit(u32), as the `/tx` builders put first. */
function computeBudget(limit: number): Instruction {
  let ix = budgets.get(limit);
  if (!ix) {
    const data = new Uint8Array(5);
    data[0] = 2;
    new DataView(data.buffer).setUint32(1, limit, true);
    budgets.set(limit, (ix = { programId: COMPUTE_BUDGET_PROGRAM, accounts: Object.freeze([]) as never, data }));
  }
  return ix;
}

/**
 * A wallet's transaction, as a client builds one: a compute-budget instruction, then the
 * program's instruction with its data and accounts from the program's interface (the IDL's
 * own for the five a wallet sends). Unsigned: the in-process senders hand it to the chain as is.
 */
export function programTransaction<N extends ProgramInstructionName>(
  programId: string,
  recentBlockhash: string,
  name: N,
  signer: string,
  accounts: Record<string, string>,
  args: ProgramArgs[N],
): UnsignedTransaction {
  return {
    feePayer: signer,
    recentBlockhash,
    instructions: [computeBudget(unitLimitOf(name)), { programId, accounts: instructionAccounts(name, programId, accounts), data: encodeProgramInstruction(name, args) }],
  };
}

/** Sends a program instruction in the slot being produced, signed (in name) by `signer`. */
export type Send = <N extends ProgramInstructionName>(name: N, signer: string, accounts: Record<string, string>, args: ProgramArgs[N]) => { signature: string; failed: boolean };

/**
 * What every simulated participant shares: the random stream, the wallets, the price feeds,
 * the program's accounts to read (as a client reads them over RPC), and the way to send.
 */
export interface Crowd {
  readonly rng: Random;
  readonly programId: string;
  readonly program: Readonly<ProgramState>;
  /** The simulated wallets (their keys are the simulator's `walletKeys`). */
  readonly wallets: readonly string[];
  readonly walletSet: ReadonlySet<string>;
  readonly mints: readonly string[];
  readonly feeds: readonly PriceFeed[];
  /** The feed each market the keeper created settles on. */
  readonly marketFeed: Map<string, number>;
  /** The chain's latest blockhash (a transaction's lifetime). */
  recentBlockhash(): string;
}

export function sender(crowd: Crowd, slot: SlotContext): Send {
  return (name, signer, accounts, args) => slot.send(programTransaction(crowd.programId, crowd.recentBlockhash(), name, signer, accounts, args));
}
