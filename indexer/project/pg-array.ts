/**
 * PostgreSQL array literals for the projector's `unnest($n::numeric[])` and `date[]`
 * parameters: the column types whose binary form `pg-binary.ts` does not encode. Amounts are
 * u64 and beyond, so they travel as decimal text.
 *
 * pg turns a JS array parameter into the same literal, but dispatches on every element's type
 * and runs two regular expressions over every string. Strings are always quoted (so 'NULL'
 * and '' stay strings) and escaped only when they hold a quote or a backslash.
 */
function element(v: unknown): string {
  switch (typeof v) {
    case 'string':
      return v.includes('"') || v.includes('\\') ? `"${v.replace(/["\\]/g, '\\$&')}"` : `"${v}"`;
    case 'number':
      if (!Number.isFinite(v)) throw new RangeError(`${v} is not a finite number`);
      return String(v);
    case 'bigint':
      return v.toString();
    case 'undefined':
      return 'NULL';
    case 'object':
      if (v === null) return 'NULL';
      break;
    default:
      break;
  }
  throw new TypeError(`cannot send a ${typeof v} as an array element`);
}

/** One column of `rows` as an array literal. */
export function pgArray<R>(rows: readonly R[], pick: (row: R) => unknown): string {
  let out = '{';
  for (let i = 0; i < rows.length; i++) {
    if (i) out += ',';
    out += element(pick(rows[i]!));
  }
  return `${out}}`;
}
