/**
 * PostgreSQL array literals for the projector's `unnest($n::type[])` parameters.
 *
 * pg turns a JS array parameter into the same literal, but dispatches on every element's type
 * and runs two regular expressions over every string; the projector sends hundreds of
 * thousands of elements a second (addresses, signatures, numbers as text, event bytes as
 * hex), which made that the largest cost of building the batch's statements in the indexer's
 * CPU profile. Strings are always quoted (so 'NULL' and '' stay strings) and escaped only
 * when they hold a quote or a backslash.
 */
let lastDateMs = Number.NaN;
let lastDateIso = '';

function iso(d: Date): string {
  // Rows of one batch mostly share their block time: format it once.
  const ms = d.getTime();
  if (ms !== lastDateMs) {
    if (Number.isNaN(ms)) throw new RangeError('invalid Date in a query parameter');
    lastDateMs = ms;
    lastDateIso = d.toISOString();
  }
  return lastDateIso;
}

function element(v: unknown): string {
  switch (typeof v) {
    case 'string':
      return v.includes('"') || v.includes('\\') ? `"${v.replace(/["\\]/g, '\\$&')}"` : `"${v}"`;
    case 'number':
      if (!Number.isFinite(v)) throw new RangeError(`${v} is not a finite number`);
      return String(v);
    case 'bigint':
      return v.toString();
    case 'boolean':
      return v ? 't' : 'f';
    case 'undefined':
      return 'NULL';
    case 'object':
      if (v === null) return 'NULL';
      if (v instanceof Date) return iso(v);
      // bytea: \x followed by hex; the backslash itself is escaped inside an array literal.
      if (v instanceof Uint8Array) return `\\\\x${Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex')}`;
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
