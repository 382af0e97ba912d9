/**
 * Every benchmark runs the image's processes as the image runs them (issue 33): through
 * `spawnImage` (loadtest/bench/support.ts), which takes the entry point and node flags from
 * `IMAGE.commands`, never a hand-written `dist/...` path that would drop a flag such as the
 * indexer's semi-space size.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { IMAGE } from '../../core/constants';

const DIR = path.resolve(__dirname, '../../loadtest/bench');

describe('the benchmarks spawn the image processes from IMAGE.commands', () => {
  const entries = Object.values(IMAGE.commands).map((c) => c[c.length - 1]!);
  it.each(readdirSync(DIR).filter((f) => f.endsWith('.ts')))('%s names no entry point of the image', (file) => {
    // Comments may name them (another build's `dist/server/main.js`), the code may not.
    const text = readFileSync(path.join(DIR, file), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
    expect(entries.filter((e) => text.includes(e) || text.includes(e.replace(/^dist\//, '').replace(/\.js$/, '.ts')))).toEqual([]);
  });
});
