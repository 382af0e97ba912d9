import fc from 'fast-check';
import { Client } from 'pg';
import { pgArray } from '../../indexer/project/pg-array';
import { ADMIN_DATABASE_URL } from '../support/env';

/** The projector's array literals, read back by real PostgreSQL through unnest(). */
describe('pgArray (real PostgreSQL)', () => {
  let pg: Client;
  beforeAll(async () => {
    pg = new Client({ connectionString: ADMIN_DATABASE_URL });
    await pg.connect();
  });
  afterAll(() => pg.end());

  const roundTrip = async (type: string, values: unknown[]) => {
    const { rows } = await pg.query<{ v: unknown }>(`SELECT v FROM unnest($1::${type}[]) WITH ORDINALITY AS u(v, i) ORDER BY i`, [pgArray(values, (v) => v)]);
    return rows.map((r) => r.v);
  };

  it('keeps every string as it was: quotes, backslashes, braces, commas, unicode, "NULL" and ""', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(fc.string({ unit: 'grapheme' }), fc.constantFrom('NULL', 'null', '', '"', '\\', '{a,b}', ' x ', '\\x41')), { maxLength: 20 }), async (values) => {
        const clean = values.map((s) => s.replace(/\0/g, ''));
        expect(await roundTrip('text', clean)).toEqual(clean);
      }),
      { numRuns: 200 },
    );
  });

  it('sends NULL for null and undefined, numbers, bigints beyond 2^53, booleans, dates and bytes', async () => {
    expect(await roundTrip('text', ['a', null, undefined, 'b'])).toEqual(['a', null, null, 'b']);
    expect(await roundTrip('numeric', [0, -5, 2n ** 64n - 1n, -(2n ** 63n)])).toEqual(['0', '-5', '18446744073709551615', '-9223372036854775808']);
    expect(await roundTrip('boolean', [true, false, null])).toEqual([true, false, null]);
    const d = new Date('2026-01-02T03:04:05.678Z');
    const e = new Date('2027-01-02T03:04:05.000Z');
    expect((await roundTrip('timestamptz', [d, d, e, d])).map((x) => (x as Date).toISOString())).toEqual([d, d, e, d].map((x) => x.toISOString()));
    const bytes = Buffer.from([0, 1, 0x5c, 0x22, 0xff]);
    expect(await roundTrip('bytea', [bytes.subarray(1, 4), new Uint8Array(0), bytes])).toEqual([bytes.subarray(1, 4), Buffer.alloc(0), bytes]);
    expect(await roundTrip('int', [])).toEqual([]);
  });

  it('refuses what PostgreSQL would misread', () => {
    expect(() => pgArray([Number.NaN], (v) => v)).toThrow(RangeError);
    expect(() => pgArray([new Date(Number.NaN)], (v) => v)).toThrow(RangeError);
    expect(() => pgArray([{}], (v) => v)).toThrow(TypeError);
  });
});
