import fc from 'fast-check';
import { Client } from 'pg';
import { pgArray } from '../../indexer/project/pg-array';
import { ADMIN_DATABASE_URL } from '../support/env';

/** The projector's text array literals (numeric and date columns), read back by real PostgreSQL through unnest(). */
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

  it('sends NULL for null and undefined, numbers, bigints beyond 2^64 and dates as text', async () => {
    expect(await roundTrip('text', ['a', null, undefined, 'b'])).toEqual(['a', null, null, 'b']);
    expect(await roundTrip('numeric', [0, -5, 2n ** 64n - 1n, -(2n ** 63n), 2n ** 70n, null])).toEqual([
      '0',
      '-5',
      '18446744073709551615',
      '-9223372036854775808',
      '1180591620717411303424',
      null,
    ]);
    const days = (await roundTrip('date', ['2026-01-02', '1999-12-31'])) as Date[];
    expect(days.map((d) => [d.getFullYear(), d.getMonth() + 1, d.getDate()])).toEqual([
      [2026, 1, 2],
      [1999, 12, 31],
    ]);
    expect(await roundTrip('numeric', [])).toEqual([]);
  });

  it('refuses what PostgreSQL would misread', () => {
    expect(() => pgArray([Number.NaN], (v) => v)).toThrow(RangeError);
    expect(() => pgArray([Number.POSITIVE_INFINITY], (v) => v)).toThrow(RangeError);
    expect(() => pgArray([{}], (v) => v)).toThrow(TypeError);
    expect(() => pgArray([true], (v) => v)).toThrow(TypeError); // booleans go in binary (pg-binary.ts)
  });
});
