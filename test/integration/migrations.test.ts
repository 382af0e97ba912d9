import { readdirSync } from 'node:fs';
import { createDatabase, type Database } from '../../core/db';
import { migrate, MIGRATIONS_DIR, MIGRATIONS_TABLE } from '../../core/db/migrate';
import { RESTING_ORDERS_COUNT } from '../../server/read/queries/orders';
import { createTestDatabase, type TestDatabase } from '../support/pg';

const migrationNames = readdirSync(MIGRATIONS_DIR)
  .filter((f) => f.endsWith('.sql'))
  .sort()
  .map((f) => f.replace(/\.sql$/, ''));

describe('migrations (real PostgreSQL)', () => {
  let tdb: TestDatabase;
  let database: Database;

  beforeEach(async () => {
    tdb = await createTestDatabase({ migrated: false });
    database = createDatabase({ url: tdb.url, poolMax: 2 });
  });
  afterEach(async () => {
    await database.close();
    await tdb.drop();
  });

  it('apply in order to an empty database, and a second run is a no-op', async () => {
    expect(await migrate({ databaseUrl: tdb.url })).toEqual({ applied: migrationNames });
    const recorded = await database.db.map(`SELECT name FROM ${MIGRATIONS_TABLE} ORDER BY id`, [], (r: { name: string }) => r.name);
    expect(recorded).toEqual(migrationNames);
    expect(await migrate({ databaseUrl: tdb.url })).toEqual({ applied: [] });
    expect(await database.db.one(`SELECT count(*)::int AS n FROM ${MIGRATIONS_TABLE}`)).toEqual({ n: migrationNames.length });
  });

  it('let concurrent migrators queue instead of colliding', async () => {
    const results = await Promise.all([1, 2, 3, 4].map(() => migrate({ databaseUrl: tdb.url })));
    const appliedCounts = results.map((r) => r.applied.length).sort();
    expect(appliedCounts).toEqual([0, 0, 0, migrationNames.length]);
    expect(await database.db.one(`SELECT count(*)::int AS n FROM ${MIGRATIONS_TABLE}`)).toEqual({ n: migrationNames.length });
  });

  it('roll back cleanly to an empty schema', async () => {
    await migrate({ databaseUrl: tdb.url });
    await migrate({ databaseUrl: tdb.url, direction: 'down', count: Infinity });
    const tables = await database.db.any(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_name <> $1`,
      [MIGRATIONS_TABLE],
    );
    expect(tables).toEqual([]);
  });
});

describe('schema rules (real PostgreSQL)', () => {
  let tdb: TestDatabase;
  let database: Database;
  const market = 'So11111111111111111111111111111111111111112';

  beforeAll(async () => {
    tdb = await createTestDatabase();
    database = createDatabase({ url: tdb.url, poolMax: 2 });
    await database.db.none(
      `INSERT INTO markets (id, address, market_id, settlement_mint, state, t_start, t_end, created_at, updated_at, created_slot, created_signature)
       VALUES (1, $1, 29446500, 'mint', 1, to_timestamp(1766790000), to_timestamp(1766790060), now(), now(), 1, 'sig')`,
      [market],
    );
  });
  afterAll(async () => {
    await database.close();
    await tdb.drop();
  });

  let nextId = 1;
  const insertOrder = (orderId: string, quantity: string) =>
    database.db.none(
      `INSERT INTO orders (id, market_address, order_id, owner, side_code, price_bps, quantity, created_at, updated_at, created_slot, tx_signature)
       VALUES ($4, $1, $2, 'owner', 0, 5000, $3, now(), now(), 1, 'sig')`,
      [market, orderId, quantity, nextId++],
    );

  it('stores u64 amounts exactly and returns them as decimal strings', async () => {
    await insertOrder('18446744073709551615', '18446744073709551615');
    const row = await database.db.one(`SELECT order_id, quantity FROM orders WHERE order_id = '18446744073709551615'`);
    expect(row).toEqual({ order_id: '18446744073709551615', quantity: '18446744073709551615' });
  });

  it('rejects negative and out-of-range u64 values', async () => {
    await expect(insertOrder('1', '-1')).rejects.toThrow(/u64_check|violates check constraint/);
    await expect(insertOrder('2', '18446744073709551616')).rejects.toThrow(/u64_check|violates check constraint|overflow/);
  });

  it('rejects a trade whose fee parts do not add up to the taker fee', async () => {
    const insertTrade = (fee: number, parts: [number, number, number], idx: number) =>
      database.db.none(
        `INSERT INTO trades (id, market_address, maker_order_id, taker_order_id, maker, taker, maker_side, taker_side,
           price_bps, quantity, taker_fee, fee_protocol, fee_creator, fee_referral, protocol_treasury_index,
           tx_signature, event_index, slot, executed_at)
         VALUES ($6 + 1, $1, 1, 2, 'm', 't', 0, 2, 5000, 10, $2, $3, $4, $5, 3, 'sig', $6, 1, now())`,
        [market, fee, ...parts, idx],
      );
    await insertTrade(10, [5, 3, 2], 0);
    await expect(insertTrade(10, [5, 3, 3], 1)).rejects.toThrow(/check constraint/);
  });

  it('answers the resting-order count of /stats/platform from its partial index', async () => {
    const plan = await database.db.tx(async (t) => {
      await t.none('SET LOCAL enable_seqscan = off');
      return t.one<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${RESTING_ORDERS_COUNT}`);
    });
    expect(JSON.stringify(plan)).toContain('"Index Name":"orders_resting_idx"');
  });

  it('keys raw events by (signature, event index)', async () => {
    const ins = () =>
      database.db.result(
        `INSERT INTO raw_events (signature, event_index, slot, kind, data) VALUES ('s', 0, 1, 'TickSizeChanged', '\\x00')
         ON CONFLICT DO NOTHING`,
      );
    expect((await ins()).rowCount).toBe(1);
    expect((await ins()).rowCount).toBe(0);
  });

  it('ships the achievements catalog in every category', async () => {
    const rows = await database.db.any(`SELECT DISTINCT category FROM achievements ORDER BY category`);
    expect(rows.map((r: { category: string }) => r.category)).toEqual(['accuracy', 'exploration', 'streak', 'trading']);
  });
});
