/**
 * Precompile instructions in front of the program's, as an oracle update or a signed-order
 * check puts them (D-470): a real Ed25519SigVerify instruction (its offsets header, the
 * public key, the signature and the signed message inline, as `new_ed25519_instruction`
 * lays them out) over the program instruction's data. Which transactions get one is decided
 * from the transaction's ordinal, not the crowd's random stream, so a seed's chain is the same
 * with the setting on or off apart from these instructions.
 */
import { createHash } from 'node:crypto';
import { PRECOMPILE_PROGRAMS } from '../../core/events';
import { keyPairFromSeed, signEd25519 } from '../../core/ed25519';
import type { Instruction } from './types';

export interface PrecompileOptions {
  /** Share of in-process transactions (0–1) that get an Ed25519 instruction in front; 0 or unset: none. */
  share?: number;
  /**
   * Whether the precompile logs an `invoke [1]` line: false as Agave's message processor runs
   * precompiles today; true as a precompile rebuilt as an ordinary program would.
   */
  logged?: boolean;
}

export const ED25519_PROGRAM = PRECOMPILE_PROGRAMS[0];
const isPrecompile = new Set<string>(PRECOMPILE_PROGRAMS);
export const isPrecompileProgram = (programId: string): boolean => isPrecompile.has(programId);

const signer = keyPairFromSeed(createHash('sha256').update('simulated oracle signer').digest());

/** Whether transaction number `ordinal` gets a precompile: a hash of it against the share. */
export function wantsPrecompile(opts: PrecompileOptions | undefined, ordinal: number): boolean {
  const share = opts?.share ?? 0;
  if (share <= 0) return false;
  return createHash('sha256').update(`precompile:${ordinal}`).digest().readUInt32LE(0) / 2 ** 32 < share;
}

/** An Ed25519SigVerify instruction checking one signature over `message`, everything inline (offsets u16 LE, index 0xffff = this instruction). */
export function ed25519Instruction(message: Uint8Array): Instruction {
  const header = 2 + 14;
  const pubAt = header;
  const sigAt = pubAt + 32;
  const msgAt = sigAt + 64;
  const data = new Uint8Array(msgAt + message.length);
  const v = new DataView(data.buffer);
  data[0] = 1; // one signature; data[1] is padding
  const offsets = [sigAt, 0xffff, pubAt, 0xffff, msgAt, message.length, 0xffff];
  offsets.forEach((o, i) => v.setUint16(2 + i * 2, o, true));
  data.set(signer.publicKey, pubAt);
  data.set(signEd25519(message, signer.secretKey), sigAt);
  data.set(message, msgAt);
  return { programId: ED25519_PROGRAM, accounts: [], data };
}
