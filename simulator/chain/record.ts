import { COMPUTE_BUDGET_PROGRAM, type RawInstruction, type RawTransaction } from '../../core/events';
import { encodeBase58 } from './base58';
import type { Accepted } from './preflight';
import { collectLogs } from './log-collector';
import { isPrecompileProgram } from './precompiles';
import type { AccountMeta, Execution, Instruction, UnsignedTransaction } from './types';

const DEFAULT_UNIT_LIMIT = 200_000;
/** What an emit_cpi self-invocation costs (its own `consumed` line). */
const CPI_UNITS = 1_200;

/** Instruction data in base58, remembered for compute-budget instructions (senders reuse theirs). */
const encoded = new WeakMap<Uint8Array, string>();
function base58Of(data: Uint8Array, reused: boolean): string {
  let s = reused ? encoded.get(data) : undefined;
  if (s === undefined) {
    s = encodeBase58(data);
    if (reused) encoded.set(data, s);
  }
  return s;
}

/** Where a transaction's accounts sit in its message. */
interface Layout {
  feePayer: string;
  programs: string[];
  lists: (readonly AccountMeta[])[];
  keys: string[];
  programIdIndex: number[];
  accounts: number[][];
}
/**
 * Layouts by the last instruction's account list, for lists that cannot change (frozen): a
 * client that takes its lists from the program's interface sends the same few again and again.
 */
const layouts = new WeakMap<readonly AccountMeta[], Layout>();

/**
 * The fee payer first, then writable signers, read-only signers, writable and read-only
 * accounts (programs among the last), each account once with the strongest role any
 * instruction gives it: how a wallet's library compiles a message.
 */
function layoutOf(tx: UnsignedTransaction): Layout {
  const ixs = tx.instructions;
  const anchor = ixs[ixs.length - 1]?.accounts;
  let cacheable = anchor !== undefined;
  for (const ix of ixs) cacheable &&= Object.isFrozen(ix.accounts);
  if (cacheable) {
    const l = layouts.get(anchor!);
    let same = l !== undefined && l.feePayer === tx.feePayer && l.lists.length === ixs.length;
    for (let i = 0; same && i < ixs.length; i++) same = l!.lists[i] === ixs[i]!.accounts && l!.programs[i] === ixs[i]!.programId;
    if (same) return l!;
  }
  const roles = new Map<string, number>();
  // Role bits: 1 signer, 2 writable; the fee payer is both.
  roles.set(tx.feePayer, 3);
  for (const ix of ixs) {
    for (const a of ix.accounts) roles.set(a.address, (roles.get(a.address) ?? 0) | (a.signer ? 1 : 0) | (a.writable ? 2 : 0));
    if (!roles.has(ix.programId)) roles.set(ix.programId, 0);
  }
  const groups: string[][] = [[tx.feePayer], [], [], [], []];
  // The group of each role: writable signers (bits 3), read-only signers (1), writable (2), read-only (0).
  const groupOf = [4, 2, 3, 1];
  for (const [address, bits] of roles) if (address !== tx.feePayer) groups[groupOf[bits]!]!.push(address);
  const keys: string[] = [];
  for (const g of groups) for (const k of g) keys.push(k);
  const at = new Map<string, number>();
  for (let i = 0; i < keys.length; i++) at.set(keys[i]!, i);
  const l: Layout = {
    feePayer: tx.feePayer,
    programs: ixs.map((ix) => ix.programId),
    lists: ixs.map((ix) => ix.accounts),
    keys,
    programIdIndex: ixs.map((ix) => at.get(ix.programId)!),
    accounts: ixs.map((ix) => ix.accounts.map((a) => at.get(a.address)!)),
  };
  if (cacheable) layouts.set(anchor!, l);
  return l;
}

/** An unsigned transaction as its message records it; the instructions keep the roles their sender gave. */
export function compile(tx: UnsignedTransaction): Omit<Accepted, 'index' | 'signature'> {
  const l = layoutOf(tx);
  const instructions: RawInstruction[] = tx.instructions.map((ix, i) => ({
    programIdIndex: l.programIdIndex[i]!,
    accounts: l.accounts[i]!.slice(),
    data: base58Of(ix.data, ix.programId === COMPUTE_BUDGET_PROGRAM),
    stackHeight: null,
  }));
  return { instructions: tx.instructions, message: { accountKeys: l.keys.slice(), instructions } };
}

/** The limit a SetComputeUnitLimit instruction asks for, else the default. */
export function computeUnitLimit(instructions: readonly Instruction[]): number {
  const set = instructions.find((ix) => ix.programId === COMPUTE_BUDGET_PROGRAM && ix.data[0] === 2 && ix.data.length === 5);
  return set ? new DataView(set.data.buffer, set.data.byteOffset, 5).getUint32(1, true) : DEFAULT_UNIT_LIMIT;
}

/**
 * The transaction as `getTransaction` (json, version 0) shows it once run: the runtime's
 * invoke and result lines around what the program logged (none for a precompile unless
 * `precompilesLogged`), cut as the validator's log collector cuts it, its self-invocations as inner
 * instructions, and the error of a failed instruction.
 */
export function recordTransaction(tx: Accepted, signature: string, slot: number, blockTime: number, run: Execution, opts: { precompilesLogged?: boolean; logBytesLimit?: number } = {}): RawTransaction {
  const keys = tx.message.accountKeys as string[];
  const program = tx.instructions[tx.index]!.programId;
  const limit = computeUnitLimit(tx.instructions);
  const logs: string[] = [];
  const inner: RawInstruction[] = [];
  for (const ix of tx.instructions.slice(0, tx.index)) {
    // Agave's message processor verifies a precompile without the runtime's invoke and result lines.
    if (isPrecompileProgram(ix.programId) && !opts.precompilesLogged) continue;
    logs.push(`Program ${ix.programId} invoke [1]`, `Program ${ix.programId} success`);
  }
  logs.push(`Program ${program} invoke [1]`);
  for (const o of run.output) {
    if ('log' in o) {
      logs.push(o.log);
      continue;
    }
    const callee = o.invoke.programId;
    inner.push({ programIdIndex: keys.indexOf(callee), accounts: o.invoke.accounts.map((a) => keys.indexOf(a.address)), data: encodeBase58(o.invoke.data), stackHeight: 2 });
    logs.push(`Program ${callee} invoke [2]`, `Program ${callee} consumed ${CPI_UNITS} of ${limit - 20_000} compute units`, `Program ${callee} success`);
  }
  logs.push(`Program ${program} consumed ${run.units} of ${limit} compute units`);
  const failed = run.error !== undefined;
  logs.push(failed ? `Program ${program} failed: custom program error: 0x${run.error!.toString(16)}` : `Program ${program} success`);
  return {
    slot,
    blockTime,
    version: 0,
    transaction: { signatures: [signature], message: tx.message },
    meta: {
      err: failed ? { InstructionError: [tx.index, { Custom: run.error! }] } : null,
      logMessages: collectLogs(logs, opts.logBytesLimit),
      innerInstructions: inner.length ? [{ index: tx.index, instructions: inner }] : [],
      loadedAddresses: { writable: [], readonly: [] },
    },
  };
}
