import {
  getArrayCodec,
  getI32Codec,
  getI64Codec,
  getStructCodec,
  getU16Codec,
  getU32Codec,
  getU64Codec,
  getU8Codec,
  type Codec,
} from '@solana/codecs';
import { getAddressCodec } from '@solana/addresses';

/**
 * Pyth's v2 price account (the `PriceAccount` of pyth-sdk-solana / pyth-client), the account a
 * market's `oracleFeed` names. Little-endian, C layout, 3,312 bytes: a 240-byte header whose
 * aggregate (`agg`) is the published price, then 32 publisher components of 96 bytes.
 * Offsets are in the comments; test/unit/oracle-pyth.test.ts checks them on a hand-built buffer.
 */
export const PYTH_MAGIC = 0xa1b2c3d4;
export const PYTH_VERSION = 2;
/** Account types: 1 mapping, 2 product, 3 price. */
export const PYTH_ACCOUNT_TYPE_PRICE = 3;
export const PYTH_COMPONENTS = 32;
export const PYTH_PRICE_ACCOUNT_SIZE = 240 + PYTH_COMPONENTS * 96;

/** Aggregate and component status; only `Trading` prices are published values. */
export const PythStatus = { Unknown: 0, Trading: 1, Halted: 2, Auction: 3, Ignored: 4 } as const;
export type PythStatus = (typeof PythStatus)[keyof typeof PythStatus];

export interface PythRational {
  val: bigint;
  numer: bigint;
  denom: bigint;
}

export interface PythPriceInfo {
  price: bigint;
  conf: bigint;
  status: number;
  corpAct: number;
  pubSlot: bigint;
}

export interface PythPriceComponent {
  publisher: string;
  agg: PythPriceInfo;
  latest: PythPriceInfo;
}

export interface PythPriceAccount {
  magic: number; //             0
  ver: number; //               4
  atype: number; //             8
  size: number; //              12
  ptype: number; //             16  1 = price
  expo: number; //              20
  num: number; //               24  components in use
  numQt: number; //             28  components quoting
  lastSlot: bigint; //          32
  validSlot: bigint; //         40
  emaPrice: PythRational; //    48
  emaConf: PythRational; //     72
  timestamp: bigint; //         96  publish time of `agg`, Unix seconds
  minPub: number; //            104
  drv2: number; //              105
  drv3: number; //              106
  drv4: number; //              108
  prod: string; //              112 product account
  next: string; //              144 next price account (all zero bytes: none)
  prevSlot: bigint; //          176
  prevPrice: bigint; //         184
  prevConf: bigint; //          192
  prevTimestamp: bigint; //     200
  agg: PythPriceInfo; //        208 price, 216 conf, 224 status, 228 corp_act, 232 pub_slot
  comp: PythPriceComponent[]; // 240, 32 × 96
}

// The library's address codec: 32 bytes as a base58 string, refusing anything else.
const pubkey = getAddressCodec() as unknown as Codec<string>;

const i64 = getI64Codec() as unknown as Codec<bigint>;
const u64 = getU64Codec() as unknown as Codec<bigint>;
const rational = getStructCodec([['val', i64], ['numer', i64], ['denom', i64]]) as unknown as Codec<PythRational>;
const priceInfo = getStructCodec([
  ['price', i64],
  ['conf', u64],
  ['status', getU32Codec()],
  ['corpAct', getU32Codec()],
  ['pubSlot', u64],
]) as unknown as Codec<PythPriceInfo>;
const component = getStructCodec([['publisher', pubkey], ['agg', priceInfo], ['latest', priceInfo]]) as unknown as Codec<PythPriceComponent>;

