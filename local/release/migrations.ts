/**
 * Migrations stay expand-only for one release (D-311, docs/deploy.md#upgrading): during a rollout
 * the previous release's pods run on the newer schema, and a rollback runs that release on it for
 * good. So a migration newer than the previous release must not drop, rename or retype what that
 * release reads, nor make one of its tables refuse the rows it writes (a NOT NULL column without a
 * default). The contract step (the drop) comes a release later, once no release in service reads
 * the thing any more. This reads the migrations' SQL (the "Up Migration" part node-pg-migrate
 * runs) as far as these rules need.
 */

export interface MigrationFile {
  /** The file name, e.g. `0011_lease.sql`. */
  name: string;
  sql: string;
}

export type Contraction =
  | { kind: 'drop'; object: 'table' | 'view' | 'function' | 'domain' | 'type'; name: string }
  | { kind: 'rename-table'; table: string; to: string }
  | { kind: 'drop-column' | 'retype-column' | 'set-not-null'; table: string; column: string }
  | { kind: 'rename-column'; table: string; column: string; to: string }
  | { kind: 'add-required-column'; table: string; column: string };

/** The SQL node-pg-migrate applies going up: what precedes `-- Down Migration`. */
export function upPart(sql: string): string {
  const down = sql.search(/^--\s*Down Migration\s*$/im);
  return down < 0 ? sql : sql.slice(0, down);
}

/** Statements without comments, split at top-level semicolons (quoted text kept whole). */
export function statements(sql: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i]!;
    if (c === '-' && sql[i + 1] === '-') {
      while (i < sql.length && sql[i] !== '\n') i++;
      cur += ' ';
    } else if (c === "'" || c === '"') {
      const end = sql.indexOf(c, i + 1);
      const stop = end < 0 ? sql.length : end;
      cur += sql.slice(i, stop + 1);
      i = stop;
    } else if (c === ';') {
      if (cur.trim()) out.push(cur.replace(/\s+/g, ' ').trim());
      cur = '';
    } else cur += c;
  }
  if (cur.trim()) out.push(cur.replace(/\s+/g, ' ').trim());
  return out;
}

/** Splits at commas outside parentheses and quotes. */
function topLevel(list: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let cur = '';
  let quote: string | undefined;
  for (const c of list) {
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(cur.trim());
      cur = '';
      continue;
    }
    cur += c;
  }
  if (cur.trim()) parts.push(cur.trim());
  return parts;
}

const ident = (s: string) => s.replace(/^"|"$/g, '').replace(/^public\./i, '').toLowerCase();
const NAME = String.raw`((?:"[^"]+"|[\w.]+))`;

/** The tables and their columns a sequence of migrations creates (CREATE TABLE, ADD COLUMN). */
export function schemaOf(files: MigrationFile[]): Map<string, Set<string>> {
  const tables = new Map<string, Set<string>>();
  for (const f of files) {
    for (const s of statements(upPart(f.sql))) {
      const create = new RegExp(`^CREATE (?:UNLOGGED )?TABLE (?:IF NOT EXISTS )?${NAME} \\((.*)\\)`, 'i').exec(s);
      if (create) {
        const cols = topLevel(create[2]!)
          .filter((d) => !/^(CONSTRAINT|PRIMARY KEY|UNIQUE|CHECK|FOREIGN KEY|EXCLUDE)\b/i.test(d))
          .map((d) => ident(d.split(' ')[0]!));
        tables.set(ident(create[1]!), new Set(cols));
        continue;
      }
      const alter = new RegExp(`^ALTER TABLE (?:IF EXISTS )?(?:ONLY )?${NAME} (.*)$`, 'i').exec(s);
      if (!alter) continue;
      const cols = tables.get(ident(alter[1]!));
      for (const a of topLevel(alter[2]!)) {
        const add = new RegExp(`^ADD (?:COLUMN )?(?:IF NOT EXISTS )?${NAME}`, 'i').exec(a);
        if (add && cols && !/^ADD (CONSTRAINT|PRIMARY KEY|UNIQUE|CHECK|FOREIGN KEY)\b/i.test(a)) cols.add(ident(add[1]!));
      }
    }
  }
  return tables;
}

