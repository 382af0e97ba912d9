/**
 * Table descriptors: one definition per projected table (columns with their SQL type and how a
 * value is held in memory) from which the row types, the projector's writers and loader, and
 * the API's default payload encoding are derived. Ponder's `onchainTable` is the model; the
 * descriptors are checked against the migrated database's `information_schema.columns` by a
 * test, so a migration and its descriptor cannot drift apart.
 */

/** The SQL types the projected tables use (a domain such as `u64` counts as its base type). */
export type SqlType = 'bigint' | 'int' | 'smallint' | 'numeric' | 'text' | 'boolean' | 'timestamptz' | 'date';

export interface Column<T = unknown> {
  readonly sql: SqlType;
  readonly nullable: boolean;
  /** The in-memory value from what pg returns for the column (never called with null). */
  readonly decode: (v: unknown) => T;
  /** Phantom: the in-memory type, nullable included. */
  readonly __value?: T;
}

type ValueOf<C> = C extends Column<infer T> ? T : never;

function column<T>(sql: SqlType, decode: (v: unknown) => T): Column<T> {
  return { sql, nullable: false, decode };
}

/** `YYYY-MM-DD` of a DATE, which pg parses as local midnight. */
function localDay(v: unknown): string {
  if (!(v instanceof Date)) return String(v);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${v.getFullYear()}-${pad(v.getMonth() + 1)}-${pad(v.getDate())}`;
}

/** Column kinds by in-memory type. pg returns BIGINT and NUMERIC as strings (core/db). */
export const col = {
  /** BIGINT held as a number: row ids, slots and counts, all far below 2^53. */
  int8: column<number>('bigint', Number),
  int4: column<number>('int', Number),
  int2: column<number>('smallint', Number),
  /** Integer NUMERIC (u64 amounts, their sums, signed P&L) held as bigint: no precision lost. */
  numeric: column<bigint>('numeric', (v) => BigInt(v as string)),
  text: column<string>('text', (v) => v as string),
  /** TEXT restricted to a set of values the projector writes. */
  textOf: <T extends string>() => column<T>('text', (v) => v as T),
  bool: column<boolean>('boolean', (v) => v as boolean),
  timestamptz: column<Date>('timestamptz', (v) => v as Date),
  date: column<string>('date', localDay),
};

export function nullable<T>(c: Column<T>): Column<T | null> {
  return { sql: c.sql, nullable: true, decode: c.decode };
}

export type Columns = Record<string, Column>;

export interface TableDef<C extends Columns = Columns> {
  readonly name: string;
  readonly columns: C;
  /** Properties in declaration order, and the column name of each (snake_case of it). */
  readonly props: readonly string[];
  readonly columnOf: Readonly<Record<string, string>>;
  /** The conflict target of upserts (primary or unique key); absent for append-only tables. */
  readonly key?: readonly string[];
}

export type RowOf<T extends TableDef> = { [K in keyof T['columns']]: ValueOf<T['columns'][K]> };

const snake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

export function defineTable<C extends Columns>(name: string, columns: C, opts: { key?: readonly (keyof C & string)[] } = {}): TableDef<C> {
  const props = Object.keys(columns);
  const columnOf = Object.fromEntries(props.map((p) => [p, snake(p)]));
  return { name, columns, props, columnOf, ...(opts.key ? { key: opts.key } : {}) };
}

/**
 * A row of `t` from what pg returns (`SELECT *`, snake_case keys). Compiled once per table: the
 * loader decodes every row a batch reads that the row cache does not hold.
 */
export function createDecoder<T extends TableDef>(t: T): (r: Record<string, unknown>) => RowOf<T> {
  const { props, columns, columnOf } = t;
  const fields = props.map((p) => [p, columnOf[p]!, columns[p]!.nullable, columns[p]!.decode] as const);
  return (r) => {
    const out: Record<string, unknown> = {};
    for (const [p, name, isNullable, decode] of fields) {
      const v = r[name];
      out[p] = isNullable && v === null ? null : decode(v);
    }
    return out as RowOf<T>;
  };
}

// ---- The API's default payload encoding of a column ------------------------------------

/** How each SQL type leaves the API: integer amounts as decimal strings, times as ISO 8601. */
type WireOfSql<S extends SqlType> = S extends 'bigint' | 'int' | 'smallint' ? number : S extends 'boolean' ? boolean : string;
type WireOf<C> = C extends Column<infer T> ? (null extends T ? WireOfSql<C['sql']> | null : WireOfSql<C['sql']>) : never;

export const iso = (v: unknown): string | null => (v instanceof Date ? v.toISOString() : v === null || v === undefined ? null : String(v));

const WIRE: { [S in SqlType]: (v: unknown) => unknown } = {
  bigint: Number,
  int: Number,
  smallint: Number,
  numeric: String,
  text: (v) => v,
  boolean: (v) => v,
  timestamptz: iso,
  date: localDay,
};

/** Payload field names: the descriptor's camelCase properties or the SQL column names. */
export type FieldCase = 'camel' | 'snake';
type Field<P extends string, N extends FieldCase> = N extends 'camel' ? P : SnakeOf<P>;
type SnakeOf<S extends string> = S extends `${infer H}${infer R}` ? `${H extends Lowercase<H> ? H : `_${Lowercase<H>}`}${SnakeOf<R>}` : S;

export type Payload<T extends TableDef, P extends keyof T['columns'] & string, N extends FieldCase> = {
  [K in P as Field<K, N>]: WireOf<T['columns'][K]>;
};

/**
 * The payload encoder of some of `t`'s columns, from a row as pg returns it: the fields in the
 * order given, each in its type's wire form, null kept. A presentation picks and names
 * fields; it never re-states how a column's value is written.
 */
export function createPayload<T extends TableDef, const P extends readonly (keyof T['columns'] & string)[], N extends FieldCase>(
  t: T,
  props: P,
  fieldCase: N,
): (r: Record<string, unknown>) => Payload<T, P[number], N> {
  const { columns, columnOf } = t;
  const fields = props.map((p) => {
    const name = columnOf[p]!;
    return [fieldCase === 'camel' ? p : name, name, WIRE[columns[p]!.sql]] as const;
  });
  return (r) => {
    const out: Record<string, unknown> = {};
    for (const [field, name, encode] of fields) {
      const v = r[name];
      out[field] = v === null || v === undefined ? null : encode(v);
    }
    return out as Payload<T, P[number], N>;
  };
}
