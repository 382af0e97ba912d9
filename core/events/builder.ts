import bs58 from 'bs58';
import { encodeEvent, EVENT_IX_TAG } from './codec';
import type { RawTransaction } from './transaction';
import type { ProgramEvent } from './types';

export const COMPUTE_BUDGET_PROGRAM = 'ComputeBudget111111111111111111111111111111';
export const SYSTEM_PROGRAM = '11111111111111111111111111111111';
/**
 * The signature-verification precompiles (Ed25519, secp256k1, secp256r1): instructions an
 * oracle or a signed-order check puts in front of a program's, verified by Agave's message
 * processor without an invoke log line (D-470).
 */
export const PRECOMPILE_PROGRAMS = ['Ed25519SigVerify111111111111111111111111111', 'KeccakSecp256k11111111111111111111111111111', 'Secp256r1SigVerify1111111111111111111111111'] as const;

export interface BuildTransactionArgs {
  programId: string;
  signature: string;
  slot: number;
  blockTime: number | null;
  /** Fee payer / signer. */
  signer: string;
  /** Anchor's event-authority PDA of the program (the emit_cpi signer). */
  eventAuthority: string;
  instructionName: string;
  events: ProgramEvent[];
  /** How the program emits: `emit!` log lines or `emit_cpi!` self-invocations. */
  via?: 'log' | 'cpi';
  err?: unknown;
}

/**
 * A transaction exactly as `getTransaction` (encoding json, version 0) shows one
 * instruction of our program that emitted `events`: a compute-budget instruction first,
 * then our program's invoke frame with its log lines or emit_cpi inner instructions.
 * The simulated chain and the parser tests both build transactions here.
 */
export function buildTransaction(a: BuildTransactionArgs): RawTransaction {
  const via = a.via ?? 'log';
  const accountKeys = [a.signer, a.eventAuthority, a.programId, COMPUTE_BUDGET_PROGRAM];
  const programIdx = 2;
  const logs: string[] = [
    `Program ${COMPUTE_BUDGET_PROGRAM} invoke [1]`,
    `Program ${COMPUTE_BUDGET_PROGRAM} success`,
    `Program ${a.programId} invoke [1]`,
    `Program log: Instruction: ${a.instructionName}`,
  ];
  const innerIxs: { programIdIndex: number; accounts: number[]; data: string; stackHeight: number }[] = [];
  let units = 4_000;
  for (const ev of a.events) {
    const bytes = encodeEvent(ev);
    if (via === 'log') {
      logs.push(`Program data: ${Buffer.from(bytes).toString('base64')}`);
    } else {
      const data = new Uint8Array(8 + bytes.length);
      data.set(EVENT_IX_TAG, 0);
      data.set(bytes, 8);
      innerIxs.push({ programIdIndex: programIdx, accounts: [1], data: bs58.encode(data), stackHeight: 2 });
      logs.push(`Program ${a.programId} invoke [2]`);
      logs.push(`Program ${a.programId} consumed 1200 of 180000 compute units`);
      logs.push(`Program ${a.programId} success`);
    }
    units += 1_500;
  }
  const failed = a.err !== undefined && a.err !== null;
  logs.push(`Program ${a.programId} consumed ${units} of 200000 compute units`);
  logs.push(failed ? `Program ${a.programId} failed: custom program error: 0x1771` : `Program ${a.programId} success`);
  return {
    slot: a.slot,
    blockTime: a.blockTime,
    version: 0,
    transaction: {
      signatures: [a.signature],
      message: {
        accountKeys,
        instructions: [
          { programIdIndex: 3, accounts: [], data: '3DdGGhkhJbjm', stackHeight: null },
          { programIdIndex: programIdx, accounts: [0, 1], data: bs58.encode(Buffer.from(a.instructionName)), stackHeight: null },
        ],
      },
    },
    meta: {
      err: failed ? a.err : null,
      logMessages: logs,
      innerInstructions: innerIxs.length ? [{ index: 1, instructions: innerIxs }] : [],
      loadedAddresses: { writable: [], readonly: [] },
    },
  };
}
