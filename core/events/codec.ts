import { createHash } from 'node:crypto';
import {
  fixCodecSize,
  getBooleanCodec,
  getBytesCodec,
  getI32Codec,
  getI64Codec,
  getNullableCodec,
  getStructCodec,
  getU16Codec,
  getU32Codec,
  getU64Codec,
  getU8Codec,
  transformCodec,
  type Codec,
} from '@solana/codecs';
import bs58 from 'bs58';
import idlJson from './idl.json';
import { EVENT_KINDS, type EventKind, type ProgramEvent } from './types';

/** The subset of the Anchor IDL (spec 0.1.0) this program uses. */
type IdlType = 'u8' | 'u16' | 'u32' | 'u64' | 'i32' | 'i64' | 'bool' | 'pubkey' | { option: IdlType } | { array: [IdlType, number] };
interface Idl {
  address: string;
  events: { name: string; discriminator: number[] }[];
  types: { name: string; type: { kind: 'struct'; fields: { name: string; type: IdlType }[] } }[];
}
export const IDL = idlJson as Idl;

/** Anchor's emit_cpi instruction tag: the u64 0x1d9acb512ea545e4 (sha256("anchor:event")[0..8]) in little-endian bytes. */
export const EVENT_IX_TAG = Uint8Array.from([0xe4, 0x45, 0xa5, 0x2e, 0x51, 0xcb, 0x9a, 0x1d]);

/** Anchor's event discriminator rule: sha256("event:<Name>")[0..8]. */
export function anchorEventDiscriminator(name: string): Uint8Array {
  return createHash('sha256').update(`event:${name}`).digest().subarray(0, 8);
}

export class EventDecodeError extends Error {
  override name = 'EventDecodeError';
  constructor(
    readonly reason: 'unknown_discriminator' | 'undecodable',
    message: string,
  ) {
    super(message);
  }
}

const camel = (s: string) => s.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/**
 * Base58 is the slow part of every event (big-number division per address), and the same
 * few thousand wallets and markets recur in every batch: both directions are memoised in
 * bounded maps that start over when full.
 */
const MEMO_LIMIT = 200_000;
const toBytes = new Map<string, Uint8Array>();
function addressBytes(address: string): Uint8Array {
  let b = toBytes.get(address);
  if (!b) {
    b = bs58.decode(address);
    if (b.length !== 32) throw new Error(`address ${address} is ${b.length} bytes, not 32`);
    if (toBytes.size >= MEMO_LIMIT) toBytes.clear();
    toBytes.set(address, b);
  }
  return b;
}
/**
 * Decoded addresses by their first 31 bits (a small integer key: no string to build and hash
 * per address read, which cost more than the lookup it served); an entry is used only when all
 * 32 bytes match, and a colliding address takes the slot over.
 */
const toBase58 = new Map<number, { bytes: Uint8Array; text: string }>();
function addressString(bytes: Uint8Array, at = 0): string {
  const key = (bytes[at]! << 23) | (bytes[at + 1]! << 15) | (bytes[at + 2]! << 7) | (bytes[at + 3]! >>> 1);
  const hit = toBase58.get(key);
  if (hit) {
    const b = hit.bytes;
    let i = 4;
    while (i < 32 && b[i] === bytes[at + i]) i++;
    if (i === 32) return hit.text;
  }
  const own = bytes.slice(at, at + 32);
  const text = bs58.encode(own);
  if (toBase58.size >= MEMO_LIMIT) toBase58.clear();
  toBase58.set(key, { bytes: own, text });
  return text;
}

// Pre-built codecs are shared: they are stateless.
const addressCodec = transformCodec(fixCodecSize(getBytesCodec(), 32), addressBytes, (bytes) => addressString(bytes as Uint8Array)) as unknown as Codec<string>;
const hex32Codec = transformCodec(
  fixCodecSize(getBytesCodec(), 32),
  (hex: string) => Uint8Array.from(Buffer.from(hex, 'hex')),
  (bytes) => Buffer.from(bytes).toString('hex'),
) as unknown as Codec<string>;

