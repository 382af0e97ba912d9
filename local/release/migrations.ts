import { lastName, parseStatements, relationName, upPart, type Ast, type Statement } from './sql';

export { loadSqlParser, upPart } from './sql';

/**
 * Migrations stay expand-only for one release (D-311, docs/deploy.md#upgrading): during a rollout
 * the previous release's pods run on the newer schema, and a rollback runs that release on it for
 * good. So a migration newer than the previous release must not drop, rename or retype what that
 * release reads, nor make one of its tables refuse the rows it writes (a NOT NULL column without a
 * default, a default dropped, a constraint, a unique index or a trigger added). The contract step
 * comes a release later, once no release in service reads the thing any more. Each statement of
 * the "Up Migration" part (what node-pg-migrate runs), parsed by PostgreSQL's own parser, is
 * either an expansion, a contraction, or unclassified, and an unclassified one fails the check
 * (D-458): a statement it cannot tell about is never taken as safe.
 */

export interface MigrationFile {
  /** The file name, e.g. `0011_lease.sql`. */
  name: string;
  sql: string;
}

type Effect =
  | { kind: 'drop'; object: 'table' | 'view' | 'function' | 'domain' | 'type' | 'sequence' | 'schema'; name: string }
  | { kind: 'replace'; object: 'function' | 'view'; name: string }
  | { kind: 'rename-table'; table: string; to: string }
  | { kind: 'drop-column' | 'retype-column' | 'set-not-null' | 'drop-default'; table: string; column: string }
  | { kind: 'rename-column'; table: string; column: string; to: string }
  | { kind: 'add-required-column' | 'add-unique-column'; table: string; column: string }
  | { kind: 'add-constraint'; table: string; constraint: string }
  | { kind: 'add-unique-index'; table: string; index: string }
  | { kind: 'add-trigger'; table: string; trigger: string }
  | { kind: 'unclassified'; what: string };

/** What one statement takes away or tightens, with the line it starts on. */
export type Contraction = Effect & { line: number; statement: string };

const DROPPED: Record<string, Extract<Effect, { kind: 'drop' }>['object']> = {
  OBJECT_TABLE: 'table', OBJECT_VIEW: 'view', OBJECT_MATVIEW: 'view', OBJECT_FUNCTION: 'function', OBJECT_PROCEDURE: 'function',
  OBJECT_DOMAIN: 'domain', OBJECT_TYPE: 'type', OBJECT_SEQUENCE: 'sequence', OBJECT_SCHEMA: 'schema',
};
/** Dropped without harm to a release that reads the table: an index only changes how fast (see D-458 on unique ones). */
const DROPPED_HARMLESS = new Set(['OBJECT_INDEX']);
const CONSTRAINT: Record<string, string> = {
  CONSTR_CHECK: 'CHECK', CONSTR_UNIQUE: 'UNIQUE', CONSTR_PRIMARY: 'PRIMARY KEY', CONSTR_FOREIGN: 'FOREIGN KEY', CONSTR_EXCLUSION: 'EXCLUDE', CONSTR_NOTNULL: 'NOT NULL',
};
/** ALTER TABLE actions that neither take away nor tighten anything a release reads or writes. */
const ALTER_EXPANDS = new Set([
  'AT_DropConstraint', 'AT_DropNotNull', 'AT_ValidateConstraint', 'AT_SetStatistics', 'AT_SetStorage', 'AT_SetCompression', 'AT_SetRelOptions',
  'AT_ResetRelOptions', 'AT_SetOptions', 'AT_ResetOptions', 'AT_ClusterOn', 'AT_DropCluster', 'AT_ReplicaIdentity', 'AT_SetLogged', 'AT_SetUnLogged',
]);
/** Whole statements that only add (objects, rows, comments) or set a session's parameter. */
const EXPANDS = new Set(['CreateStmt', 'CreateDomainStmt', 'CreateSeqStmt', 'CreateSchemaStmt', 'CreateExtensionStmt', 'CommentStmt', 'InsertStmt', 'UpdateStmt', 'VariableSetStmt']);

const constraintsOf = (col: Ast): Ast[] => (col.constraints ?? []).map((c: Ast) => c.Constraint as Ast);

