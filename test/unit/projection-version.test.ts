import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { TableDef } from '../../core/db/table';
import { PROJECTED } from '../../core/db/tables';
import { PROJECTION_HISTORY, PROJECTION_MECHANICS, PROJECTION_STEPS, PROJECTION_VERSION } from '../../core/db/projection-version';
import { canonicalSource, checkFingerprint, projectionFingerprint } from '../support/projection-fingerprint';

const TABLES: TableDef[] = Object.values(PROJECTED);
const ROOT = path.resolve(__dirname, '../..');

describe('the projection version (core/db/projection-version.ts) follows the descriptors and the projection steps', () => {
  const current = projectionFingerprint(TABLES, PROJECTION_STEPS);

  it('the current descriptors and steps have an accepted fingerprint under the current version', () => {
    const verdict = checkFingerprint(current, PROJECTION_VERSION, PROJECTION_HISTORY);
    if (verdict) throw new Error(verdict);
  });

  it('the history only grows: versions start at 1 and rise by one, each entry says what changed, fingerprints are unique', () => {
    expect(PROJECTION_HISTORY[0]!.version).toBe(1);
    PROJECTION_HISTORY.forEach((h, i) => {
      const prev = PROJECTION_HISTORY[i - 1];
      if (prev) expect([prev.version, prev.version + 1]).toContain(h.version);
      expect(h.fingerprint).toMatch(/^[0-9a-f]{16}$/);
      expect(h.change.length).toBeGreaterThan(10);
    });
    expect(new Set(PROJECTION_HISTORY.map((h) => h.fingerprint)).size).toBe(PROJECTION_HISTORY.length);
  });

  it('every file of indexer/projection is either a step or mechanics, and every listed file exists', () => {
    const files = readdirSync(path.join(ROOT, 'indexer/projection')).filter((f) => f.endsWith('.ts')).map((f) => `indexer/projection/${f}`).sort();
    const listed = [...PROJECTION_STEPS, ...PROJECTION_MECHANICS].filter((f) => f.startsWith('indexer/projection/'));
    expect(listed.length).toBe(new Set(listed).size);
    expect([...listed].sort()).toEqual(files);
    for (const f of PROJECTION_STEPS) expect(() => canonicalSource(f)).not.toThrow();
  });

  it('a changed column, a changed step or a new step changes the fingerprint; a comment or a reformat does not', () => {
    const read = (f: string) => canonicalSource(f);
    const base = projectionFingerprint(TABLES, PROJECTION_STEPS, read);
    // A column made nullable.
    const [first, ...rest] = TABLES;
    const nullableFirst = { ...first!, columns: { ...first!.columns, [first!.props[1]!]: { ...first!.columns[first!.props[1]!]!, nullable: true } } };
    expect(projectionFingerprint([nullableFirst, ...rest], PROJECTION_STEPS, read)).not.toBe(base);
    // A step whose code changed, and one whose comments and layout changed only.
    const settle = 'indexer/projection/settle.ts';
    const edited = (f: string, edit: (s: string) => string) => (x: string) => (x === f ? canonicalSource(f, edit(readFileSync(path.join(ROOT, f), 'utf8'))) : read(x));
    expect(projectionFingerprint(TABLES, PROJECTION_STEPS, edited(settle, (s) => s.replace(/\/ 2n/, '/ 3n')))).not.toBe(base);
    expect(projectionFingerprint(TABLES, PROJECTION_STEPS, edited(settle, (s) => `// a new comment\n${s.replace(/\n/g, '\n\n')}`))).toBe(base);
    expect(projectionFingerprint(TABLES, [...PROJECTION_STEPS, 'indexer/projection/slices.ts'], read)).not.toBe(base);
  });

  it('a changed fingerprint fails with both ways out, each with the entry to append', () => {
    const history = [{ version: 1, fingerprint: 'aaaaaaaaaaaaaaaa', change: 'the first projection' }];
    expect(checkFingerprint('aaaaaaaaaaaaaaaa', 1, history)).toBeNull();
    const msg = checkFingerprint('bbbbbbbbbbbbbbbb', 1, history)!;
    expect(msg).toContain("set PROJECTION_VERSION to 2 and append\n    { version: 2, fingerprint: 'bbbbbbbbbbbbbbbb'");
    expect(msg).toContain("append under the current version\n    { version: 1, fingerprint: 'bbbbbbbbbbbbbbbb'");
    // Bumped without its entry.
    expect(checkFingerprint('bbbbbbbbbbbbbbbb', 2, history)).toContain('PROJECTION_VERSION is 2 but the last entry');
    // An older version's fingerprint (a change reverted after the bump) is not the current version's.
    expect(checkFingerprint('aaaaaaaaaaaaaaaa', 2, [...history, { version: 2, fingerprint: 'cccccccccccccccc', change: 'a new column' }])).toContain('is not in PROJECTION_HISTORY');
  });
});
