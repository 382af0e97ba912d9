import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../../scripts/generated';
import { headingAnchor } from '../../scripts/generated/decisions-index';

// Every relative link of the documents a reader clicks through resolves: the file (or folder)
// exists, and an anchor names a heading of the target as GitHub makes it (github-slugger's
// rules, a repeated heading getting -1, -2, ...).

const DOCS = ['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md', 'charts/market-indexer/README.md'];
const walk = (dir: string): string[] =>
  readdirSync(path.join(ROOT, dir)).flatMap((n) => {
    const p = `${dir}/${n}`;
    return statSync(path.join(ROOT, p)).isDirectory() ? walk(p) : p.endsWith('.md') ? [p] : [];
  });
const FILES = [...DOCS, ...walk('docs')];

/** The text outside fenced code blocks. */
const prose = (text: string) => text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');

const cache = new Map<string, Set<string>>();
const anchorsOfFile = (file: string) => cache.get(file) ?? cache.set(file, anchorsOf(readFileSync(file, 'utf8'))).get(file)!;

/** The anchors of a Markdown file's headings (and explicit `<a id>`s). */
export function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of prose(text).matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const heading = m[1]!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/\*\*|__/g, '');
    const base = headingAnchor(heading);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const m of text.matchAll(/<a (?:id|name)="([^"]+)"/g)) out.add(m[1]!);
  return out;
}

/** The relative link targets of a Markdown text (inline links, outside code). */
export function linksOf(text: string): string[] {
  const noCode = prose(text).replace(/`[^`\n]*`/g, '');
  return [...noCode.matchAll(/\]\(([^)\s]+)(?: "[^"]*")?\)/g)].map((m) => m[1]!).filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t));
}

describe('relative links and anchors in the docs resolve', () => {
  it('finds the documents', () => {
    expect(FILES).toEqual(expect.arrayContaining(['README.md', 'docs/README.md', 'docs/decisions.md']));
    for (const f of DOCS) expect(existsSync(path.join(ROOT, f))).toBe(true);
  });

  it.each(FILES)('%s', (file) => {
    const text = readFileSync(path.join(ROOT, file), 'utf8');
    const broken: string[] = [];
    for (const link of linksOf(text)) {
      const [target, anchor] = link.split('#') as [string, string | undefined];
      const resolved = target ? path.join(path.dirname(path.join(ROOT, file)), decodeURI(target)) : path.join(ROOT, file);
      if (!existsSync(resolved)) {
        broken.push(`${link}: no such file`);
        continue;
      }
      if (anchor === undefined || anchor === '') continue;
      if (!resolved.endsWith('.md')) {
        if (!/^L\d+(-L\d+)?$/.test(anchor)) broken.push(`${link}: an anchor into a file that is not Markdown`);
        continue;
      }
      if (!anchorsOfFile(resolved).has(anchor)) broken.push(`${link}: no heading with that anchor`);
    }
    expect(broken).toEqual([]);
  });

  it('anchors follow GitHub: code spans, punctuation and repeats', () => {
    expect([...anchorsOf('# A `b/c` (2.2)\n## x\n## x\n### D-4 maker_side (2.8)')]).toEqual(['a-bc-22', 'x', 'x-1', 'd-4-maker_side-28']);
  });
});
