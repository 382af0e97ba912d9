import { createHash } from 'node:crypto';
import { address, getProgramDerivedAddress } from '@solana/addresses';
import bs58 from 'bs58';
import { IDL } from '../events/codec';
import { instructionDef, type IdlAccount, type InstructionName } from './instructions';

/**
 * Account resolution from the IDL: every account an instruction takes is either a fixed
 * program address, a program-derived address whose seeds the IDL lists (constants and other
 * accounts of the same instruction), or one the caller names (the signer, the market, the
 * settlement mint, the creator). Seeds, in `docs/decisions.md` D-140:
 *   config                 ["config"]
 *   position               ["position", market, owner]
 *   referral_lock          ["referral", owner]
 *   market_vault           ["vault", market]
 *   referrer_earnings      ["referrer", referrer, settlement_mint]
 *   referral_vault         ["referral_vault", settlement_mint]
 *   event_authority        ["__event_authority"]   (Anchor's emit_cpi signer)
 *   *_token_account        associated token account: [wallet, token program, mint] under the ATA program
 */

export interface ResolvedAccount {
  name: string;
  address: string;
  writable: boolean;
  signer: boolean;
}

type Seeds = Uint8Array[];
type Derive = (programId: string, seeds: Seeds) => string | Promise<string>;

/** The address and bump kit's getProgramDerivedAddress finds (the first off-curve bump from 255 down). */
export async function derivePda(programId: string, seeds: Seeds): Promise<string> {
  const [pda] = await getProgramDerivedAddress({ programAddress: address(programId), seeds });
  return pda;
}

const PDA_MARKER = Buffer.from('ProgramDerivedAddress');
const pdaMemo = new Map<string, string>();

// Ed25519 point decompression on raw bytes (the math @solana/addresses vendors from noble):
// its isOffCurveAddress takes base58 and validates it, which tripled the simulator's time.
const P = 2n ** 255n - 19n;
const D = 37095705934669439343138083508754565189542113879843219016388785533085940283555n;
const RM1 = 19681161376707505956807079304988542015446066515923890162744021073123829784752n;
const mod = (a: bigint) => ((a % P) + P) % P;
function pow2(x: bigint, n: number): bigint {
  let r = x;
  while (n-- > 0) r = (r * r) % P;
  return r;
}
function pow_2_252_3(x: bigint): bigint {
  const x2 = (x * x) % P;
  const b2 = (x2 * x) % P;
  const b4 = (pow2(b2, 2) * b2) % P;
  const b5 = (pow2(b4, 1) * x) % P;
  const b10 = (pow2(b5, 5) * b5) % P;
  const b20 = (pow2(b10, 10) * b10) % P;
  const b40 = (pow2(b20, 20) * b20) % P;
  const b80 = (pow2(b40, 40) * b40) % P;
  const b160 = (pow2(b80, 80) * b80) % P;
  const b240 = (pow2(b160, 80) * b80) % P;
  const b250 = (pow2(b240, 10) * b10) % P;
  return (pow2(b250, 2) * x) % P;
}
/** Whether 32 bytes are the compressed form of a point on the Ed25519 curve. */
export function isOnCurve(bytes: Uint8Array): boolean {
  const le = Uint8Array.from(bytes);
  const odd = (le[31]! & 0x80) !== 0;
  le[31] = le[31]! & 0x7f;
  const y = BigInt(`0x${Buffer.from(le).reverse().toString('hex')}`);
  const y2 = mod(y * y);
  const u = mod(y2 - 1n);
  const v = mod(D * y2 + 1n);
  const v3 = mod(v * v * v);
  const v7 = mod(v3 * v3 * v);
  let x = mod(u * v3 * pow_2_252_3(mod(u * v7)));
  const vx2 = mod(v * x * x);
  const root1 = vx2 === u;
  const root2 = vx2 === mod(-u);
  if (!root1 && !root2) return false;
  if (!root1) x = mod(x * RM1);
  return !(x === 0n && odd);
}

/**
 * Synchronous twin of derivePda for the simulated chain, which derives a position address
 * inside a block (a unit test holds the two to the same answers). Memoised: the same few
 * thousand positions recur.
 */