/** What one migration takes away or tightens, statement by statement. */
export function contractionsOf(sql: string): Contraction[] {
  const out: Contraction[] = [];
  for (const s of statements(upPart(sql))) {
    const drop = /^DROP (TABLE|VIEW|MATERIALIZED VIEW|FUNCTION|DOMAIN|TYPE) (?:IF EXISTS )?(.*?)(?: CASCADE| RESTRICT)?$/i.exec(s);
    if (drop) {
      const object = drop[1]!.toLowerCase().replace('materialized ', '') as 'table' | 'view' | 'function' | 'domain' | 'type';
      for (const n of topLevel(drop[2]!)) out.push({ kind: 'drop', object, name: ident(n.replace(/\(.*$/, '').trim()) });
      continue;
    }
    const alter = new RegExp(`^ALTER TABLE (?:IF EXISTS )?(?:ONLY )?${NAME} (.*)$`, 'i').exec(s);
    if (!alter) continue;
    const table = ident(alter[1]!);
    for (const a of topLevel(alter[2]!)) {
      let m: RegExpExecArray | null;
      if ((m = new RegExp(`^RENAME TO ${NAME}$`, 'i').exec(a))) out.push({ kind: 'rename-table', table, to: ident(m[1]!) });
      else if ((m = new RegExp(`^RENAME (?:COLUMN )?${NAME} TO ${NAME}$`, 'i').exec(a))) out.push({ kind: 'rename-column', table, column: ident(m[1]!), to: ident(m[2]!) });
      else if ((m = new RegExp(`^DROP (?:COLUMN )?(?:IF EXISTS )?${NAME}`, 'i').exec(a)) && !/^DROP (CONSTRAINT|DEFAULT|NOT NULL)\b/i.test(a)) out.push({ kind: 'drop-column', table, column: ident(m[1]!) });
      else if ((m = new RegExp(`^ALTER (?:COLUMN )?${NAME} (?:SET DATA )?TYPE `, 'i').exec(a))) out.push({ kind: 'retype-column', table, column: ident(m[1]!) });
      else if ((m = new RegExp(`^ALTER (?:COLUMN )?${NAME} SET NOT NULL`, 'i').exec(a))) out.push({ kind: 'set-not-null', table, column: ident(m[1]!) });
      else if ((m = new RegExp(`^ADD (?:COLUMN )?(?:IF NOT EXISTS )?${NAME} (.*)$`, 'i').exec(a)) && !/^ADD (CONSTRAINT|PRIMARY KEY|UNIQUE|CHECK|FOREIGN KEY)\b/i.test(a)) {
        const def = m[2]!;
        const required = /\bNOT NULL\b/i.test(def) || /\bPRIMARY KEY\b/i.test(def);
        const filled = /\bDEFAULT\b/i.test(def) || /\bGENERATED\b/i.test(def) || /^(BIG)?SERIAL\b/i.test(def);
        if (required && !filled) out.push({ kind: 'add-required-column', table, column: ident(m[1]!) });
      }
    }
  }
  return out;
}

export interface AdditiveCheck {
  /** The previous release's migrations, as that release holds them. */
  previous: MigrationFile[];
  /** This checkout's migrations. */
  current: MigrationFile[];
  /** Whether the previous release's code names this table, column or function (a whole word). */
  reads: (name: string) => boolean;
  /** For messages, e.g. `0.1.0`. */
  release: string;
}

/** Every way the current migrations break the previous release, one line each naming the migration. */
export function additiveViolations(c: AdditiveCheck): string[] {
  const out: string[] = [];
  const before = new Map(c.previous.map((f) => [f.name, f.sql]));
  for (const [name, sql] of before) {
    const now = c.current.find((f) => f.name === name);
    if (!now) out.push(`${name}: removed, but release ${c.release} applied it (a database it migrated records it)`);
    else if (now.sql !== sql) out.push(`${name}: changed since release ${c.release} applied it (write a new migration instead)`);
  }
  const schema = schemaOf(c.previous);
  const used = (table: string, column?: string) => schema.has(table) && (column === undefined ? c.reads(table) : schema.get(table)!.has(column) && c.reads(column));
  for (const f of c.current.filter((x) => !before.has(x.name)).sort((a, b) => a.name.localeCompare(b.name))) {
    for (const k of contractionsOf(f.sql)) {
      const why = `, which release ${c.release} reads: expand only, contract a release later (docs/deploy.md#upgrading)`;
      switch (k.kind) {
        case 'drop':
          if (k.object === 'table' || k.object === 'view' ? used(k.name) : c.reads(k.name)) out.push(`${f.name}: drops ${k.object} ${k.name}${why}`);
          break;
        case 'rename-table':
          if (used(k.table)) out.push(`${f.name}: renames table ${k.table} to ${k.to}${why}`);
          break;
        case 'rename-column':
          if (used(k.table, k.column)) out.push(`${f.name}: renames column ${k.table}.${k.column} to ${k.to}${why}`);
          break;
        case 'drop-column':
          if (used(k.table, k.column)) out.push(`${f.name}: drops column ${k.table}.${k.column}${why}`);
          break;
        case 'retype-column':
          if (used(k.table, k.column)) out.push(`${f.name}: changes the type of ${k.table}.${k.column}${why}`);
          break;
        case 'set-not-null':
          if (used(k.table, k.column)) out.push(`${f.name}: makes ${k.table}.${k.column} NOT NULL, which release ${c.release} may leave empty: expand only, contract a release later (docs/deploy.md#upgrading)`);
          break;
        case 'add-required-column':
          if (used(k.table)) out.push(`${f.name}: adds ${k.table}.${k.column} NOT NULL without a default, so release ${c.release}'s inserts into ${k.table} fail: give it a default (docs/deploy.md#upgrading)`);
          break;
        default: {
          const never: never = k;
          throw new Error(`unknown contraction ${JSON.stringify(never)}`);
        }
      }
    }
  }
  return out;
}
