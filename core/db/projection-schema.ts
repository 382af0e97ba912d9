import type { Db } from './index';
import { PROJECTED } from './tables';

/**
 * A projection version's own schema (D-332): the tables an indexer builds from the chain, built
 * beside the live ones so that a release with another projection version can index from the
 * start while the live tables keep being written and read. An indexer whose sessions resolve
 * names in that schema first (`inSchema`) writes there with the statements it always runs;
 * what is not in the schema (the SQL functions and domains, the API's own tables, the oracle's)
 * resolves to the live schema.
 */

/** The schema the migrations create every table in: the live one until a switch exists. */
export const LIVE_SCHEMA = 'public';

/** The schema a projection version builds its tables in. */
export const projectionSchema = (version: number): string => {
  if (!Number.isInteger(version) || version < 1) throw new Error(`projection version must be a positive integer, not ${version}`);
  return `p${version}`;
};

/**
 * What an indexer building a projection version writes: the projected tables, the counters the
 * projector keeps with them, the achievements catalog they refer to, its own exactly-once ledger,
 * cursor, dead letters, writer lease, status and recorded version. Everything else stays shared.
 */
export const PROJECTION_SCHEMA_TABLES: readonly string[] = [
  ...Object.values(PROJECTED).map((t) => t.name),
  'achievements',
  'market_counts',
  'market_list_blocks',
  'platform_totals',
  'raw_events',
  'processed_transactions',
  'dead_letters',
  'indexer_cursor',
  'indexer_status',
  'writer_lease',
  'projection_version',
];

/** The first rows of a new build, as the migrations seed them on an empty database. */
const SEEDS = (s: string) => [
  `INSERT INTO ${s}.achievements SELECT * FROM ${LIVE_SCHEMA}.achievements`,
  `INSERT INTO ${s}.market_counts (state, n) SELECT state, 0 FROM ${LIVE_SCHEMA}.market_counts`,
  `INSERT INTO ${s}.platform_totals (id, total_volume, total_trades, total_positions, unique_traders, protocol_fees, creator_fees) VALUES (1, 0, 0, 0, 0, 0, 0)`,
  `INSERT INTO ${s}.indexer_cursor (id, last_processed_slot) VALUES (1, 0)`,
  `INSERT INTO ${s}.writer_lease (id) VALUES (1)`,
  `INSERT INTO ${s}.projection_version (id, version) VALUES (1, NULL)`,
];

/** A schema name the live pointer may hold (its CHECK): the only kind interpolated into SQL here. */
export const PROJECTION_SCHEMA_NAME = /^(public|p[1-9][0-9]{0,8})$/;

/**
 * Each projection schema's own queue of dead-letter retry requests (D-455), shaped like the live
 * one and drawing ids from its sequence (so an id names one request whichever schema holds it).
 * A release that knows no schemas (0.1.x) reads `dead_letter_retries` where its names resolve,
 * in `public`, taking every pending row: a request for a built schema kept in `public` would be
 * settled there against `public`'s dead letter of the same id. Requests recorded for `schema` in
 * `public`'s queue before it had its own (builds before D-455) move to it. Run where only one
 * session does it: in the transaction creating the schema, or by the schema's writer.
 */
export async function ensureRetryQueue(t: Pick<Db, 'none'>, schema: string): Promise<void> {
  if (!PROJECTION_SCHEMA_NAME.test(schema)) throw new Error(`not a projection schema: ${JSON.stringify(schema)}`);
  if (schema === LIVE_SCHEMA) return;
  await t.none(`CREATE TABLE IF NOT EXISTS ${schema}.dead_letter_retries (LIKE ${LIVE_SCHEMA}.dead_letter_retries INCLUDING ALL)`);
  await t.none(
    `WITH moved AS (DELETE FROM ${LIVE_SCHEMA}.dead_letter_retries WHERE schema_name = $1 RETURNING *)
     INSERT INTO ${schema}.dead_letter_retries SELECT * FROM moved`,
    [schema],
  );
}

/**
 * A database URL whose sessions (the pool's and the writer lease's) look names up in `schema`
 * first, then in the live schema: PostgreSQL's `options` startup parameter, so every new
 * connection has it before its first statement.
 */
export function inSchema(databaseUrl: string, schema: string): string {
  const url = new URL(databaseUrl);
  url.searchParams.set('options', `-c search_path=${schema},${LIVE_SCHEMA}`);
  return url.toString();
}

/**
 * Creates `p<version>` with empty tables shaped like the live ones (columns, defaults, checks,
 * indexes, foreign keys between them, a sequence of its own for each serial column), the rows
 * the migrations seed and its retry queue. One transaction: a schema is there whole or not at all. Refuses a schema
 * that exists (a build under way, or one kept after a switch).
 */
export async function createProjectionSchema(db: Db, version: number): Promise<string> {
  const s = projectionSchema(version);
  await db.tx(async (t) => {
    await t.none(`CREATE SCHEMA ${s}`);
    for (const table of PROJECTION_SCHEMA_TABLES) await t.none(`CREATE TABLE ${s}.${table} (LIKE ${LIVE_SCHEMA}.${table} INCLUDING ALL)`);
    // LIKE copies a serial column's default, which would draw from the live table's sequence.
    const serials = await t.any<{ table_name: string; column_name: string }>(
      `SELECT table_name, column_name FROM information_schema.columns
        WHERE table_schema = $1 AND table_name = ANY($2) AND column_default LIKE 'nextval(%'`,
      [LIVE_SCHEMA, PROJECTION_SCHEMA_TABLES],
    );
    for (const c of serials) {
      const seq = `${s}.${c.table_name}_${c.column_name}_seq`;
      await t.none(`CREATE SEQUENCE ${seq} OWNED BY ${s}.${c.table_name}.${c.column_name}`);
      await t.none(`ALTER TABLE ${s}.${c.table_name} ALTER COLUMN ${c.column_name} SET DEFAULT nextval('${seq}')`);
    }
    // LIKE copies no foreign key: each one between these tables, as the live schema declares it,
    // read while names resolve to the live schema and applied while they resolve to the new one.
    const fks = await t.any<{ table_name: string; name: string; def: string }>(
      `SELECT c.relname AS table_name, k.conname AS name, pg_get_constraintdef(k.oid) AS def
         FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
         JOIN pg_class r ON r.oid = k.confrelid
        WHERE k.contype = 'f' AND n.nspname = $1 AND c.relname = ANY($2) AND r.relname = ANY($2)
        ORDER BY c.relname, k.conname`,
      [LIVE_SCHEMA, PROJECTION_SCHEMA_TABLES],
    );
    await t.none(`SET LOCAL search_path = ${s}, ${LIVE_SCHEMA}`);
    for (const fk of fks) await t.none(`ALTER TABLE ${s}.${fk.table_name} ADD CONSTRAINT ${fk.name} ${fk.def}`);
    for (const seed of SEEDS(s)) await t.none(seed);
    await ensureRetryQueue(t, s);
    for (const c of serials) await t.one(`SELECT setval('${s}.${c.table_name}_${c.column_name}_seq', COALESCE((SELECT max(${c.column_name}) FROM ${s}.${c.table_name}), 0) + 1, false)`);
  });
  return s;
}

/** Drops a projection version's schema and everything in it (only a `p<version>` schema can be named). */
export async function dropProjectionSchema(db: Db, version: number): Promise<void> {
  await db.none(`DROP SCHEMA IF EXISTS ${projectionSchema(version)} CASCADE`);
}
