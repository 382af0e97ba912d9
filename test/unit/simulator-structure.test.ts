import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

/** Every .ts file under a folder of the repository, as repository-relative paths. */
function filesUnder(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir)).flatMap((name) => {
    const rel = path.posix.join(dir, name);
    if (statSync(path.join(ROOT, rel)).isDirectory()) return filesUnder(rel);
    return rel.endsWith('.ts') ? [rel] : [];
  });
}

/**
 * What a file imports, as repository-relative paths (relative specifiers only): static imports
 * and re-exports, `import(...)` and `require(...)`, type-only imports marked as such.
 */
function importsOf(file: string): { target: string; typeOnly: boolean }[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const found: { target: string; typeOnly: boolean }[] = [];
  const patterns = [/^\s*(import|export)\s+(type\s+)?[^'";]*?\sfrom\s+'(\.[^']+)'/gm, /\b(import|require)\((?:'|")(\.[^'"]+)(?:'|")\)/g];
  for (const m of text.matchAll(patterns[0]!)) found.push({ target: m[3]!, typeOnly: !!m[2] });
  for (const m of text.matchAll(patterns[1]!)) found.push({ target: m[2]!, typeOnly: false });
  return found.map((f) => ({ ...f, target: path.posix.normalize(path.posix.join(path.posix.dirname(file), f.target)) }));
}

const importers = (dir: string, target: (t: string) => boolean, opts: { runtimeOnly?: boolean } = {}) =>
  filesUnder(dir).flatMap((f) => importsOf(f).filter((i) => target(i.target) && !(opts.runtimeOnly && i.typeOnly)).map((i) => `${f} -> ${i.target}`));

describe('the simulated chain and who may depend on it', () => {
  it('sees imports of every form (the check can fail)', () => {
    expect(importsOf('indexer/main.ts').map((i) => i.target)).toContain('simulator/source');
    expect(importsOf('simulator/chain/chain.ts')).toEqual(expect.arrayContaining([{ target: 'simulator/chain/types', typeOnly: true }, { target: 'simulator/ids', typeOnly: false }]));
  });

  it('nothing under indexer/ imports simulator/ except the CLI that offers --source simulator (D-220)', () => {
    expect(importers('indexer', (t) => t.startsWith('simulator/')).filter((l) => !l.startsWith('indexer/main.ts '))).toEqual([]);
  });

  it('the chain knows nothing of markets: no program, traders, truth or market domain', () => {
    const market = (t: string) => /^simulator\/(program|traders)\//.test(t) || /^simulator\/(truth|simulation|source)$/.test(t) || t.startsWith('core/domain');
    expect(importers('simulator/chain', market)).toEqual([]);
  });

  it('the traders reach the program only through its interface, as clients do (its accounts they only read: types)', () => {
    expect(importers('simulator/traders', (t) => t.startsWith('simulator/program/') && t !== 'simulator/program/interface', { runtimeOnly: true })).toEqual([]);
  });

  it("the program's rules are in simulator/program/ alone: no fee, fill, settlement or order-validation code elsewhere in the simulator", () => {
    const rules = /\b(takerFee|splitFee|fillEffect|settlementPayout|resolveOutcome|orderPriceProblem|orderQuantityProblem)\b/;
    const outside = filesUnder('simulator').filter((f) => !f.startsWith('simulator/program/') && f !== 'simulator/truth.ts');
    expect(outside.filter((f) => rules.test(readFileSync(path.join(ROOT, f), 'utf8')))).toEqual([]);
  });

  it('keeps every simulator file under 300 lines', () => {
    const long = filesUnder('simulator')
      .map((f) => ({ f, lines: readFileSync(path.join(ROOT, f), 'utf8').split('\n').length }))
      .filter((x) => x.lines > 300);
    expect(long).toEqual([]);
  });
});
