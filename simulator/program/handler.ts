import type { ProgramEvent } from '../../core/events';
import type { ProgramArgs, ProgramInstructionName } from './interface';
import type { ProgramState } from './state';

/** An instruction as its handler gets it: decoded arguments, accounts by name, the signer. */
export interface Call<N extends ProgramInstructionName> {
  name: N;
  args: ProgramArgs[N];
  accounts: Record<string, string>;
  signer: string;
  /** The block's time (Unix seconds): the program's clock. */
  now: number;
}

/** A refusal after events were emitted (they stay in the failed transaction's log). */
export interface LateRefusal {
  error: string;
  emitted: ProgramEvent[];
}

/**
 * One instruction's rules. `check` is everything the instruction requires before it changes
 * anything, as an IDL error name (preflight simulation and execution both ask it); `run`
 * applies a call `check` passed and returns the events it emits, in order.
 */
export interface Handler<N extends ProgramInstructionName> {
  check(s: ProgramState, c: Call<N>): string | undefined;
  run(s: ProgramState, c: Call<N>): ProgramEvent[] | LateRefusal;
  /** What only running finds out (after emitting): a simulation reports it up front. */
  preflight?(s: ProgramState, c: Call<N>): string | undefined;
}

export type Handlers<K extends ProgramInstructionName> = { [N in K]: Handler<N> };
