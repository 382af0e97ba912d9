import type { ITask } from 'pg-promise';
import { pgBinaryArray, type BinaryElementType } from './pg-binary';
import type { BatchState, Table } from './state';
import type { SqlType, TableDef } from '../../core/db/table';
import { PROJECTED } from '../../core/db/tables';

type Projected = typeof PROJECTED;

/**
 * Daily P&L rows add up across batches instead of being read first: its upsert adds the
 * batch's delta to the stored figure.
 */
const ACCUMULATE: { [K in keyof Projected]?: string } = { dailyPnl: 'pnl = daily_pnl.pnl + EXCLUDED.pnl' };

export interface Writer {
  /** Inserts; for tables with a conflict target, an upsert. */
  sql: string;
  /** A plain insert, for rows the batch created (known not to exist). */
  insertSql: string;
  props: string[];
  /** Per prop: its array's binary element type. */
  binary: BinaryElementType[];
}

/** The element type of each SQL type in PostgreSQL's binary array format (D-60). */
const BINARY: Record<SqlType, BinaryElementType> = {
  bigint: 'int8', int: 'int4', smallint: 'int2', boolean: 'bool', text: 'text', timestamptz: 'timestamptz', numeric: 'numeric', date: 'date',
};
export type Writers = { [K in keyof Projected]: Writer };

/** A table's statements, from its descriptor (core/db/tables.ts). */
function createWriter(t: TableDef, accumulate?: string): Writer {
  const cols = t.props.map((p) => t.columnOf[p]!);
  const types = t.props.map((p) => t.columns[p]!.sql);
  const arrays = types.map((type, i) => `$${i + 1}::${type}[]`);
  const insertSql = `INSERT INTO ${t.name} (${cols.join(', ')}) SELECT * FROM unnest(${arrays.join(', ')})`;
  let sql = insertSql;
  if (t.key) {
    const key = t.key.map((p) => t.columnOf[p]!);
    const updates = accumulate ?? cols.filter((c) => !key.includes(c)).map((c) => `${c} = EXCLUDED.${c}`).join(', ');
    sql += ` ON CONFLICT (${key.join(', ')}) DO UPDATE SET ${updates}`;
  }
  return { sql, insertSql, props: [...t.props], binary: types.map((type) => BINARY[type]) };
}

/**
 * Multi-row statements as `INSERT ... SELECT * FROM unnest($1::type[], ...)` with bound
 * parameters: one round trip per table and batch, no per-row SQL text to build or parse.
 */
export function createWriters(): Writers {
  const out: Partial<Writers> = {};
  for (const key of Object.keys(PROJECTED) as (keyof Projected)[]) out[key] = createWriter(PROJECTED[key], ACCUMULATE[key]);
  return out as Writers;
}

export interface Statement {
  text: string;
  values: unknown[];
}

function* upsert(w: Writer, rows: object[], sql = w.sql): Generator<Statement> {
  if (!rows.length) return;
  const rs = rows as Record<string, unknown>[];
  yield { text: sql, values: w.props.map((p, i) => pgBinaryArray(rs, w.binary[i]!, (r) => r[p])) };
}

/**
 * A table's changed rows: those the batch created with a plain insert, which skips the
 * conflict check an upsert makes per row (the loader looked for them and found none), and the
 * others with the upsert.
 */
function* changed<R extends object>(w: Writer, table: Table<string, R>, keep: (row: R) => boolean = () => true): Generator<Statement> {
  const created: R[] = [];
  const existing: R[] = [];
  for (const key of table.dirty) {
    const row = table.rows.get(key)!;
    if (keep(row)) (table.created.has(key) ? created : existing).push(row);
  }
  yield* upsert(w, created, w.insertSql);
  yield* upsert(w, existing);
}

/**
 * The batch's writes, parents before children (foreign keys): one multi-row statement per
 * table, encoded one at a time so that a caller can yield to the event loop in between.
 */