function codecFor(t: IdlType): Codec<unknown> {
  if (typeof t === 'string') {
    switch (t) {
      case 'u8':
        return getU8Codec() as Codec<unknown>;
      case 'u16':
        return getU16Codec() as Codec<unknown>;
      case 'u32':
        return getU32Codec() as Codec<unknown>;
      case 'i32':
        return getI32Codec() as Codec<unknown>;
      case 'u64':
        return getU64Codec() as unknown as Codec<unknown>;
      case 'i64':
        return getI64Codec() as unknown as Codec<unknown>;
      case 'bool':
        return getBooleanCodec() as Codec<unknown>;
      case 'pubkey':
        return addressCodec as Codec<unknown>;
      default: {
        const never: never = t;
        throw new Error(`unsupported IDL type ${String(never)}`);
      }
    }
  }
  // Borsh Option<T>: a u8 tag (0 None, 1 Some) then T.
  if ('option' in t) return getNullableCodec(codecFor(t.option)) as Codec<unknown>;
  const [inner, len] = t.array;
  if (inner === 'u8' && len === 32) return hex32Codec as Codec<unknown>;
  throw new Error(`unsupported IDL array type ${JSON.stringify(t)}`);
}

interface KindCodec {
  kind: EventKind;
  discriminator: Uint8Array;
  codec: Codec<Record<string, unknown>>;
}

function buildCodecs(): { byKind: Map<EventKind, KindCodec>; byDiscriminator: Map<string, KindCodec> } {
  const byKind = new Map<EventKind, KindCodec>();
  const byDiscriminator = new Map<string, KindCodec>();
  for (const ev of IDL.events) {
    if (!(EVENT_KINDS as readonly string[]).includes(ev.name)) throw new Error(`IDL event ${ev.name} has no TypeScript type`);
    const def = IDL.types.find((t) => t.name === ev.name);
    if (!def) throw new Error(`IDL event ${ev.name} has no type definition`);
    const codec = getStructCodec(
      def.type.fields.map((f) => [camel(f.name), codecFor(f.type)] as [string, Codec<unknown>]),
    ) as unknown as Codec<Record<string, unknown>>;
    const entry = { kind: ev.name as EventKind, discriminator: Uint8Array.from(ev.discriminator), codec };
    byKind.set(entry.kind, entry);
    byDiscriminator.set(Buffer.from(entry.discriminator).toString('hex'), entry);
  }
  return { byKind, byDiscriminator };
}

const { byKind, byDiscriminator } = buildCodecs();

/** discriminator (8 bytes) + Borsh payload: the bytes of a `Program data:` line. */
export function encodeEvent(event: ProgramEvent): Uint8Array {
  const entry = byKind.get(event.kind);
  if (!entry) throw new Error(`no codec for event kind ${event.kind}`);
  const body = entry.codec.encode(event.data as unknown as Record<string, unknown>);
  const out = new Uint8Array(8 + body.length);
  out.set(entry.discriminator, 0);
  out.set(body, 8);
  return out;
}

/**
 * The decoder is compiled from the IDL into one reader per field over a single DataView,
 * instead of @solana/codecs' decoders: those copy an ArrayBuffer for every number they read,
 * which was the largest cost of parsing in `npm run bench -- indexer` (decision D-58).
 * @solana/codecs stays the encoder (simulator, builder) and the reference this decoder is
 * tested against, field for field, over every kind's whole value range. Stricter than it in
 * one way, like Rust's Borsh: a bool or an Option tag other than 0 or 1 is undecodable.
 */