export function derivePdaSync(programId: string, seeds: Seeds): string {
  const key = `${programId}:${seeds.map((s) => Buffer.from(s).toString('hex')).join(':')}`;
  const hit = pdaMemo.get(key);
  if (hit) return hit;
  const program = bs58.decode(programId);
  for (let bump = 255; bump >= 0; bump--) {
    const h = createHash('sha256');
    for (const s of seeds) h.update(s);
    const digest = h.update(Uint8Array.of(bump)).update(program).update(PDA_MARKER).digest();
    if (!isOnCurve(digest)) {
      const found = bs58.encode(digest);
      if (pdaMemo.size >= 100_000) pdaMemo.clear();
      pdaMemo.set(key, found);
      return found;
    }
  }
  throw new Error('no viable bump seed');
}

/** The program's id in the IDL stands for the tenant's PROGRAM_ID wherever it appears. */
const fixedAddress = (a: IdlAccount, programId: string): string | undefined =>
  a.address === undefined ? undefined : a.address === IDL.address ? programId : a.address;

function seedsOf(a: IdlAccount, known: Map<string, string>): Seeds | undefined {
  const out: Seeds = [];
  for (const s of a.pda!.seeds) {
    if (s.kind === 'const') out.push(Uint8Array.from(s.value));
    else if (s.kind === 'account') {
      const v = known.get(s.path);
      if (v === undefined) return undefined;
      out.push(bs58.decode(v));
    } else throw new Error(`arg seeds are not used by this program (${a.name})`);
  }
  return out;
}

/** Accounts the caller must name for an instruction (neither fixed nor derivable). */
export function callerAccounts(name: InstructionName): string[] {
  return instructionDef(name).accounts.filter((a) => a.address === undefined && a.pda === undefined).map((a) => a.name);
}

async function resolveWith(name: InstructionName, programId: string, given: Record<string, string>, derive: Derive): Promise<ResolvedAccount[]> {
  const def = instructionDef(name);
  const known = new Map<string, string>();
  for (const n of callerAccounts(name)) {
    const v = given[n];
    if (v === undefined) throw new Error(`${name} needs account ${n}`);
    known.set(n, v);
  }
  for (const a of def.accounts) {
    const f = fixedAddress(a, programId);
    if (f !== undefined) known.set(a.name, f);
  }
  // Seeds may name accounts derived themselves: resolve until nothing changes.
  let pending = def.accounts.filter((a) => a.pda && !known.has(a.name));
  while (pending.length) {
    const before = pending.length;
    for (const a of pending) {
      const seeds = seedsOf(a, known);
      if (!seeds) continue;
      const under = a.pda!.program ? bs58.encode(Uint8Array.from(a.pda!.program.value)) : programId;
      known.set(a.name, await derive(under, seeds));
    }
    pending = pending.filter((a) => !known.has(a.name));
    if (pending.length === before) throw new Error(`${name}: unresolvable seeds for ${pending.map((a) => a.name).join(', ')}`);
  }
  return def.accounts.map((a) => ({ name: a.name, address: known.get(a.name)!, writable: !!a.writable, signer: !!a.signer }));
}

/** Every account of `name` in the IDL's order, PDAs derived with @solana/kit. */
export function resolveAccounts(name: InstructionName, programId: string, given: Record<string, string>): Promise<ResolvedAccount[]> {
  return resolveWith(name, programId, given, derivePda);
}

/** One derived account of an instruction, synchronously (the simulated chain). */
export function deriveAccountSync(name: InstructionName, account: string, programId: string, given: Record<string, string>): string {
  const def = instructionDef(name);
  const a = def.accounts.find((x) => x.name === account);
  if (!a?.pda) throw new Error(`${name}.${account} is not a PDA`);
  const known = new Map(Object.entries(given));
  const seeds = seedsOf(a, known);
  if (!seeds) throw new Error(`${name}.${account}: seeds need ${a.pda.seeds.filter((s) => s.kind === 'account').map((s) => (s as { path: string }).path).join(', ')}`);
  return derivePdaSync(a.pda.program ? bs58.encode(Uint8Array.from(a.pda.program.value)) : programId, seeds);
}
