import { decodeBase58, encodeBase58 } from '../base58';
import { IDL_PROGRAM, INSTRUCTIONS, type IdlAccount } from './idl';

/**
 * An instruction's accounts from the IDL (D-532), as the API's builder resolves them: a fixed
 * program address, a program-derived address from its seeds, or one the caller names. Program
 * addresses are found as the chain finds them: SHA-256 over seeds, bump, program id and
 * "ProgramDerivedAddress", the first bump from 255 down whose hash is not an Ed25519 point.
 * SHA-256 is WebCrypto's (`crypto.subtle`, in Node 20 and every browser's secure context): no
 * dependency, nothing added to the browser build.
 */
export type InstructionName = keyof typeof INSTRUCTIONS;
export interface ResolvedAccount {
  name: string;
  address: string;
  writable: boolean;
  signer: boolean;
}

const MARKER = new TextEncoder().encode('ProgramDerivedAddress');

// Ed25519 point decompression (RFC 8032 §5.1.3) on the hash's bytes, in BigInt arithmetic.
const P = 2n ** 255n - 19n;
const D = 37095705934669439343138083508754565189542113879843219016388785533085940283555n;
const SQRT_M1 = 19681161376707505956807079304988542015446066515923890162744021073123829784752n;
const mod = (a: bigint) => ((a % P) + P) % P;
function pow(b: bigint, e: bigint): bigint {
  let r = 1n;
  for (b = mod(b); e > 0n; e >>= 1n, b = (b * b) % P) if (e & 1n) r = (r * b) % P;
  return r;
}
/** Whether 32 bytes are the compressed form of a point on the curve (an address a key could sign for). */
export function isOnCurve(bytes: Uint8Array): boolean {
  let y = 0n;
  for (let i = 31; i >= 0; i--) y = (y << 8n) | BigInt(i === 31 ? bytes[i]! & 0x7f : bytes[i]!);
  const odd = (bytes[31]! & 0x80) !== 0;
  const y2 = mod(y * y);
  const u = mod(y2 - 1n);
  const v = mod(D * y2 + 1n);
  const v3 = mod(v * v * v);
  let x = mod(u * v3 * pow(mod(u * v3 * v3 * v), (P - 5n) / 8n));
  const vx2 = mod(v * x * x);
  if (vx2 !== u && vx2 !== mod(-u)) return false;
  if (vx2 !== u) x = mod(x * SQRT_M1);
  return !(x === 0n && odd);
}

function subtle(): typeof globalThis.crypto.subtle {
  const s = globalThis.crypto?.subtle;
  if (!s) throw new Error('checking a transaction needs WebCrypto (crypto.subtle): in a browser, a secure context (https or localhost)');
  return s;
}

/** The program-derived address of `seeds` under `programId`. */
export async function derivePda(programId: string, seeds: Uint8Array[]): Promise<string> {
  const program = decodeBase58(programId);
  const size = seeds.reduce((n, s) => n + s.length, 0) + 1 + 32 + MARKER.length;
  for (let bump = 255; bump >= 0; bump--) {
    const input = new Uint8Array(size);
    let at = 0;
    for (const s of [...seeds, Uint8Array.of(bump), program, MARKER]) {
      input.set(s, at);
      at += s.length;
    }
    const digest = new Uint8Array(await subtle().digest('SHA-256', input));
    if (!isOnCurve(digest)) return encodeBase58(digest);
  }
  throw new Error('no viable bump seed');
}

/** Accounts the caller names for an instruction (neither fixed nor derived). */
export const callerAccounts = (name: InstructionName): IdlAccount[] => INSTRUCTIONS[name].accounts.filter((a) => a.address === undefined && a.seeds === undefined);

/** Every account of `name` in the IDL's order; the IDL's program id stands for `programId`. */
export async function resolveAccounts(name: InstructionName, programId: string, given: Record<string, string>): Promise<ResolvedAccount[]> {
  const { accounts } = INSTRUCTIONS[name];
  const known = new Map<string, string>();
  for (const a of callerAccounts(name)) {
    const v = given[a.name];
    if (v === undefined) throw new Error(`${name} needs account ${a.name}`);
    known.set(a.name, v);
  }
  for (const a of accounts) if (a.address !== undefined) known.set(a.name, a.address === IDL_PROGRAM ? programId : a.address);
  // Seeds may name accounts derived themselves: resolve until nothing changes.
  let pending = accounts.filter((a) => a.seeds && !known.has(a.name));
  while (pending.length) {
    const before = pending.length;
    for (const a of pending) {
      const seeds = a.seeds!.map((s) => (typeof s === 'string' ? new TextEncoder().encode(s) : 'key' in s ? decodeBase58(s.key) : known.has(s.account) ? decodeBase58(known.get(s.account)!) : undefined));
      if (seeds.some((s) => s === undefined)) continue;
      known.set(a.name, await derivePda(a.program ?? programId, seeds as Uint8Array[]));
    }
    pending = pending.filter((a) => !known.has(a.name));
    if (pending.length === before) throw new Error(`${name}: unresolvable seeds for ${pending.map((a) => a.name).join(', ')}`);
  }
  return accounts.map((a) => ({ name: a.name, address: known.get(a.name)!, writable: !!a.writable, signer: !!a.signer }));
}