const priceAccountCodec = getStructCodec([
  ['magic', getU32Codec()],
  ['ver', getU32Codec()],
  ['atype', getU32Codec()],
  ['size', getU32Codec()],
  ['ptype', getU32Codec()],
  ['expo', getI32Codec()],
  ['num', getU32Codec()],
  ['numQt', getU32Codec()],
  ['lastSlot', u64],
  ['validSlot', u64],
  ['emaPrice', rational],
  ['emaConf', rational],
  ['timestamp', i64],
  ['minPub', getU8Codec()],
  ['drv2', getU8Codec()],
  ['drv3', getU16Codec()],
  ['drv4', getU32Codec()],
  ['prod', pubkey],
  ['next', pubkey],
  ['prevSlot', u64],
  ['prevPrice', i64],
  ['prevConf', u64],
  ['prevTimestamp', i64],
  ['agg', priceInfo],
  ['comp', getArrayCodec(component, { size: PYTH_COMPONENTS })],
]) as unknown as Codec<PythPriceAccount>;

export class OracleDecodeError extends Error {
  override name = 'OracleDecodeError';
}

/** The account's bytes; `comp` must hold exactly 32 components (unused ones zeroed). */
export function encodePythPriceAccount(account: PythPriceAccount): Uint8Array {
  if (account.comp.length !== PYTH_COMPONENTS) throw new Error(`a price account has ${PYTH_COMPONENTS} components, not ${account.comp.length}`);
  return priceAccountCodec.encode(account) as Uint8Array;
}

/**
 * Strict: anything other than a v2 price account (magic, version, type, length) throws. Real
 * accounts may be allocated larger than the struct; bytes after it are ignored.
 */
export function decodePythPriceAccount(bytes: Uint8Array): PythPriceAccount {
  if (bytes.length < PYTH_PRICE_ACCOUNT_SIZE) throw new OracleDecodeError(`a Pyth price account is ${PYTH_PRICE_ACCOUNT_SIZE} bytes, this one ${bytes.length}`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const magic = view.getUint32(0, true);
  if (magic !== PYTH_MAGIC) throw new OracleDecodeError(`not a Pyth account: magic 0x${magic.toString(16)}`);
  const ver = view.getUint32(4, true);
  if (ver !== PYTH_VERSION) throw new OracleDecodeError(`Pyth account version ${ver}, only ${PYTH_VERSION} is known`);
  const atype = view.getUint32(8, true);
  if (atype !== PYTH_ACCOUNT_TYPE_PRICE) throw new OracleDecodeError(`Pyth account type ${atype} is not a price account (${PYTH_ACCOUNT_TYPE_PRICE})`);
  return priceAccountCodec.decode(bytes);
}

/** The all-zero address (`next` of the last price account, unused component publishers). */
export const ZERO_ADDRESS = pubkey.decode(new Uint8Array(32));

const emptyInfo = (): PythPriceInfo => ({ price: 0n, conf: 0n, status: PythStatus.Unknown, corpAct: 0, pubSlot: 0n });

/** An unused publisher slot. */
export const emptyComponent = (): PythPriceComponent => ({ publisher: ZERO_ADDRESS, agg: emptyInfo(), latest: emptyInfo() });

/** What the indexer keeps of an account: its aggregate, the observation. */
export interface OracleObservation {
  feed: string;
  pubSlot: bigint;
  publishTime: bigint;
  price: bigint;
  conf: bigint;
  expo: number;
  status: number;
  emaPrice: bigint;
  emaConf: bigint;
}

export function observationOf(feed: string, account: PythPriceAccount): OracleObservation {
  return {
    feed,
    pubSlot: account.agg.pubSlot,
    publishTime: account.timestamp,
    price: account.agg.price,
    conf: account.agg.conf,
    expo: account.expo,
    status: account.agg.status,
    emaPrice: account.emaPrice.val,
    emaConf: account.emaConf.val,
  };
}

/** `price × 10^expo` as an exact decimal string (no floating point): 6543210987 × 10^-8 → "65.43210987". */
export function formatScaled(value: bigint, expo: number): string {
  if (expo >= 0) return (value * 10n ** BigInt(expo)).toString();
  const neg = value < 0n;
  const digits = (neg ? -value : value).toString().padStart(-expo + 1, '0');
  const cut = digits.length + expo;
  return `${neg ? '-' : ''}${digits.slice(0, cut)}.${digits.slice(cut)}`;
}
