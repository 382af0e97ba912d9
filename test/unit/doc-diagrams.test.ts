import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../../scripts/generated';

// Every ```mermaid block of the documents parses with Mermaid's own parser (GitHub renders
// these blocks with Mermaid; one that does not parse shows as an error box). Mermaid is an ES
// module that wants a DOM, so the parse runs in a child Node process with jsdom (D-290).

const walk = (dir: string): string[] =>
  readdirSync(path.join(ROOT, dir)).flatMap((n) => {
    const p = `${dir}/${n}`;
    return statSync(path.join(ROOT, p)).isDirectory() ? walk(p) : p.endsWith('.md') ? [p] : [];
  });
const FILES = ['README.md', 'CONTRIBUTING.md', 'charts/market-indexer/README.md', ...walk('docs')];

const diagrams = FILES.flatMap((file) =>
  [...readFileSync(path.join(ROOT, file), 'utf8').matchAll(/^```mermaid\n([\s\S]*?)^```$/gm)].map((m, i) => ({ where: `${file} #${i + 1}`, text: m[1]! })),
);

const parse = (texts: string[]): (string | null)[] =>
  JSON.parse(execFileSync(process.execPath, [path.join(ROOT, 'test/support/mermaid-parse.mjs')], { input: JSON.stringify(texts), encoding: 'utf8' })) as (string | null)[];

describe('the Mermaid diagrams of the docs parse', () => {
  it('has the diagrams the docs promise: data flow, a tenant, the /tx loop, the reconcile', () => {
    const where = diagrams.map((d) => d.where.split(' ')[0]);
    for (const f of ['README.md', 'docs/architecture.md', 'docs/deploy.md', 'docs/api.md', 'docs/operator.md']) expect(where).toContain(f);
  });

  it('each parses, and the parser refuses a broken one', () => {
    const results = parse([...diagrams.map((d) => d.text), 'flowchart LR\n  a -->']);
    expect(results.pop()).toMatch(/Parse error/);
    expect(diagrams.map((d, i) => [d.where, results[i]]).filter(([, r]) => r !== null)).toEqual([]);
  });
});