class Cursor {
  off = 8;
  readonly view: DataView;
  constructor(readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  take(n: number, what: string): number {
    const at = this.off;
    if (at + n > this.bytes.length) throw new Error(`${what} needs ${n} byte(s) at offset ${at}, the event has ${this.bytes.length}`);
    this.off = at + n;
    return at;
  }
}
type Reader = (c: Cursor, field: string) => unknown;

function tag(c: Cursor, field: string, what: string): boolean {
  const v = c.bytes[c.take(1, field)];
  if (v !== 0 && v !== 1) throw new Error(`${field}: ${what} tag ${v} is neither 0 nor 1`);
  return v === 1;
}

function readerFor(t: IdlType): Reader {
  if (typeof t === 'string') {
    switch (t) {
      case 'u8':
        return (c, f) => c.bytes[c.take(1, f)];
      case 'u16':
        return (c, f) => c.view.getUint16(c.take(2, f), true);
      case 'u32':
        return (c, f) => c.view.getUint32(c.take(4, f), true);
      case 'i32':
        return (c, f) => c.view.getInt32(c.take(4, f), true);
      case 'u64':
        return (c, f) => c.view.getBigUint64(c.take(8, f), true);
      case 'i64':
        return (c, f) => c.view.getBigInt64(c.take(8, f), true);
      case 'bool':
        return (c, f) => tag(c, f, 'bool');
      case 'pubkey':
        return (c, f) => {
          return addressString(c.bytes, c.take(32, f));
        };
      default: {
        const never: never = t;
        throw new Error(`unsupported IDL type ${String(never)}`);
      }
    }
  }
  if ('option' in t) {
    const inner = readerFor(t.option);
    return (c, f) => (tag(c, f, 'Option') ? inner(c, f) : null);
  }
  const [inner, len] = t.array;
  if (inner === 'u8' && len === 32) {
    return (c, f) => {
      const at = c.take(32, f);
      return Buffer.from(c.bytes.buffer, c.bytes.byteOffset + at, 32).toString('hex');
    };
  }
  throw new Error(`unsupported IDL array type ${JSON.stringify(t)}`);
}

const readers = new Map<EventKind, { name: string; read: Reader }[]>(
  IDL.events.map((ev) => {
    const def = IDL.types.find((t) => t.name === ev.name)!;
    return [ev.name as EventKind, def.type.fields.map((f) => ({ name: camel(f.name), read: readerFor(f.type) }))];
  }),
);

/** Inverse of encodeEvent. Strict: unknown discriminator, short or trailing bytes throw. */
export function decodeEvent(bytes: Uint8Array): ProgramEvent {
  if (bytes.length < 8) throw new EventDecodeError('undecodable', `event is ${bytes.length} bytes, shorter than a discriminator`);
  const disc = Buffer.from(bytes.buffer, bytes.byteOffset, 8).toString('hex');
  const entry = byDiscriminator.get(disc);
  if (!entry) throw new EventDecodeError('unknown_discriminator', `unknown event discriminator ${disc}`);
  const c = new Cursor(bytes);
  const data: Record<string, unknown> = {};
  try {
    for (const f of readers.get(entry.kind)!) data[f.name] = f.read(c, f.name);
  } catch (err) {
    throw new EventDecodeError('undecodable', `${entry.kind}: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (c.off !== bytes.length) {
    throw new EventDecodeError('undecodable', `${entry.kind}: ${bytes.length - c.off} trailing byte(s)`);
  }
  return { kind: entry.kind, data } as unknown as ProgramEvent;
}

/** The @solana/codecs decoder: the reference decodeEvent is tested against. */
export function decodeEventWithCodecs(bytes: Uint8Array): ProgramEvent {
  const entry = byDiscriminator.get(Buffer.from(bytes.subarray(0, 8)).toString('hex'));
  if (!entry) throw new EventDecodeError('unknown_discriminator', 'unknown event discriminator');
  const [data, end] = entry.codec.read(bytes, 8);
  if (end !== bytes.length) throw new EventDecodeError('undecodable', `${entry.kind}: ${bytes.length - end} trailing byte(s)`);
  return { kind: entry.kind, data } as unknown as ProgramEvent;
}

/** Kind of an event from its discriminator alone, or undefined. */
export function eventKindOf(bytes: Uint8Array): EventKind | undefined {
  return bytes.length >= 8 ? byDiscriminator.get(Buffer.from(bytes.subarray(0, 8)).toString('hex'))?.kind : undefined;
}
