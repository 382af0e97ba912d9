import {
  fixCodecSize,
  getBytesCodec,
  getI32Codec,
  getI64Codec,
  getNullableCodec,
  getStructCodec,
  getU16Codec,
  getU64Codec,
  transformCodec,
  type Codec,
} from '@solana/codecs';
import bs58 from 'bs58';
import { IDL, type FeeConfigChanged } from '../../core/events';
import {
  anchorInstructionDiscriminator,
  COMPUTE_UNIT_LIMITS,
  decodeInstructionData,
  deriveAccountSync,
  encodeInstructionData,
  instructionDef,
  INSTRUCTION_NAMES,
  type IdlAccount,
  type InstructionArgs,
  type InstructionName,
} from '../../core/tx';
import type { AccountMeta } from '../chain/types';

/**
 * The market program's interface, what a client needs to call it: its instructions, their
 * data and their accounts. The five a wallet sends are the IDL's (`core/events/idl.json`),
 * encoded and decoded with `core/tx`, the code the API's `/tx` builders use. The program has
 * more: the instructions that create, start, settle, resolve and close a market, set the fee
 * configuration and tick size, and lock a referral, which the IDL (spec 0.1.0) leaves out.
 * They are declared here the same way (Anchor's discriminator, Borsh arguments, named accounts).
 */
export interface OperatorArgs {
  initialize_market: {
    marketId: bigint;
    oracleFeed: string | null;
    oracleFeedId: string;
    durationSeconds: bigint;
    tStart: bigint;
    tEnd: bigint;
    maxConfidenceRatioBps: number;
  };
  start_trading: { startPrice: bigint; startPriceConf: bigint; startPriceExpo: number; publishTime: bigint };
  settle_market: Record<string, never>;
  resolve_market: { endPrice: bigint; endPriceConf: bigint; endPriceExpo: number; publishTime: bigint };
  close_market: Record<string, never>;
  set_fee_config: FeeConfigChanged;
  set_tick_size: { tickSizeBps: number };
  lock_referral: { referrer: string; expiresAt: bigint };
}
export type OperatorName = keyof OperatorArgs;
export type ProgramArgs = InstructionArgs & OperatorArgs;
export type ProgramInstructionName = keyof ProgramArgs;
export type DecodedProgramInstruction = { [N in ProgramInstructionName]: { name: N; args: ProgramArgs[N] } }[ProgramInstructionName];

const addressCodec = transformCodec(fixCodecSize(getBytesCodec(), 32), (a: string) => bs58.decode(a), (b) => bs58.encode(b as Uint8Array)) as unknown as Codec<string>;
const hex32Codec = transformCodec(fixCodecSize(getBytesCodec(), 32), (h: string) => Uint8Array.from(Buffer.from(h, 'hex')), (b) => Buffer.from(b as Uint8Array).toString('hex')) as unknown as Codec<string>;
const u64 = getU64Codec() as unknown as Codec<bigint>;
const i64 = getI64Codec() as unknown as Codec<bigint>;
const u16 = getU16Codec() as Codec<number>;
const i32 = getI32Codec() as Codec<number>;
const empty = getStructCodec([]) as unknown as Codec<Record<string, never>>;

interface AccountDef {
  name: string;
  signer?: boolean;
  writable?: boolean;
  /** The address, when it is not the caller's to name (a PDA or a fixed program). */
  derive?: (programId: string, given: Record<string, string>) => string;
}
/** A PDA the IDL declares on place_order (config, referral_lock, event_authority): the same account here. */
const pdaOf = (account: string) => (programId: string, given: Record<string, string>) => deriveAccountSync('place_order', account, programId, given);
const emitAccounts: AccountDef[] = [{ name: 'event_authority', derive: pdaOf('event_authority') }, { name: 'program', derive: (programId) => programId }];
const byCreator: AccountDef[] = [{ name: 'creator', signer: true, writable: true }, { name: 'market', writable: true }, ...emitAccounts];
const byAdmin: AccountDef[] = [{ name: 'admin', signer: true, writable: true }, { name: 'config', writable: true, derive: pdaOf('config') }, ...emitAccounts];

