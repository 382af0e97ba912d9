/**
 * PostgreSQL binary array parameters (the `array_send` format) for the projector's
 * `unnest($n::type[])` statements. pg sends a Buffer parameter in binary format, so PostgreSQL
 * reads lengths and fixed-width values instead of parsing a text literal element by element
 * (quotes, escapes, hex bytea, ISO timestamps, decimal numerics). Only what the projector
 * sends is encoded: one-dimensional arrays, integer numerics, YYYY-MM-DD days.
 */
export type BinaryElementType = 'bool' | 'bytea' | 'date' | 'int2' | 'int4' | 'int8' | 'numeric' | 'text' | 'timestamptz';

const OID: Record<BinaryElementType, number> = { bool: 16, bytea: 17, int8: 20, int2: 21, int4: 23, text: 25, date: 1082, timestamptz: 1184, numeric: 1700 };

/** From the Unix epoch to PostgreSQL's (2000-01-01) in ms; timestamptz travels as µs since the latter. */
const PG_EPOCH_MS = 946_684_800_000;
const DAY_MS = 86_400_000;

/** One column of `rows` as a binary one-dimensional array of `type`; null and undefined are NULL. */
export function pgBinaryArray<R>(rows: readonly R[], type: BinaryElementType, pick: (row: R) => unknown): Buffer {
  const n = rows.length;
  const values = new Array<unknown>(n);
  let size = 20; // ndim, flags, element oid, dimension length, lower bound
  let nulls = 0;
  for (let i = 0; i < n; i++) {
    let v = pick(rows[i]!);
    size += 4;
    if (v === null || v === undefined) {
      nulls = 1;
      values[i] = v;
      continue;
    }
    if (type === 'numeric') v = numericDigits(v);
    values[i] = v;
    size += elementSize(type, v);
  }
  const buf = Buffer.allocUnsafe(n ? size : 12);
  buf.writeInt32BE(n ? 1 : 0, 0);
  buf.writeInt32BE(nulls, 4);
  buf.writeInt32BE(OID[type], 8);
  if (!n) return buf;
  buf.writeInt32BE(n, 12);
  buf.writeInt32BE(1, 16);
  let at = 20;
  for (let i = 0; i < n; i++) at = writeElement(buf, at, type, values[i]);
  return buf;
}

function elementSize(type: BinaryElementType, v: unknown): number {
  switch (type) {
    case 'bool':
      return 1;
    case 'int2':
      return 2;
    case 'int4':
    case 'date':
      return 4;
    case 'int8':
    case 'timestamptz':
      return 8;
    case 'text':
      if (typeof v !== 'string') throw new TypeError(`cannot send a ${typeof v} as text`);
      return Buffer.byteLength(v, 'utf8');
    case 'bytea':
      if (!(v instanceof Uint8Array)) throw new TypeError(`cannot send a ${typeof v} as bytea`);
      return v.byteLength;
    case 'numeric':
      return 8 + 2 * (v as NumericDigits).groups.length;
    default: {
      const never: never = type;
      throw new TypeError(`unknown element type ${String(never)}`);
    }
  }
}

function integer(v: unknown, min: number, max: number): number {
  const n = typeof v === 'bigint' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max) throw new RangeError(`${String(v)} is not an integer in [${min}, ${max}]`);
  return n;
}