export function* writeStatements(writers: Writers, s: BatchState): Generator<Statement> {
  yield* changed(writers.markets, s.markets);
  yield* changed(writers.orders, s.orders);
  const levels = s.levels.dirtyRows();
  const emptied = levels.filter((l) => l.quantity === 0n);
  for (const l of levels) {
    if (l.quantity < 0n || l.orders < 0 || (l.quantity === 0n) !== (l.orders === 0)) {
      throw new Error(`order book level ${l.marketAddress}/${l.bookSide}/${l.priceBps} is inconsistent: ${l.quantity} in ${l.orders} orders`);
    }
  }
  if (emptied.length) {
    yield {
      text: `DELETE FROM orderbook_levels l USING unnest($1::text[], $2::smallint[], $3::int[]) AS k(m, s, p)
              WHERE l.market_address = k.m AND l.book_side = k.s AND l.price_bps = k.p`,
      values: [
        pgBinaryArray(emptied, 'text', (l) => l.marketAddress),
        pgBinaryArray(emptied, 'int2', (l) => l.bookSide),
        pgBinaryArray(emptied, 'int4', (l) => l.priceBps),
      ],
    };
  }
  yield* changed(writers.orderbookLevels, s.levels, (l) => l.quantity > 0n);
  yield* changed(writers.positions, s.positions);
  yield* upsert(writers.trades, s.trades);
  yield* upsert(writers.feeConfigHistory, s.feeConfigs);
  yield* upsert(writers.tickSizeHistory, s.tickSizes);
  yield* changed(writers.referralLocks, s.locks);
  yield* changed(writers.referrerEarnings, s.earnings);
  yield* upsert(writers.referrerCredits, s.referrerCredits);
  yield* upsert(writers.referrerClaims, s.referrerClaims);
  yield* upsert(writers.creatorFeeAccruals, s.creatorAccruals);
  yield* upsert(writers.creatorFeeClaims, s.creatorClaims);
  yield* changed(writers.traderActivity, s.activity);
  yield* changed(writers.userStats, s.stats);
  yield* changed(writers.userAchievements, s.userAchievements);
  yield* upsert(writers.settledTrades, s.settledTrades);
  yield* upsert(writers.dailyPnl, [...s.dailyPnl.values()]);
  const counts = [...s.stateCounts].filter(([, d]) => d !== 0);
  if (counts.length) {
    yield {
      text: 'UPDATE market_counts c SET n = c.n + d.delta FROM unnest($1::smallint[], $2::bigint[]) AS d(state, delta) WHERE c.state = d.state',
      values: [pgBinaryArray(counts, 'int2', ([st]) => st), pgBinaryArray(counts, 'int8', ([, d]) => d)],
    };
  }
  const epochs = [...s.epochStateCounts.values()].filter((d) => d.delta !== 0);
  if (epochs.length) {
    // A block's first market brings a row for every state (market_counts has one per state),
    // so the rows that exist do not depend on where batches begin and end.
    yield {
      text: `INSERT INTO market_list_blocks AS b (block, state, n)
             SELECT d.block, s.state, COALESCE(sum(d.delta) FILTER (WHERE d.state = s.state), 0)
               FROM (SELECT market_list_block(e.market_id) AS block, e.state, e.delta
                       FROM unnest($1::numeric[], $2::smallint[], $3::bigint[]) AS e(market_id, state, delta)) d
              CROSS JOIN market_counts s
              GROUP BY d.block, s.state
             ON CONFLICT (block, state) DO UPDATE SET n = b.n + excluded.n WHERE excluded.n <> 0`,
      values: [
        pgBinaryArray(epochs, 'numeric', (d) => d.marketId),
        pgBinaryArray(epochs, 'int2', (d) => d.state),
        pgBinaryArray(epochs, 'int8', (d) => d.delta),
      ],
    };
  }
  const p = s.platform;
  if (p.trades || p.positions || p.traders || p.creatorFees) {
    yield {
      text: `UPDATE platform_totals SET total_volume = total_volume + $1::numeric, total_trades = total_trades + $2::bigint,
               total_positions = total_positions + $3::bigint, unique_traders = unique_traders + $4::bigint,
               protocol_fees = protocol_fees + $5::numeric, creator_fees = creator_fees + $6::numeric`,
      values: [p.volume.toString(), p.trades, p.positions, p.traders, p.protocolFees.toString(), p.creatorFees.toString()],
    };
  }
}

/**
 * Several data-modifying statements as one: all but the last become `WITH` queries, which
 * PostgreSQL runs to completion whether or not the last reads them, and their parameters are
 * renumbered. One round trip instead of one per statement; foreign keys are still checked, at
 * the end of the statement. The statements must not touch the same rows (they all see one
 * snapshot), which holds for the projector's: a table's created and changed rows are
 * different rows, and so are the order book levels it deletes and writes.
 */
export function combineStatements(statements: Statement[]): Statement {
  if (statements.length === 1) return statements[0]!;
  const values: unknown[] = [];
  const texts = statements.map((q) => {
    const offset = values.length;
    values.push(...q.values);
    return offset ? q.text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`) : q.text;
  });
  const last = texts.pop()!;
  return { text: `WITH ${texts.map((t, i) => `w${i} AS (${t})`).join(',\n')}\n${last}`, values };
}

/**
 * Writes what the batch changed, never a round trip per row. The statements run one after
 * the other (pg deprecates queueing queries on a busy client).
 */
export async function writeState(t: ITask<unknown>, writers: Writers, s: BatchState): Promise<void> {
  for (const q of writeStatements(writers, s)) await t.none(q as never);
}