const OPERATOR: { [N in OperatorName]: { accounts: AccountDef[]; codec: Codec<OperatorArgs[N]>; units: number } } = {
  initialize_market: {
    accounts: [...byCreator.slice(0, 2), { name: 'settlement_mint' }, ...emitAccounts],
    codec: getStructCodec([
      ['marketId', u64],
      ['oracleFeed', getNullableCodec(addressCodec)],
      ['oracleFeedId', hex32Codec],
      ['durationSeconds', u64],
      ['tStart', i64],
      ['tEnd', i64],
      ['maxConfidenceRatioBps', u16],
    ]) as unknown as Codec<OperatorArgs['initialize_market']>,
    units: 60_000,
  },
  start_trading: {
    accounts: byCreator,
    codec: getStructCodec([['startPrice', i64], ['startPriceConf', u64], ['startPriceExpo', i32], ['publishTime', i64]]) as unknown as Codec<OperatorArgs['start_trading']>,
    units: 40_000,
  },
  settle_market: { accounts: byCreator, codec: empty, units: 200_000 },
  resolve_market: {
    accounts: byCreator,
    codec: getStructCodec([['endPrice', i64], ['endPriceConf', u64], ['endPriceExpo', i32], ['publishTime', i64]]) as unknown as Codec<OperatorArgs['resolve_market']>,
    units: 40_000,
  },
  close_market: { accounts: byCreator, codec: empty, units: 40_000 },
  set_fee_config: {
    accounts: byAdmin,
    codec: getStructCodec([['feeCapBps', u16], ['decayRateBps', u16], ['protocolShareBps', u16], ['creatorShareBps', u16], ['referralShareBps', u16]]) as unknown as Codec<FeeConfigChanged>,
    units: 40_000,
  },
  set_tick_size: { accounts: byAdmin, codec: getStructCodec([['tickSizeBps', u16]]) as unknown as Codec<OperatorArgs['set_tick_size']>, units: 40_000 },
  lock_referral: {
    accounts: [{ name: 'owner', signer: true, writable: true }, { name: 'referral_lock', writable: true, derive: pdaOf('referral_lock') }, ...emitAccounts],
    codec: getStructCodec([['referrer', addressCodec], ['expiresAt', i64]]) as unknown as Codec<OperatorArgs['lock_referral']>,
    units: 40_000,
  },
};
const OPERATOR_NAMES = Object.keys(OPERATOR) as OperatorName[];
const OPERATOR_DISCRIMINATORS = OPERATOR_NAMES.map((name) => ({ name, discriminator: anchorInstructionDiscriminator(name) }));
const discriminatorOf = new Map(OPERATOR_DISCRIMINATORS.map((o) => [o.name, o.discriminator]));
const isIdl = (name: ProgramInstructionName): name is InstructionName => (INSTRUCTION_NAMES as readonly string[]).includes(name);

/**
 * A memo keyed by a path of strings (addresses), held as nested maps: looking up addresses
 * that already exist costs a few map reads, where a joined string key costs building and
 * hashing a new ~150-character string each time. Starts over when it holds `limit` values.
 */
class PathMemo<V> {
  private root = new Map<string, unknown>();
  private size = 0;
  constructor(private readonly limit: number) {}

  get(path: readonly string[], make: () => V): V {
    let node = this.root;
    for (let i = 0; i < path.length - 1; i++) {
      let next = node.get(path[i]!) as Map<string, unknown> | undefined;
      if (!next) node.set(path[i]!, (next = new Map()));
      node = next;
    }
    const last = path[path.length - 1]!;
    let v = node.get(last) as V | undefined;
    if (v === undefined) {
      v = make();
      if (++this.size > this.limit) {
        this.root = new Map();
        this.size = 0;
        return v;
      }
      node.set(last, v);
    }
    return v;
  }
}

/**
 * PDAs by the addresses their seeds name: the same position, vault or token account recurs
 * across instructions and wallets, and is found without decoding those addresses into seed
 * bytes (what `deriveAccountSync` does first, even when it remembers the answer).
 */
