import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { RELEASE_VERSION } from '../../core/release';
import { MIGRATIONS_DIR } from '../../core/db/migrate';
import { previousRelease, readChangelog } from '../../local/release/changelog';
import { codeAtNames, filesAt } from '../../local/release/git';
import { additiveViolations, contractionsOf, schemaOf, type MigrationFile } from '../../local/release/migrations';

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
    expect(check(m('DROP TABLE IF EXISTS trades CASCADE;'))).toEqual([`9999_contract.sql: drops table trades${why}`]);
    expect(check(m('ALTER TABLE markets DROP COLUMN state;'))).toEqual([`9999_contract.sql: drops column markets.state${why}`]);
    expect(check(m('ALTER TABLE markets RENAME COLUMN state TO phase;'))).toEqual([`9999_contract.sql: renames column markets.state to phase${why}`]);
    expect(check(m('ALTER TABLE orders RENAME TO book_orders;'))).toEqual([`9999_contract.sql: renames table orders to book_orders${why}`]);
    expect(check(m('ALTER TABLE markets ALTER COLUMN state TYPE TEXT;'))).toEqual([`9999_contract.sql: changes the type of markets.state${why}`]);
    expect(check(m("ALTER TABLE markets ADD COLUMN region TEXT NOT NULL, ADD COLUMN tier TEXT NOT NULL DEFAULT 'a';"))).toEqual([
      `9999_contract.sql: adds markets.region NOT NULL without a default, so release ${prev.version}'s inserts into markets fail: give it a default (docs/deploy.md#upgrading)`,
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
      { kind: 'set-not-null', table: 't', column: 'c' },
    ]);
  });
});
