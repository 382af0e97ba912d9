import { execFileSync, spawnSync } from 'node:child_process';

/** What the release tooling reads of the repository's history, through git itself. */

export const git = (root: string, args: string[]): string => execFileSync('git', args, { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });

/** The full hash of a commit (or tag, or abbreviation) of this history. */
export const resolveCommit = (root: string, rev: string): string => git(root, ['rev-parse', '--verify', `${rev}^{commit}`]).trim();

/** The files directly under `dir` at `commit`, with their text. */
export function filesAt(root: string, commit: string, dir: string): { name: string; text: string }[] {
  return git(root, ['ls-tree', '--name-only', `${commit}:${dir}`])
    .split('\n')
    .filter(Boolean)
    .map((name) => ({ name, text: git(root, ['show', `${commit}:${dir}/${name}`]) }));
}

/**
 * Whether the product code at `commit` (TypeScript outside tests and migrations) names `word`
 * as a whole word, in any case: how the release tooling decides a release reads a table or column.
 */
export function codeAtNames(root: string, commit: string, word: string): boolean {
  const r = spawnSync('git', ['grep', '-q', '-i', '-w', '-F', '-e', word, commit, '--', '*.ts', ':(exclude)test/**', ':(exclude)db/**'], { cwd: root });
  if (r.status === 0) return true;
  if (r.status === 1) return false;
  throw new Error(`git grep ${word} at ${commit} failed: ${r.stderr.toString().trim()}`);
}
