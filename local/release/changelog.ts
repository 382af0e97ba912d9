import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * CHANGELOG.md as data (D-310): each `## [<version>] - <date or Unreleased>` entry with the
 * app's and the chart's versions and the commit it was cut from, as its first line states them:
 * App `0.1.0` · chart `0.1.0` · commit `014be83`
 */

export interface ChangelogEntry {
  version: string;
  /** `YYYY-MM-DD`, or undefined while the entry is Unreleased. */
  date?: string;
  app: string;
  chart: string;
  /** The commit the release was cut from; undefined while Unreleased. */
  commit?: string;
  /** The 1-based line of its heading, for messages. */
  line: number;
}

export class ChangelogError extends Error {
  override name = 'ChangelogError';
}

const HEADING = /^## \[(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)\] - (\d{4}-\d{2}-\d{2}|Unreleased)$/;
const FACTS = /^App `([^`]+)` · chart `([^`]+)` · commit(?: `([0-9a-f]{7,40})`|: not cut yet)$/;

/** The entries, newest first, as written; a malformed heading or facts line is refused by line. */
export function parseChangelog(text: string, file = 'CHANGELOG.md'): ChangelogEntry[] {
  const lines = text.split('\n');
  const entries: ChangelogEntry[] = [];
  lines.forEach((l, i) => {
    if (!l.startsWith('## ')) return;
    const h = HEADING.exec(l);
    if (!h) throw new ChangelogError(`${file} line ${i + 1}: expected "## [<semver>] - <YYYY-MM-DD or Unreleased>", got "${l}"`);
    const factsAt = lines.findIndex((x, j) => j > i && x.trim() !== '');
    const f = FACTS.exec(lines[factsAt] ?? '');
    if (!f) throw new ChangelogError(`${file} line ${factsAt + 1}: expected "App \`<version>\` · chart \`<version>\` · commit \`<hash>\`" under ${h[1]}`);
    const released = h[2] !== 'Unreleased';
    if (released !== (f[3] !== undefined)) throw new ChangelogError(`${file} line ${factsAt + 1}: ${h[1]} is ${released ? 'released but names no commit' : 'Unreleased but names a commit'}`);
    entries.push({ version: h[1]!, ...(released ? { date: h[2]! } : {}), app: f[1]!, chart: f[2]!, ...(f[3] ? { commit: f[3] } : {}), line: i + 1 });
  });
  return entries;
}

export function readChangelog(root: string): ChangelogEntry[] {
  return parseChangelog(readFileSync(path.join(root, 'CHANGELOG.md'), 'utf8'));
}

/** The newest released entry older than the version this checkout builds: what it upgrades from. */
export function previousRelease(entries: ChangelogEntry[], current: string): ChangelogEntry {
  const prev = entries.find((e) => e.commit !== undefined && e.version !== current);
  if (!prev) throw new ChangelogError(`CHANGELOG.md: no released entry before ${current}`);
  return prev as ChangelogEntry & { commit: string };
}