function alterEffects(table: string, cmd: Ast): Effect[] {
  const col = String(cmd.name ?? '').toLowerCase();
  switch (cmd.subtype) {
    case 'AT_AddColumn': {
      const def = cmd.def.ColumnDef as Ast;
      const column = String(def.colname).toLowerCase();
      const types = constraintsOf(def).map((c) => String(c.contype));
      const filled = types.some((t) => t === 'CONSTR_DEFAULT' || t === 'CONSTR_IDENTITY' || t === 'CONSTR_GENERATED') || /^(small|big)?serial\d?$/.test(lastName(def.typeName?.names));
      const out: Effect[] = [];
      if ((types.includes('CONSTR_NOTNULL') || types.includes('CONSTR_PRIMARY')) && !filled) out.push({ kind: 'add-required-column', table, column });
      // Every existing and every later row of the older release gets the same default: the second one collides.
      if ((types.includes('CONSTR_UNIQUE') || types.includes('CONSTR_PRIMARY')) && filled) out.push({ kind: 'add-unique-column', table, column });
      return out;
    }
    case 'AT_DropColumn':
      return [{ kind: 'drop-column', table, column: col }];
    case 'AT_AlterColumnType':
      return [{ kind: 'retype-column', table, column: col }];
    case 'AT_SetNotNull':
      return [{ kind: 'set-not-null', table, column: col }];
    case 'AT_ColumnDefault':
      return cmd.def ? [] : [{ kind: 'drop-default', table, column: col }];
    case 'AT_AddConstraint': {
      const c = cmd.def.Constraint as Ast;
      const name = CONSTRAINT[String(c.contype)];
      return name ? [{ kind: 'add-constraint', table, constraint: c.conname ? `${name} ${c.conname}` : name }] : [{ kind: 'unclassified', what: `ALTER TABLE ${table} ADD ${c.contype}` }];
    }
    case 'AT_AddIndexConstraint':
    case 'AT_AddIndex':
      return [{ kind: 'add-constraint', table, constraint: 'UNIQUE' }];
    default:
      return ALTER_EXPANDS.has(cmd.subtype) ? [] : [{ kind: 'unclassified', what: `ALTER TABLE ${table} ${String(cmd.subtype).replace(/^AT_/, '')}` }];
  }
}

/** What one statement does to what a release before it reads or writes; nothing when it only expands. */
function effectsOf(s: Statement): Effect[] {
  const n = s.node;
  switch (s.kind) {
    case 'AlterTableStmt':
      if (n.objtype !== 'OBJECT_TABLE') break;
      return (n.cmds as Ast[]).flatMap((c) => alterEffects(relationName(n.relation), c.AlterTableCmd as Ast));
    case 'RenameStmt':
      if (n.renameType === 'OBJECT_TABLE') return [{ kind: 'rename-table', table: relationName(n.relation), to: String(n.newname).toLowerCase() }];
      if (n.renameType === 'OBJECT_COLUMN' && n.relationType === 'OBJECT_TABLE')
        return [{ kind: 'rename-column', table: relationName(n.relation), column: String(n.subname).toLowerCase(), to: String(n.newname).toLowerCase() }];
      if (n.renameType === 'OBJECT_INDEX') return [];
      break;
    case 'DropStmt': {
      if (DROPPED_HARMLESS.has(n.removeType)) return [];
      const object = DROPPED[String(n.removeType)];
      if (!object) break;
      return (n.objects as Ast[]).map((o) => {
        const names: Ast[] = o.List?.items ?? o.ObjectWithArgs?.objname ?? o.TypeName?.names ?? [o];
        return { kind: 'drop', object, name: object === 'table' || object === 'view' ? relationName({ relname: lastName(names), schemaname: names.length > 1 ? names[0]!.String?.sval : undefined }) : lastName(names) };
      });
    }
    case 'IndexStmt':
      return n.unique ? [{ kind: 'add-unique-index', table: relationName(n.relation), index: String(n.idxname ?? '(unnamed)') }] : [];
    case 'CreateFunctionStmt':
      return n.replace ? [{ kind: 'replace', object: 'function', name: lastName(n.funcname) }] : [];
    case 'ViewStmt':
      return n.replace ? [{ kind: 'replace', object: 'view', name: relationName(n.view) }] : [];
    case 'CreateTrigStmt':
      return [{ kind: 'add-trigger', table: relationName(n.relation), trigger: String(n.trigname) }];
    case 'GrantStmt':
      if (n.is_grant) return [];
      break;
    default:
      if (EXPANDS.has(s.kind)) return [];
  }
  return [{ kind: 'unclassified', what: s.kind }];
}

