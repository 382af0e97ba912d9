import { PROJECTED_TABLES } from '../support/tables';
import { createDatabase, type Database } from '../../core/db';
import { MIGRATIONS_TABLE } from '../../core/db/migrate';
import type { SqlType, TableDef } from '../../core/db/table';
import { DESCRIBED_OTHER, PROJECTED } from '../../core/db/tables';
import { createTestDatabase, type TestDatabase } from '../support/pg';

/** What information_schema calls each descriptor SQL type (a domain reports its base type). */
const INFORMATION_SCHEMA_TYPE: Record<SqlType, string> = {
  bigint: 'bigint',
  int: 'integer',
  smallint: 'smallint',
  numeric: 'numeric',
  text: 'text',
  boolean: 'boolean',
  timestamptz: 'timestamp with time zone',
  date: 'date',
};

interface ColumnInfo {
  table_name: string;
  column_name: string;
  data_type: string;
  is_nullable: 'YES' | 'NO';
}

describe('table descriptors (core/db/tables.ts) match the migrated database', () => {
  let tdb: TestDatabase;
  let database: Database;
  let columns: ColumnInfo[];
  let keys: { table_name: string; columns: string[] }[];

  beforeAll(async () => {
    tdb = await createTestDatabase();
    database = createDatabase({ url: tdb.url, poolMax: 1 });
    columns = await database.db.any<ColumnInfo>(
      `SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns
        WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`,
    );
    // Primary keys and unique constraints, each as its column list in key order.
    keys = await database.db.any(
      `SELECT c.relname AS table_name, array_agg(a.attname::text ORDER BY k.n) AS columns
         FROM pg_index i
         JOIN pg_class c ON c.oid = i.indrelid
         JOIN pg_namespace ns ON ns.oid = c.relnamespace AND ns.nspname = current_schema()
         CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, n)
         JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
        WHERE i.indisunique
        GROUP BY c.relname, i.indexrelid`,
    );
  });
  afterAll(async () => {
    await database.close();
    await tdb.drop();
  });

  const DESCRIBED = { ...PROJECTED, ...DESCRIBED_OTHER };

  it.each(Object.entries(DESCRIBED) as [string, TableDef][])('%s: every column, in the table order, with its type and nullability', (_key, t) => {
    const actual = columns.filter((c) => c.table_name === t.name).map((c) => `${c.column_name} ${c.data_type}${c.is_nullable === 'YES' ? ' null' : ''}`);
    const declared = t.props.map((p) => {
      const c = t.columns[p]!;
      return `${t.columnOf[p]} ${INFORMATION_SCHEMA_TYPE[c.sql]}${c.nullable ? ' null' : ''}`;
    });
    expect(actual.length).toBeGreaterThan(0);
    expect(declared).toEqual(actual);
  });

  it.each((Object.entries(DESCRIBED) as [string, TableDef][]).filter(([, t]) => t.key))('%s: its upsert key is a primary key or unique constraint', (_key, t) => {
    const key = t.key!.map((p) => t.columnOf[p]);
    expect(keys.filter((k) => k.table_name === t.name).map((k) => k.columns)).toContainEqual(key);
  });

  it('every table the projector, the oracle poll or the key command writes rows into has a descriptor', () => {
    // The others are the indexer's own bookkeeping and counters, written by their own statements,
    // and the API's own records (cancel_requests, attestations, admin_audit, dead_letter_retries: D-143, D-145, D-146, D-164).
    const bookkeeping = ['achievements', 'admin_audit', 'attestations', 'cancel_requests', 'dead_letter_retries', 'dead_letters', 'indexer_cursor', 'indexer_status', 'writer_lease', 'projection_version', 'projection_live', 'market_counts', 'market_list_blocks', 'platform_totals', 'processed_transactions', 'raw_events', MIGRATIONS_TABLE];
    const tables = [...new Set(columns.map((c) => c.table_name))].filter((n) => !bookkeeping.includes(n)).sort();
    expect(tables).toEqual(Object.values(DESCRIBED).map((t) => t.name).sort());
  });

  it('the tables digest of the exactly-once tests covers every projected table and the counters', () => {
    // A projected table missing from the digest would let a replay or crash test pass while
    // that table doubled or lost rows.
    const digested = Object.keys(PROJECTED_TABLES);
    for (const t of Object.values(PROJECTED)) expect(digested).toContain(t.name);
    for (const t of ['market_counts', 'platform_totals', 'raw_events', 'processed_transactions', 'dead_letters']) expect(digested).toContain(t);
  });
});
