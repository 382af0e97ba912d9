import { createHash } from 'node:crypto';
import { getStructCodec, getU16Codec, getU64Codec, getU8Codec, type Codec } from '@solana/codecs';
import { IDL } from '../events/codec';
import type { EventKind } from '../events/types';

/**
 * The program's instructions as its Anchor IDL (`core/events/idl.json`, spec 0.1.0) declares
 * them: the builders (`/tx/*`) encode from these definitions and the simulated chain decodes
 * with them, so what the service builds and what the chain executes cannot drift apart.
 */
export const INSTRUCTION_NAMES = ['place_order', 'cancel_order', 'claim_payout', 'claim_referral', 'claim_creator_fees'] as const;
export type InstructionName = (typeof INSTRUCTION_NAMES)[number];

export type IdlSeed = { kind: 'const'; value: number[] } | { kind: 'account'; path: string } | { kind: 'arg'; path: string };
export interface IdlAccount {
  name: string;
  writable?: boolean;
  signer?: boolean;
  /** A fixed address (programs). */
  address?: string;
  /** A program-derived address: seeds in order, under `program` (const bytes) or this program. */
  pda?: { seeds: IdlSeed[]; program?: { kind: 'const'; value: number[] } };
}
type ArgType = 'u8' | 'u16' | 'u64';
export interface IdlInstruction {
  name: InstructionName;
  discriminator: number[];
  accounts: IdlAccount[];
  args: { name: string; type: ArgType }[];
}

export interface InstructionArgs {
  place_order: { side: number; priceBps: number; quantity: bigint; orderType: number };
  cancel_order: { orderId: bigint };
  claim_payout: Record<string, never>;
  claim_referral: Record<string, never>;
  claim_creator_fees: Record<string, never>;
}

const camel = (s: string) => s.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** Anchor's instruction discriminator rule: sha256("global:<name>")[0..8]. */
export function anchorInstructionDiscriminator(name: string): Uint8Array {
  return createHash('sha256').update(`global:${name}`).digest().subarray(0, 8);
}

const ARG_CODECS: Record<ArgType, () => Codec<unknown>> = {
  u8: () => getU8Codec() as Codec<unknown>,
  u16: () => getU16Codec() as Codec<unknown>,
  u64: () => getU64Codec() as unknown as Codec<unknown>,
};

interface Entry {
  def: IdlInstruction;
  discriminator: Uint8Array;
  codec: Codec<Record<string, unknown>>;
}

function load(): Map<InstructionName, Entry> {
  const raw = (IDL as unknown as { instructions: IdlInstruction[] }).instructions;
  const out = new Map<InstructionName, Entry>();
  for (const def of raw) {
    if (!(INSTRUCTION_NAMES as readonly string[]).includes(def.name)) throw new Error(`IDL instruction ${def.name} has no TypeScript type`);
    const codec = getStructCodec(def.args.map((a) => [camel(a.name), ARG_CODECS[a.type]()] as [string, Codec<unknown>])) as unknown as Codec<Record<string, unknown>>;
    out.set(def.name, { def, discriminator: Uint8Array.from(def.discriminator), codec });
  }
  for (const n of INSTRUCTION_NAMES) if (!out.has(n)) throw new Error(`IDL lacks instruction ${n}`);
  return out;
}
const entries = load();

export function instructionDef(name: InstructionName): IdlInstruction {
  return entries.get(name)!.def;
}

/** discriminator (8 bytes) + Borsh args: an instruction's data. */
export function encodeInstructionData<N extends InstructionName>(name: N, args: InstructionArgs[N]): Uint8Array {
  const e = entries.get(name)!;
  const body = e.codec.encode(args as unknown as Record<string, unknown>);
  const out = new Uint8Array(8 + body.length);
  out.set(e.discriminator, 0);
  out.set(body, 8);
  return out;
}

export type DecodedInstruction = { [N in InstructionName]: { name: N; args: InstructionArgs[N] } }[InstructionName];

/** Inverse of encodeInstructionData; undefined for data that is not exactly one of ours. */
export function decodeInstructionData(data: Uint8Array): DecodedInstruction | undefined {
  if (data.length < 8) return undefined;
  for (const e of entries.values()) {
    if (!e.discriminator.every((b, i) => data[i] === b)) continue;
    try {
      const [args, end] = e.codec.read(data, 8);
      return end === data.length ? ({ name: e.def.name, args } as unknown as DecodedInstruction) : undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** The events each instruction emits (D-140); the simulated chain emits exactly these. */
export const INSTRUCTION_EVENTS = {
  place_order: ['OrderPlaced', 'OrderFilled', 'CreatorFeesAccrued', 'ReferrerCredited', 'OrderCancelled'],
  cancel_order: ['OrderCancelled'],
  claim_payout: ['PositionSettled'],
  claim_referral: ['ReferrerClaimed'],
  claim_creator_fees: ['CreatorFeesClaimed'],
} as const satisfies Record<InstructionName, readonly EventKind[]>;

/** The program's custom errors (the IDL's `errors`), by name. */
export const PROGRAM_ERRORS = Object.fromEntries(
  (IDL as unknown as { errors: { code: number; name: string; msg: string }[] }).errors.map((e) => [e.name, e]),
) as Record<string, { code: number; name: string; msg: string }>;
export const programError = (name: string): { code: number; name: string; msg: string } => {
  const e = PROGRAM_ERRORS[name];
  if (!e) throw new Error(`IDL has no error ${name}`);
  return e;
};
