/** A row as the driver returns it: bigint and numeric columns as strings, times as Dates. */
export type DbRow = Record<string, unknown>;
