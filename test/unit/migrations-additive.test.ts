import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { RELEASE_VERSION } from '../../core/release';
import { MIGRATIONS_DIR } from '../../core/db/migrate';
import { previousRelease, readChangelog } from '../../local/release/changelog';
import { codeAtNames, filesAt } from '../../local/release/git';
import { additiveViolations, contractionsOf, loadSqlParser, schemaOf, type MigrationFile } from '../../local/release/migrations';

const ROOT = path.resolve(__dirname, '../..');

/** Migrations stay expand-only for one release (D-311, docs/deploy.md#upgrading). */
describe('migrations newer than the previous release keep what it reads', () => {
  const prev = previousRelease(readChangelog(ROOT), RELEASE_VERSION);
  const previous: MigrationFile[] = filesAt(ROOT, prev.commit!, 'db/migrations').map((f) => ({ name: f.name, sql: f.text }));
  const current: MigrationFile[] = readdirSync(MIGRATIONS_DIR)
    .filter((n) => n.endsWith('.sql'))
    .map((name) => ({ name, sql: readFileSync(path.join(MIGRATIONS_DIR, name), 'utf8') }));
  const reads = (word: string) => codeAtNames(ROOT, prev.commit!, word);
  const check = (extra: MigrationFile[], base = current) => additiveViolations({ previous, current: [...base, ...extra], reads, release: prev.version });
  beforeAll(() => loadSqlParser());

  it(`this checkout's migrations are additive over release ${prev.version}`, () => {
    expect(previous.length).toBeGreaterThan(0);
    expect(check([])).toEqual([]);
  });

  it("reads the previous release's schema from its migrations", () => {
    const schema = schemaOf(previous);
    expect([...schema.get('markets')!]).toEqual(expect.arrayContaining(['address', 'state']));
    // Added by a later ALTER TABLE (0010).
    expect(schema.get('dead_letters')!.has('resolved_at')).toBe(true);
  });

  it('fails naming the migration that drops, renames or retypes what the previous release reads', () => {
    const m = (sql: string): MigrationFile[] => [{ name: '9999_contract.sql', sql: `-- Up Migration\n${sql}\n-- Down Migration\nSELECT 1;\n` }];
    const why = `, which release ${prev.version} reads: expand only, contract a release later (docs/deploy.md#upgrading)`;
    expect(check(m('DROP TABLE IF EXISTS trades CASCADE;'))).toEqual([`9999_contract.sql line 2: drops table trades${why}`]);
    expect(check(m('ALTER TABLE markets DROP COLUMN state;'))).toEqual([`9999_contract.sql line 2: drops column markets.state${why}`]);
    expect(check(m('ALTER TABLE markets RENAME COLUMN state TO phase;'))).toEqual([`9999_contract.sql line 2: renames column markets.state to phase${why}`]);
    expect(check(m('ALTER TABLE orders RENAME TO book_orders;'))).toEqual([`9999_contract.sql line 2: renames table orders to book_orders${why}`]);
    expect(check(m('ALTER TABLE markets ALTER COLUMN state TYPE TEXT;'))).toEqual([`9999_contract.sql line 2: changes the type of markets.state${why}`]);
    expect(check(m("ALTER TABLE markets ADD COLUMN region TEXT NOT NULL, ADD COLUMN tier TEXT NOT NULL DEFAULT 'a';"))).toEqual([
      `9999_contract.sql line 2: adds markets.region NOT NULL without a default, so release ${prev.version}'s inserts into markets fail: give it a default (docs/deploy.md#upgrading)`,
    ]);
  });

  it('lets through what only expands, and a drop of what the previous release never had', () => {
    const m = (name: string, sql: string): MigrationFile => ({ name, sql: `-- Up Migration\n${sql}\n-- Down Migration\nDROP TABLE whatever;\n` });
    expect(
      check([
        m('9998_expand.sql', "CREATE TABLE example_never_released (id INT PRIMARY KEY, holder TEXT NOT NULL); ALTER TABLE markets ADD COLUMN region TEXT, ADD COLUMN tier TEXT NOT NULL DEFAULT 'a'; CREATE INDEX markets_region_idx ON markets (region);"),
        m('9999_contract_own.sql', 'ALTER TABLE example_never_released DROP COLUMN holder; DROP TABLE example_never_released; DROP INDEX markets_region_idx;'),
      ]),
    ).toEqual([]);
  });

  it("fails naming a migration of the previous release that was changed or removed", () => {
    const [first, ...rest] = current;
    expect(check([], [{ ...first!, sql: `${first!.sql}\n-- edited\n` }, ...rest])).toEqual([`${first!.name}: changed since release ${prev.version} applied it (write a new migration instead)`]);
    expect(check([], rest)).toEqual([`${first!.name}: removed, but release ${prev.version} applied it (a database it migrated records it)`]);
  });

  it('reads SQL as statements: comments, quoted semicolons and the Down part aside', () => {
    expect(contractionsOf("-- Up Migration\nCOMMENT ON TABLE t IS 'a; DROP TABLE x'; -- DROP TABLE y;\nALTER TABLE t ALTER COLUMN c SET NOT NULL, DROP CONSTRAINT k;\n-- Down Migration\nDROP TABLE t;\n")).toEqual([
      { kind: 'set-not-null', table: 't', column: 'c', line: 3, statement: 'ALTER TABLE t ALTER COLUMN c SET NOT NULL, DROP CONSTRAINT k' },
    ]);
  });
  const m = (sql: string): MigrationFile[] => [{ name: '9999_contract.sql', sql: `-- Up Migration\n${sql}\n-- Down Migration\nSELECT 1;\n` }];
  const refuses = `, so release ${prev.version}'s writes to it can fail: expand only, contract a release later (docs/deploy.md#upgrading)`;

  it("fails naming what makes the previous release's writes fail: a dropped default, a constraint, a unique index, a dropped schema", () => {
    expect(check(m('ALTER TABLE markets ALTER COLUMN total_trades DROP DEFAULT;'))).toEqual([
      `9999_contract.sql line 2: drops the default of markets.total_trades, so release ${prev.version}'s inserts into markets that leave it out store NULL or fail: expand only, contract a release later (docs/deploy.md#upgrading)`,
    ]);
    expect(check(m('ALTER TABLE markets ADD CONSTRAINT markets_early CHECK (state < 3) NOT VALID;'))).toEqual([`9999_contract.sql line 2: adds constraint CHECK markets_early to markets${refuses}`]);
    expect(check(m('ALTER TABLE trades ADD UNIQUE (market_address);'))).toEqual([`9999_contract.sql line 2: adds constraint UNIQUE to trades${refuses}`]);
    expect(check(m('\n\nCREATE UNIQUE INDEX CONCURRENTLY trades_once ON trades (market_address);'))).toEqual([`9999_contract.sql line 4: adds unique index trades_once on trades${refuses}`]);
    expect(check(m("ALTER TABLE markets ADD COLUMN slot_hint INT UNIQUE DEFAULT 0;"))).toEqual([
      `9999_contract.sql line 2: adds markets.slot_hint unique with a default, so release ${prev.version}'s second insert into markets collides: expand only, contract a release later (docs/deploy.md#upgrading)`,
    ]);
    expect(check(m('DROP SCHEMA IF EXISTS public CASCADE;'))).toEqual([`9999_contract.sql line 2: drops schema public and everything in it, which release ${prev.version} reads: expand only, contract a release later (docs/deploy.md#upgrading)`]);
  });

  it('reads dollar-quoted bodies whole: an inner semicolon ends nothing', () => {
    // A new function whose body mentions a drop: not a drop (the old splitter saw `DROP TABLE trades`).
    expect(check(m('CREATE FUNCTION example_noop() RETURNS void LANGUAGE sql AS $f$ SELECT 1; DROP TABLE trades; $f$;'))).toEqual([]);
    // A DO block can do anything: unclassified, named by its line, even with `;` and `$$` inside.
    const out = check(m("-- a comment — with a multi-byte dash\nDO $body$ BEGIN EXECUTE 'ALTER TABLE markets DROP COLUMN state'; END $body$;"));
    expect(out).toEqual([expect.stringMatching(/^9999_contract\.sql line 3: the release check cannot tell what this does to release .* \(DoStmt\): "DO \$body\$ BEGIN EXECUTE/)]);
  });

  it('fails on any statement it cannot classify, naming the file and line', () => {
    expect(check(m('CREATE TABLE example_never_released (id INT);\nALTER TABLE markets ENABLE ROW LEVEL SECURITY;\nTRUNCATE trades;'))).toEqual([
      expect.stringMatching(/^9999_contract\.sql line 3: .*\(ALTER TABLE markets EnableRowSecurity\): "ALTER TABLE markets ENABLE ROW LEVEL SECURITY"/),
      expect.stringMatching(/^9999_contract\.sql line 4: .*\(TruncateStmt\): "TRUNCATE trades"/),
    ]);
    expect(check(m('SELECT 1;\nALTER TABLE markets FROBNICATE;'))).toEqual([expect.stringMatching(/^9999_contract\.sql line 3: PostgreSQL would refuse it: syntax error at or near "FROBNICATE"/)]);
  });

  it('counts a column as read when only SQL kept in the database (a function of the previous release) reads it', () => {
    const fn: MigrationFile = {
      name: '0010_zz_example_function.sql',
      sql: '-- Up Migration\nCREATE TABLE example_fn_source (id INT, example_sql_only INT);\nCREATE FUNCTION example_fn() RETURNS INT LANGUAGE plpgsql AS $$ BEGIN RETURN (SELECT max(example_sql_only) FROM example_fn_source); END $$;\n',
    };
    const out = additiveViolations({ previous: [...previous, fn], current: [...current, fn, ...m('ALTER TABLE example_fn_source DROP COLUMN example_sql_only;')], reads, release: prev.version });
    expect(out).toEqual([`9999_contract.sql line 2: drops column example_fn_source.example_sql_only, which release ${prev.version} reads: expand only, contract a release later (docs/deploy.md#upgrading)`]);
  });

  it('classifies every statement of every shipped migration', () => {
    for (const f of current) expect({ file: f.name, unclassified: contractionsOf(f.sql, f.name).filter((k) => k.kind === 'unclassified') }).toEqual({ file: f.name, unclassified: [] });
  });
});
