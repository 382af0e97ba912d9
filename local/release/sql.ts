import { loadModule, parseSync } from 'libpg-query';

/**
 * SQL read as PostgreSQL reads it (D-458): libpg-query is PostgreSQL's own parser compiled to
 * WebAssembly, so a statement ends where the server ends it (dollar-quoted bodies, quoted names
 * and strings, nested comments and `E''` escapes as the server lexes them), and each statement
 * comes with its syntax tree. Call `loadSqlParser()` once before the synchronous functions.
 */

/** A node of libpg-query's tree: `{ "<Kind>": { ...fields } }`, fields as in PostgreSQL's parsenodes.h. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Ast = Record<string, any>;

export interface Statement {
  /** The node's kind, e.g. `AlterTableStmt`. */
  kind: string;
  /** Its fields. */
  node: Ast;
  /** Its text as written, comments before it left out, whitespace collapsed (for messages). */
  text: string;
  /** The 1-based line of the file it starts on. */
  line: number;
}

export class SqlParseError extends Error {
  override name = 'SqlParseError';
}

let loaded: Promise<void> | undefined;
export const loadSqlParser = (): Promise<void> => (loaded ??= loadModule());

/** The SQL node-pg-migrate applies going up: what precedes `-- Down Migration`. */
export function upPart(sql: string): string {
  const down = sql.search(/^--\s*Down Migration\s*$/im);
  return down < 0 ? sql : sql.slice(0, down);
}

/** The offset past whitespace and comments (`--` to the end of the line, nested `/* *\/`) from `i`. */
function skipBlank(sql: string, i: number): number {
  for (;;) {
    while (i < sql.length && /\s/.test(sql[i]!)) i++;
    if (sql.startsWith('--', i)) {
      const nl = sql.indexOf('\n', i);
      i = nl < 0 ? sql.length : nl + 1;
    } else if (sql.startsWith('/*', i)) {
      let depth = 0;
      do {
        if (sql.startsWith('/*', i)) (depth++, (i += 2));
        else if (sql.startsWith('*/', i)) (depth--, (i += 2));
        else i++;
      } while (depth > 0 && i < sql.length);
    } else return i;
  }
}

/**
 * The statements of `sql` (a file's text, or the part of it that runs), each with the line of
 * `file` it starts on. SQL that PostgreSQL would refuse fails, naming the file and line.
 */
export function parseStatements(sql: string, file: string): Statement[] {
  // The parser's locations count bytes of UTF-8; the lines are counted in the same bytes.
  const bytes = Buffer.from(sql, 'utf8');
  const lineAt = (byte: number) => bytes.subarray(0, byte).toString('utf8').split('\n').length;
  let tree: { stmts?: { stmt: Ast; stmt_location?: number; stmt_len?: number }[] };
  try {
    tree = parseSync(sql);
  } catch (e) {
    const at = (e as { sqlDetails?: { cursorPosition?: number } }).sqlDetails?.cursorPosition;
    throw new SqlParseError(`${file}${at === undefined ? '' : ` line ${lineAt(at)}`}: PostgreSQL would refuse it: ${(e as Error).message}`);
  }
  return (tree.stmts ?? []).map((s) => {
    const from = s.stmt_location ?? 0;
    const raw = (s.stmt_len ? bytes.subarray(from, from + s.stmt_len) : bytes.subarray(from)).toString('utf8');
    const lead = skipBlank(raw, 0);
    const kind = Object.keys(s.stmt)[0]!;
    return { kind, node: s.stmt[kind] as Ast, text: raw.slice(lead).replace(/\s+/g, ' ').trim(), line: lineAt(from + Buffer.byteLength(raw.slice(0, lead))) };
  });
}

/** A qualified name's last part, lower case (`public.markets` → `markets`). */
export const lastName = (names: Ast[] | undefined): string => String(names?.at(-1)?.String?.sval ?? '').toLowerCase();

/** A relation's name, its schema aside when it is `public` (the migrations' schema), else `schema.name`. */
export const relationName = (r: Ast | undefined): string => {
  const schema = r?.schemaname && String(r.schemaname).toLowerCase() !== 'public' ? `${String(r.schemaname).toLowerCase()}.` : '';
  return `${schema}${String(r?.relname ?? '').toLowerCase()}`;
};
