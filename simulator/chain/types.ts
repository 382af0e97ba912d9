import type { RawTransaction } from '../../core/events';

/**
 * The simulated chain's own vocabulary: blocks, accounts, instructions, transactions and the
 * programs that run them. Nothing here knows what the program it hosts does.
 */

export interface Block {
  slot: number;
  blockTime: number;
  transactions: RawTransaction[];
}

/** An account's data as the chain holds it now (`getAccountInfo`). */
export interface AccountSnapshot {
  data: Uint8Array;
  owner: string;
  lamports: number;
  /** The slot the account was last written in. */
  slot: number;
}

/** An account an instruction names, with the roles the transaction gives it. */
export interface AccountMeta {
  address: string;
  signer: boolean;
  writable: boolean;
}

export interface Instruction {
  programId: string;
  accounts: AccountMeta[];
  data: Uint8Array;
}

/** A transaction as a wallet composes it, before signing. */
export interface UnsignedTransaction {
  feePayer: string;
  recentBlockhash: string;
  instructions: Instruction[];
}

/** What a program is told about the transaction it runs in. */
export interface Invocation {
  signature: string;
  slot: number;
  blockTime: number;
  /** The transaction's number in the chain's history, from 1. */
  ordinal: number;
}

/** One thing a running instruction did, in order: a log line, or a call to a program (CPI). */
export type ProgramOutput = { log: string } | { invoke: Instruction };

export interface Execution {
  output: ProgramOutput[];
  /** Compute units the instruction used. */
  units: number;
  /** The program's error code when the instruction failed (what it output until then stays in the log). */
  error?: number;
}

/** A refusal found by simulating an instruction (a validator's preflight). */
export interface Refusal {
  code: number;
  logs: string[];
}

/** A program the chain hosts. */
export interface Program {
  readonly id: string;
  /** What running `ix` in a block of `blockTime` would be refused with, without changing anything; undefined if it would run. */
  simulate(ix: Instruction, blockTime: number): Refusal | undefined;
  execute(ix: Instruction, at: Invocation): Execution;
}

/** The chain as its JSON-RPC server reads and drives it (`simulator/rpc-server.ts`). */
export interface RpcChain {
  readonly programId: string;
  readonly slot: number;
  latestBlockhash(): { slot: number; blockhash: string; lastValidBlockHeight: number };
  /** `sendTransaction`: the base64 wire transaction's signature, or an RpcSubmitError. */
  submit(base64: string): string;
  account(address: string): AccountSnapshot | null;
  nextBlock(): Block;
}