/** The statements of a migration's Up part, naming its file and lines. */
export const migrationStatements = (f: MigrationFile): Statement[] => parseStatements(upPart(f.sql), f.name);

/** What one migration takes away or tightens, statement by statement (unclassified statements included). */
export function contractionsOf(sql: string, file = 'migration'): Contraction[] {
  return parseStatements(upPart(sql), file).flatMap((s) => effectsOf(s).map((e) => ({ ...e, line: s.line, statement: s.text })));
}

/** The tables and their columns a sequence of migrations leaves (CREATE TABLE, ADD COLUMN, renames, drops). */
export function schemaOf(files: MigrationFile[]): Map<string, Set<string>> {
  const tables = new Map<string, Set<string>>();
  for (const s of files.flatMap(migrationStatements)) {
    const n = s.node;
    if (s.kind === 'CreateStmt') {
      const cols = (n.tableElts ?? []).filter((e: Ast) => e.ColumnDef).map((e: Ast) => String(e.ColumnDef.colname).toLowerCase());
      tables.set(relationName(n.relation), new Set(cols));
    } else if (s.kind === 'AlterTableStmt') {
      const cols = tables.get(relationName(n.relation));
      for (const { AlterTableCmd: c } of n.cmds as Ast[]) {
        if (c.subtype === 'AT_AddColumn') cols?.add(String(c.def.ColumnDef.colname).toLowerCase());
        if (c.subtype === 'AT_DropColumn') cols?.delete(String(c.name).toLowerCase());
      }
    } else if (s.kind === 'RenameStmt' && n.renameType === 'OBJECT_TABLE') {
      const cols = tables.get(relationName(n.relation));
      tables.delete(relationName(n.relation));
      if (cols) tables.set(String(n.newname).toLowerCase(), cols);
    } else if (s.kind === 'RenameStmt' && n.renameType === 'OBJECT_COLUMN') {
      const cols = tables.get(relationName(n.relation));
      if (cols?.delete(String(n.subname).toLowerCase())) cols.add(String(n.newname).toLowerCase());
    } else if (s.kind === 'DropStmt' && n.removeType === 'OBJECT_TABLE') {
      for (const o of n.objects as Ast[]) tables.delete(relationName({ relname: lastName(o.List?.items) }));
    }
  }
  return tables;
}

/** Statements that stay in the database and run later: what they name, a release's SQL reads. */
const KEPT = new Set(['CreateFunctionStmt', 'ViewStmt', 'CreateTableAsStmt', 'CreateTrigStmt', 'RuleStmt', 'CreatePolicyStmt']);

/**
 * The words (names) that SQL kept in the database by these migrations reads when it runs:
 * function bodies, views, triggers, rules, policies. A column only such SQL reads is read by the
 * release as surely as one its TypeScript names.
 */
