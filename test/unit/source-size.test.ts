/**
 * No hand-written source file over 450 lines (issue 32): past that a newcomer cannot take a file
 * in, and it has grown more than one subject. Generated and vendored files (.gitattributes
 * `linguist-generated`, `linguist-vendored`) are not counted: they are read by tools, not people.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const LIMIT = 450;
/** The languages the repository is written in: TypeScript, JavaScript (configuration, the k6 shims), shell. */
const SOURCE = /\.(ts|mts|cts|js|mjs|cjs|sh)$/;

/** Over the limit for now, with the reason: none (the last two were split, D-221 and D-235). */
const BEING_SPLIT: Record<string, string> = {};

interface SourceFile {
  path: string;
  lines: number;
  /** Marked generated or vendored in .gitattributes. */
  skipped: boolean;
}

/** Every source file of the checkout, committed or not (ignored ones aside), with git's reading of .gitattributes. */
function sourceFiles(): SourceFile[] {
  const git = (args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20 });
  const paths = [...new Set(git(['ls-files', '-z', '--cached', '--others', '--exclude-standard']).split('\0'))]
    .filter((p) => SOURCE.test(p) && existsSync(path.join(ROOT, p)));
  // `-z`: path, attribute, value, each ended by NUL.
  const fields = git(['check-attr', '-z', 'linguist-generated', 'linguist-vendored', '--', ...paths]).split('\0');
  const skipped = new Set<string>();
  for (let i = 0; i + 2 < fields.length; i += 3) if (fields[i + 2] === 'true' || fields[i + 2] === 'set') skipped.add(fields[i]!);
  return paths.map((p) => {
    const text = readFileSync(path.join(ROOT, p), 'utf8');
    // As `wc -l` counts them.
    const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    return { path: p, lines, skipped: skipped.has(p) };
  });
}

describe('source file size', () => {
  const files = sourceFiles();

  it(`no hand-written source file is over ${LIMIT} lines`, () => {
    const over = files.filter((f) => !f.skipped && !(f.path in BEING_SPLIT) && f.lines > LIMIT).map((f) => `${f.path}: ${f.lines} lines`);
    expect(over).toEqual([]);
  });

  it('counts every hand-written source file and skips exactly the generated ones', () => {
    expect(files.length).toBeGreaterThan(400);
    const byPath = new Map(files.map((f) => [f.path, f]));
    // Generated, and over the limit: skipped, which is what keeps the check above from failing on it.
    expect(byPath.get('cdk8s/imports/marketindexer.dev.ts')).toEqual({ path: 'cdk8s/imports/marketindexer.dev.ts', lines: expect.any(Number), skipped: true });
    expect(byPath.get('cdk8s/imports/marketindexer.dev.ts')!.lines).toBeGreaterThan(LIMIT);
    expect(byPath.get('charts/market-indexer/files/k6/lib.js')?.skipped).toBe(true);
    // Hand-written files of each language are counted.
    for (const p of ['core/config/settings.ts', 'scripts/complete-lock.mjs', 'jest.config.js', 'scripts/test.sh', 'test/unit/source-size.test.ts']) expect([p, byPath.get(p)?.skipped]).toEqual([p, false]);
    expect(byPath.get('test/unit/source-size.test.ts')!.lines).toBe(readFileSync(__filename, 'utf8').split('\n').length - 1);
  });
});
