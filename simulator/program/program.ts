import { encodeEvent, EVENT_IX_TAG, type ProgramEvent } from '../../core/events';
import { programError } from '../../core/tx';
import type { AccountMeta, Execution, Instruction, Invocation, Program, ProgramOutput, Refusal } from '../chain/types';
import { configHandlers } from './config';
import type { Call, Handler, Handlers } from './handler';
import { accountNames, decodeProgramInstruction, instructionAccounts, logNameOf, type DecodedProgramInstruction, type ProgramInstructionName } from './interface';
import { marketHandlers } from './markets';
import { orderHandlers } from './orders';
import { createProgramState, type ProgramState } from './state';

/** Every instruction's rules, by name: the program. */
const HANDLERS: Handlers<ProgramInstructionName> = { ...orderHandlers, ...marketHandlers, ...configHandlers };

/** Anchor's InstructionFallbackNotFound: data that is none of the program's instructions. */
const FALLBACK_NOT_FOUND = 101;

export interface MarketProgramOptions {
  programId: string;
  /** The config's authority (set_fee_config, set_tick_size). */
  admin: string;
  /** How events leave the program: `Program data:` logs, emit_cpi, or alternating by the transaction's ordinal ('mixed'). */
  emit?: 'log' | 'cpi' | 'mixed';
}

/** Events of a transaction that succeeded, with where they happened. */
export type EventListener = (events: ProgramEvent[], at: Invocation) => void;

export interface MarketProgram extends Program {
  /** The program's accounts, to read (clients, the truth record); only instructions change them. */
  readonly state: Readonly<ProgramState>;
  /** Called with the events of every instruction that succeeds. */
  onEvents(listener: EventListener): void;
}

/**
 * The market program on the simulated chain. An instruction arrives as bytes with its
 * accounts, like on a validator: decoded with the program's interface (the IDL's instructions
 * with `core/tx`), its accounts checked against the ones the interface derives (Anchor's
 * account constraints), then its handler's `check` and `run`. What it emits is logged or
 * self-invoked (emit_cpi) as the program was built to.
 */
export function createMarketProgram(opts: MarketProgramOptions): MarketProgram {
  const state = createProgramState(opts.programId, opts.admin);
  const emit = opts.emit ?? 'mixed';
  const listeners: EventListener[] = [];

  /**
   * Account lists found right, by identity: a client that took its list from the interface
   * (`instructionAccounts`, frozen and shared) passes it again and again; checked once.
   */
  const checked = new WeakMap<readonly AccountMeta[], { name: ProgramInstructionName; accounts: Record<string, string>; signer: string }>();

  /** The call an instruction makes, or the refusal of its data or accounts. */
  function callOf(ix: Instruction, now: number): { call: Call<ProgramInstructionName> } | Refusal {
    const decoded = decodeProgramInstruction(ix.data);
    if (!decoded) return { code: FALLBACK_NOT_FOUND, logs: [] };
    const known = checked.get(ix.accounts);
    if (known && known.name === decoded.name) return { call: { ...(decoded as DecodedProgramInstruction), accounts: known.accounts, signer: known.signer, now } as Call<ProgramInstructionName> };
    const names = accountNames(decoded.name);
    if (ix.accounts.length !== names.length) return refusal('InvalidAccount');
    const accounts: Record<string, string> = {};
    names.forEach((n, i) => (accounts[n] = ix.accounts[i]!.address));
    const want = instructionAccounts(decoded.name, state.programId, accounts);
    for (let i = 0; i < want.length; i++) {
      const w = want[i]!;
      const got = ix.accounts[i]!;
      if (got.address !== w.address || (w.writable && !got.writable) || (w.signer && !got.signer)) {
        return refusal('InvalidAccount', [`Program log: account ${names[i]} is not the expected one`]);
      }
    }
    const signer = ix.accounts[want.findIndex((a) => a.signer)]!.address;
    if (Object.isFrozen(ix.accounts) && ix.accounts.every(Object.isFrozen)) checked.set(ix.accounts, { name: decoded.name, accounts: Object.freeze(accounts), signer });
    return { call: { ...(decoded as DecodedProgramInstruction), accounts, signer, now } as Call<ProgramInstructionName> };
  }

  const handlerOf = (name: ProgramInstructionName) => HANDLERS[name] as unknown as Handler<ProgramInstructionName>;

  function output(name: ProgramInstructionName, events: ProgramEvent[], via: 'log' | 'cpi'): ProgramOutput[] {
    const out: ProgramOutput[] = [{ log: `Program log: Instruction: ${logNameOf(name)}` }];
    for (const ev of events) {
      const bytes = encodeEvent(ev);
      if (via === 'log') {
        out.push({ log: `Program data: ${Buffer.from(bytes).toString('base64')}` });
        continue;
      }
      const data = new Uint8Array(8 + bytes.length);
      data.set(EVENT_IX_TAG, 0);
      data.set(bytes, 8);
      out.push({ invoke: { programId: state.programId, accounts: [{ address: state.eventAuthority, signer: true, writable: false }], data } });
    }
    return out;
  }

  return {
    id: opts.programId,
    state,
    onEvents: (listener) => void listeners.push(listener),

    simulate(ix, blockTime) {
      const c = callOf(ix, blockTime);
      if (!('call' in c)) return c;
      const h = handlerOf(c.call.name);
      const problem = h.check(state, c.call) ?? h.preflight?.(state, c.call);
      return problem ? refusal(problem, [`Program log: AnchorError: ${problem}`]) : undefined;
    },

    execute(ix, at): Execution {
      const via = emit === 'mixed' ? (at.ordinal % 3 === 0 ? 'cpi' : 'log') : emit;
      const c = callOf(ix, at.blockTime);
      if (!('call' in c)) return { output: c.logs.map((log) => ({ log })), units: 4_000, error: c.code };
      const { call } = c;
      const h = handlerOf(call.name);
      const problem = h.check(state, call);
      if (problem) return { output: output(call.name, [], via), units: 4_000, error: programError(problem).code };
      const result = h.run(state, call);
      const events = Array.isArray(result) ? result : result.emitted;
      const units = 4_000 + 1_500 * events.length;
      if (!Array.isArray(result)) return { output: output(call.name, events, via), units, error: programError(result.error).code };
      for (const l of listeners) l(events, at);
      return { output: output(call.name, events, via), units };
    },
  };
}

const refusal = (name: string, logs: string[] = []): Refusal => ({ code: programError(name).code, logs });