export function sqlReads(files: MigrationFile[]): Set<string> {
  const words = new Set<string>();
  for (const s of files.flatMap(migrationStatements)) if (KEPT.has(s.kind)) for (const w of s.text.toLowerCase().match(/[a-z_][a-z0-9_$]*/g) ?? []) words.add(w);
  return words;
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

/** Every way the current migrations break the previous release, one line each naming the migration and the statement's line. */
export function additiveViolations(c: AdditiveCheck): string[] {
  const out: string[] = [];
  const before = new Map(c.previous.map((f) => [f.name, f.sql]));
  for (const [name, sql] of before) {
    const now = c.current.find((f) => f.name === name);
    if (!now) out.push(`${name}: removed, but release ${c.release} applied it (a database it migrated records it)`);
    else if (now.sql !== sql) out.push(`${name}: changed since release ${c.release} applied it (write a new migration instead)`);
  }
  const schema = schemaOf(c.previous);
  const inSql = sqlReads(c.previous);
  const reads = (word: string) => inSql.has(word) || c.reads(word);
  const has = (table: string) => schema.has(table);
  const used = (table: string, column?: string) => has(table) && (column === undefined ? reads(table) : schema.get(table)!.has(column) && reads(column));
  const schemas = new Set(['public', ...c.previous.flatMap(migrationStatements).filter((s) => s.kind === 'CreateSchemaStmt').map((s) => String(s.node.schemaname).toLowerCase())]);
  const rel = c.release;
  const why = `, which release ${rel} reads: expand only, contract a release later (docs/deploy.md#upgrading)`;
  const refuses = `, so release ${rel}'s writes to it can fail: expand only, contract a release later (docs/deploy.md#upgrading)`;
  for (const f of c.current.filter((x) => !before.has(x.name)).sort((a, b) => a.name.localeCompare(b.name))) {
    let found: Contraction[];
    try {
      found = contractionsOf(f.sql, f.name);
    } catch (e) {
      out.push((e as Error).message);
      continue;
    }
    for (const k of found) {
      const at = `${f.name} line ${k.line}`;
      switch (k.kind) {
        case 'drop':
          if (k.object === 'schema' ? schemas.has(k.name) || reads(k.name) : k.object === 'table' || k.object === 'view' ? used(k.name) : reads(k.name))
            out.push(`${at}: drops ${k.object} ${k.name}${k.object === 'schema' ? ' and everything in it' : ''}${why}`);
          break;
        case 'replace':
          if (k.object === 'view' ? used(k.name) : reads(k.name)) out.push(`${at}: replaces ${k.object} ${k.name}${why}`);
          break;
        case 'rename-table':
          if (used(k.table)) out.push(`${at}: renames table ${k.table} to ${k.to}${why}`);
          break;
        case 'rename-column':
          if (used(k.table, k.column)) out.push(`${at}: renames column ${k.table}.${k.column} to ${k.to}${why}`);
          break;
        case 'drop-column':
          if (used(k.table, k.column)) out.push(`${at}: drops column ${k.table}.${k.column}${why}`);
          break;
        case 'retype-column':
          if (used(k.table, k.column)) out.push(`${at}: changes the type of ${k.table}.${k.column}${why}`);
          break;
        case 'set-not-null':
          if (used(k.table, k.column)) out.push(`${at}: makes ${k.table}.${k.column} NOT NULL, which release ${rel} may leave empty: expand only, contract a release later (docs/deploy.md#upgrading)`);
          break;
        // An insert that leaves a column out takes its default: the column need not be named to be written.
        case 'drop-default':
          if (has(k.table) && reads(k.table)) out.push(`${at}: drops the default of ${k.table}.${k.column}, so release ${rel}'s inserts into ${k.table} that leave it out store NULL or fail: expand only, contract a release later (docs/deploy.md#upgrading)`);
          break;
        case 'add-required-column':
          if (used(k.table)) out.push(`${at}: adds ${k.table}.${k.column} NOT NULL without a default, so release ${rel}'s inserts into ${k.table} fail: give it a default (docs/deploy.md#upgrading)`);
          break;
        case 'add-unique-column':
          if (used(k.table)) out.push(`${at}: adds ${k.table}.${k.column} unique with a default, so release ${rel}'s second insert into ${k.table} collides: expand only, contract a release later (docs/deploy.md#upgrading)`);
          break;
        case 'add-constraint':
          if (used(k.table)) out.push(`${at}: adds constraint ${k.constraint} to ${k.table}${refuses}`);
          break;
        case 'add-unique-index':
          if (used(k.table)) out.push(`${at}: adds unique index ${k.index} on ${k.table}${refuses}`);
          break;
        case 'add-trigger':
          if (used(k.table)) out.push(`${at}: adds trigger ${k.trigger} on ${k.table}${refuses}`);
          break;
        case 'unclassified':
          out.push(`${at}: the release check cannot tell what this does to release ${rel} (${k.what}): "${k.statement.slice(0, 120)}"; write it as statements it classifies (local/release/migrations.ts) or extend it`);
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