function pdaDeriver(name: InstructionName, a: IdlAccount): AccountDef['derive'] {
  const paths = a.pda!.seeds.flatMap((x) => (x.kind === 'account' ? [x.path] : []));
  const memo = new PathMemo<string>(50_000);
  return (programId, given) => {
    const path = [programId];
    for (const p of paths) path.push(given[p]!);
    return memo.get(path, () => deriveAccountSync(name, a.name, programId, given));
  };
}

/** The IDL's accounts of an instruction as AccountDefs: fixed programs, PDAs from its seeds, the rest named by the caller. */
function idlAccounts(name: InstructionName): AccountDef[] {
  return instructionDef(name).accounts.map((a) => ({
    name: a.name,
    signer: a.signer,
    writable: a.writable,
    derive: a.address !== undefined ? (programId: string) => (a.address === IDL.address ? programId : a.address!) : a.pda ? pdaDeriver(name, a) : undefined,
  }));
}
const ACCOUNTS = Object.fromEntries([
  ...INSTRUCTION_NAMES.map((n) => [n, idlAccounts(n)]),
  ...OPERATOR_NAMES.map((n) => [n, OPERATOR[n].accounts]),
]) as Record<ProgramInstructionName, AccountDef[]>;

const NAMES = Object.fromEntries(Object.entries(ACCOUNTS).map(([n, defs]) => [n, Object.freeze(defs.map((a) => a.name))])) as Record<ProgramInstructionName, readonly string[]>;
/** Account names of an instruction, in order. */
export const accountNames = (name: ProgramInstructionName): readonly string[] => NAMES[name];

const resolved = new PathMemo<AccountMeta[]>(20_000);
/**
 * Every account of an instruction with the roles it must have, from the accounts the caller
 * names; memoised (the same wallets and markets recur), bounded. Frozen: the same list is
 * handed to every caller (and the program recognises it).
 */
export function instructionAccounts(name: ProgramInstructionName, programId: string, given: Record<string, string>): AccountMeta[] {
  const defs = ACCOUNTS[name];
  const path = [name, programId];
  for (const d of defs) if (!d.derive) path.push(given[d.name] ?? '');
  return resolved.get(path, () =>
    Object.freeze(
      defs.map((d) => {
        const address = d.derive ? d.derive(programId, given) : given[d.name];
        if (address === undefined) throw new Error(`${name} needs account ${d.name}`);
        return Object.freeze({ address, signer: !!d.signer, writable: !!d.writable });
      }),
    ) as AccountMeta[],
  );
}

/** discriminator (8 bytes) + Borsh arguments. */
export function encodeProgramInstruction<N extends ProgramInstructionName>(name: N, args: ProgramArgs[N]): Uint8Array {
  if (isIdl(name)) return encodeInstructionData(name, args as InstructionArgs[typeof name]);
  const op = OPERATOR[name as OperatorName] as { codec: Codec<unknown> };
  const body = op.codec.encode(args);
  const out = new Uint8Array(8 + body.length);
  out.set(discriminatorOf.get(name as OperatorName)!, 0);
  out.set(body, 8);
  return out;
}

/** Inverse of encodeProgramInstruction; undefined for data that is none of the program's instructions. */
export function decodeProgramInstruction(data: Uint8Array): DecodedProgramInstruction | undefined {
  const idl = decodeInstructionData(data);
  if (idl || data.length < 8) return idl;
  const op = OPERATOR_DISCRIMINATORS.find((o) => o.discriminator.every((b, i) => data[i] === b));
  if (!op) return undefined;
  try {
    const [args, end] = (OPERATOR[op.name].codec as Codec<unknown>).read(data, 8);
    return end === data.length ? ({ name: op.name, args } as DecodedProgramInstruction) : undefined;
  } catch {
    return undefined;
  }
}

/** Compute units a client asks for: the builders' for the IDL's instructions. */
export const unitLimitOf = (name: ProgramInstructionName): number => (isIdl(name) ? COMPUTE_UNIT_LIMITS[name] : OPERATOR[name as OperatorName].units);

/** Anchor's `Program log: Instruction: <Name>` line name. */
export const logNameOf = (name: ProgramInstructionName): string => name.replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase());
