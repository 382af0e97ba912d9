import fc from 'fast-check';
import { Client } from 'pg';
import { pgBinaryArray, type BinaryElementType } from '../../indexer/projection/pg-binary';
import { ADMIN_DATABASE_URL } from '../support/env';

const SQL_TYPE: Record<BinaryElementType, string> = {
  bool: 'boolean', bytea: 'bytea', date: 'date', int2: 'smallint', int4: 'int', int8: 'bigint', numeric: 'numeric', text: 'text', timestamptz: 'timestamptz',
};

/** The projector's binary array parameters, read back by real PostgreSQL (array_recv) through unnest(). */
describe('pgBinaryArray (real PostgreSQL)', () => {
  let pg: Client;
  beforeAll(async () => {
    pg = new Client({ connectionString: ADMIN_DATABASE_URL });
    await pg.connect();
  });
  afterAll(() => pg.end());

  /** Each element back as text, so the comparison does not depend on pg's own parsers. */
  const roundTrip = async (type: BinaryElementType, values: unknown[]) => {
    const { rows } = await pg.query<{ v: string | null }>(
      `SELECT v::text AS v FROM unnest($1::${SQL_TYPE[type]}[]) WITH ORDINALITY AS u(v, i) ORDER BY i`,
      [pgBinaryArray(values, type, (v) => v)],
    );
    return rows.map((r) => r.v);
  };

  it('keeps every string byte for byte: quotes, backslashes, braces, unicode, "NULL" and ""', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(fc.string({ unit: 'grapheme' }), fc.constantFrom('NULL', '', '"', '\\', '{a,b}', ' x ')), { maxLength: 20 }), async (values) => {
        const clean = values.map((s) => s.replace(/\0/g, ''));
        expect(await roundTrip('text', clean)).toEqual(clean);
      }),
      { numRuns: 200 },
    );
  });

  it('sends integers of each width to their limits, bigints beyond 2^53 and NULLs', async () => {
    expect(await roundTrip('int2', [-32768, 0, 32767, null])).toEqual(['-32768', '0', '32767', null]);
    expect(await roundTrip('int4', [-2147483648, 7, 2147483647, undefined])).toEqual(['-2147483648', '7', '2147483647', null]);
    expect(await roundTrip('int8', [-(2n ** 63n), 2n ** 63n - 1n, Number.MAX_SAFE_INTEGER, 0])).toEqual([
      '-9223372036854775808',
      '9223372036854775807',
      String(Number.MAX_SAFE_INTEGER),
      '0',
    ]);
    // Numbers travel as two 32-bit halves: the boundaries between them, and negatives.
    const halves = [-1, Number.MIN_SAFE_INTEGER, -(2 ** 32), -(2 ** 32) - 1, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 1, 2 ** 31, -(2 ** 31) - 1];
    expect(await roundTrip('int8', halves)).toEqual(halves.map(String));
    expect(await roundTrip('bool', [true, false, null])).toEqual(['true', 'false', null]);
  });

  it('sends integer numerics of any size and sign, zero and round values (trailing zero digits) as PostgreSQL reads their text', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.bigInt({ min: -(2n ** 130n), max: 2n ** 130n }), fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), fc.integer(), fc.constantFrom(0n, 10_000n, 10n ** 20n, -(10n ** 8n))), { maxLength: 30 }),
        async (values) => {
          expect(await roundTrip('numeric', values)).toEqual(values.map((v) => BigInt(v).toString()));
        },
      ),
      { numRuns: 200 },
    );
    expect(await roundTrip('numeric', [Number.MAX_SAFE_INTEGER, -0, null])).toEqual([String(Number.MAX_SAFE_INTEGER), '0', null]);
  });

  it('sends timestamps to the millisecond and days, before and after 2000-01-01, and bytes as they are', async () => {
    await pg.query("SET TIME ZONE 'UTC'");
    // Microseconds from 2000 are exact in a double for ±285 years; 1600 and 2400 lie beyond.
    const dates = ['2026-01-02T03:04:05.678Z', '1999-12-31T23:59:59.999Z', '2000-01-01T00:00:00.000Z', '1970-01-01T00:00:00.001Z', '2400-06-01T12:00:00.001Z', '1600-06-01T12:00:00.999Z'].map((s) => new Date(s));
    const { rows } = await pg.query<{ v: Date }>('SELECT v FROM unnest($1::timestamptz[]) WITH ORDINALITY AS u(v, i) ORDER BY i', [
      pgBinaryArray(dates, 'timestamptz', (d) => d),
    ]);
    expect(rows.map((r) => r.v.toISOString())).toEqual(dates.map((d) => d.toISOString()));
    expect(await roundTrip('date', ['2026-11-22', '2000-01-01', '1999-12-31', '1970-01-01', '2400-02-29', null])).toEqual([
      '2026-11-22',
      '2000-01-01',
      '1999-12-31',
      '1970-01-01',
      '2400-02-29',
      null,
    ]);
    const bytes = Buffer.from([0, 1, 0x5c, 0x22, 0xff]);
    expect(await roundTrip('bytea', [bytes.subarray(1, 4), new Uint8Array(0), bytes, null])).toEqual(['\\x015c22', '\\x', '\\x00015c22ff', null]);
  });

  it('sends an empty array of any type', async () => {
    for (const type of Object.keys(SQL_TYPE) as BinaryElementType[]) expect(await roundTrip(type, [])).toEqual([]);
  });

  it('refuses values that do not fit the element type instead of sending wrong bytes', () => {
    expect(() => pgBinaryArray([40_000], 'int2', (v) => v)).toThrow(RangeError);
    expect(() => pgBinaryArray([1.5], 'int4', (v) => v)).toThrow(RangeError);
    expect(() => pgBinaryArray([2 ** 53], 'int8', (v) => v)).toThrow(RangeError);
    expect(() => pgBinaryArray([new Date(Number.NaN)], 'timestamptz', (v) => v)).toThrow(RangeError);
    expect(() => pgBinaryArray([5], 'text', (v) => v)).toThrow(TypeError);
    expect(() => pgBinaryArray(['ab'], 'bytea', (v) => v)).toThrow(TypeError);
    expect(() => pgBinaryArray([1], 'bool', (v) => v)).toThrow(TypeError);
    expect(() => pgBinaryArray([0.5], 'numeric', (v) => v)).toThrow(RangeError);
    expect(() => pgBinaryArray([2 ** 60], 'numeric', (v) => v)).toThrow(RangeError); // not exact as a number
    expect(() => pgBinaryArray(['12'], 'numeric', (v) => v)).toThrow(TypeError);
    expect(() => pgBinaryArray(['2026-02-30'], 'date', (v) => v)).toThrow(RangeError);
    expect(() => pgBinaryArray(['2026-1-2'], 'date', (v) => v)).toThrow(RangeError);
  });
});