function writeElement(buf: Buffer, at: number, type: BinaryElementType, v: unknown): number {
  if (v === null || v === undefined) {
    buf.writeInt32BE(-1, at);
    return at + 4;
  }
  switch (type) {
    case 'bool':
      if (typeof v !== 'boolean') throw new TypeError(`cannot send a ${typeof v} as bool`);
      buf.writeInt32BE(1, at);
      buf[at + 4] = v ? 1 : 0;
      return at + 5;
    case 'int2':
      buf.writeInt32BE(2, at);
      buf.writeInt16BE(integer(v, -32768, 32767), at + 4);
      return at + 6;
    case 'int4':
      buf.writeInt32BE(4, at);
      buf.writeInt32BE(integer(v, -2147483648, 2147483647), at + 4);
      return at + 8;
    case 'int8':
      buf.writeInt32BE(8, at);
      if (typeof v === 'bigint') buf.writeBigInt64BE(v, at + 4);
      else writeInt64(buf, at + 4, integer(v, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER));
      return at + 12;
    case 'date': {
      // A calendar day 'YYYY-MM-DD' (the projector's UTC days) as days since 2000-01-01.
      const ms = typeof v === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(v) ? Date.parse(`${v}T00:00:00Z`) : Number.NaN;
      // Date.parse rolls 02-30 over into March: only a day that reads back the same is one.
      if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== v) throw new RangeError(`${String(v)} is not a YYYY-MM-DD day`);
      buf.writeInt32BE(4, at);
      buf.writeInt32BE((ms - PG_EPOCH_MS) / DAY_MS, at + 4);
      return at + 8;
    }
    case 'timestamptz': {
      if (!(v instanceof Date) || Number.isNaN(v.getTime())) throw new RangeError('invalid Date in a query parameter');
      buf.writeInt32BE(8, at);
      // µs since 2000 stay exact in a double for ±142 years around it; beyond, through BigInt.
      const us = (v.getTime() - PG_EPOCH_MS) * 1000;
      if (Number.isSafeInteger(us)) writeInt64(buf, at + 4, us);
      else buf.writeBigInt64BE(BigInt(v.getTime() - PG_EPOCH_MS) * 1000n, at + 4);
      return at + 12;
    }
    case 'text': {
      const s = v as string;
      const len = buf.write(s, at + 4, 'utf8');
      buf.writeInt32BE(len, at);
      return at + 4 + len;
    }
    case 'bytea': {
      const b = v as Uint8Array;
      buf.writeInt32BE(b.byteLength, at);
      buf.set(b, at + 4);
      return at + 4 + b.byteLength;
    }
    case 'numeric': {
      // numeric_send: digit count, weight of the first digit (in base 10,000), sign, display
      // scale, then the base-10,000 digits, most significant first.
      const { negative, groups } = v as NumericDigits;
      buf.writeInt32BE(8 + 2 * groups.length, at);
      buf.writeInt16BE(groups.length, at + 4);
      buf.writeInt16BE(groups.length ? groups.length - 1 : 0, at + 6);
      buf.writeUInt16BE(negative ? 0x4000 : 0, at + 8);
      buf.writeInt16BE(0, at + 10);
      let o = at + 12;
      for (const g of groups) {
        buf.writeInt16BE(g, o);
        o += 2;
      }
      return o;
    }
    default: {
      const never: never = type;
      throw new TypeError(`unknown element type ${String(never)}`);
    }
  }
}

const TWO_32 = 4_294_967_296;

/** A safe integer as a big-endian int64, without allocating a BigInt per value. */
function writeInt64(buf: Buffer, at: number, n: number): void {
  const hi = Math.floor(n / TWO_32);
  buf.writeInt32BE(hi, at);
  buf.writeUInt32BE(n - hi * TWO_32, at + 4);
}

interface NumericDigits {
  negative: boolean;
  /** Base-10,000 digits of the absolute value, most significant first; none for zero. */
  groups: number[];
}

const NO_GROUPS: NumericDigits = { negative: false, groups: [] };
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** An integer (amounts are u64 and beyond: bigint, or a safe-integer number) as numeric digits. */
function numericDigits(v: unknown): NumericDigits {
  if (typeof v === 'number' && !Number.isSafeInteger(v)) throw new RangeError(`${v} is not a safe integer`);
  if (typeof v !== 'bigint' && typeof v !== 'number') throw new TypeError(`cannot send a ${typeof v} as numeric`);
  // Most amounts fit a double: their groups by arithmetic, not through a decimal string.
  if (typeof v === 'number' || (v <= MAX_SAFE && v >= -MAX_SAFE)) {
    let n = Number(v);
    if (n === 0) return NO_GROUPS;
    const negative = n < 0;
    if (negative) n = -n;
    const groups: number[] = [];
    while (n > 0) {
      const g = n % 10_000;
      groups.push(g);
      n = (n - g) / 10_000;
    }
    return { negative, groups: groups.reverse() };
  }
  let digits = v.toString();
  const negative = digits.startsWith('-');
  if (negative) digits = digits.slice(1);
  if (digits === '0') return { negative: false, groups: [] };
  const groups: number[] = [];
  // Groups of four decimal digits from the right; the first may be shorter.
  for (let end = digits.length; end > 0; end -= 4) groups.push(Number(digits.slice(Math.max(0, end - 4), end)));
  return { negative, groups: groups.reverse() };
}
