import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(__dirname, '../..');
/** The hand-written product code (tests and the generated imports aside). */
const FOLDERS = ['core', 'db', 'embedded', 'indexer', 'simulator', 'server', 'operator', 'check', 'cdk8s/lib', 'observability', 'local', 'scripts', 'loadtest'];

function sources(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name)));
}

/** Every module's relative imports (type-only ones and re-exports included), resolved as tsc does. */
function importGraph(): Map<string, string[]> {
  const files = [...new Set(FOLDERS.flatMap(sources))].filter((f) => !f.startsWith('loadtest/k6/'));
  const graph = new Map<string, string[]>();
  const host = ts.sys;
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(path.join(ROOT, file), 'utf8'), true, true);
    const deps = importedFiles
      .filter((i) => i.fileName.startsWith('.'))
      .map((i) => ts.resolveModuleName(i.fileName, path.join(ROOT, file), { moduleResolution: ts.ModuleResolutionKind.Node10 }, host).resolvedModule?.resolvedFileName)
      .filter((f): f is string => f !== undefined)
      .map((f) => path.relative(ROOT, f));
    graph.set(file, deps);
  }
  return graph;
}

/** The import circles of a graph, each as the path that closes it. */
function cycles(graph: Map<string, string[]>): string[][] {
  const state = new Map<string, 'open' | 'done'>();
  const found: string[][] = [];
  const visit = (node: string, stack: string[]) => {
    state.set(node, 'open');
    stack.push(node);
    for (const dep of graph.get(node) ?? []) {
      if (state.get(dep) === 'open') found.push([...stack.slice(stack.indexOf(dep)), dep]);
      else if (!state.has(dep) && graph.has(dep)) visit(dep, stack);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node, []);
  return found;
}

describe('module graph', () => {
  const graph = importGraph();

  it('reads the imports of the whole tree', () => {
    expect(graph.size).toBeGreaterThan(200);
    expect(graph.get('cdk8s/lib/platform.ts')).toEqual(expect.arrayContaining(['cdk8s/lib/operator.ts', 'cdk8s/lib/names.ts']));
  });

  it('has no import circle (type-only imports count)', () => {
    expect(cycles(graph).map((c) => c.join(' → '))).toEqual([]);
    // The check finds one when there is one.
    expect(cycles(new Map([['a', ['b']], ['b', ['a']]]))).toEqual([['a', 'b', 'a']]);
  });

  it('product code imports nothing from test/ (what both need lives product-side)', () => {
    const upward = [...graph].flatMap(([f, deps]) => deps.filter((d) => d.startsWith('test/')).map((d) => `${f} → ${d}`));
    expect(upward).toEqual([]);
  });

  it('observability names objects from the shared catalog, not from the kit', () => {
    const kit = [...graph].filter(([f]) => f.startsWith('observability/')).flatMap(([f, deps]) => deps.filter((d) => d.startsWith('cdk8s/')).map((d) => `${f} → ${d}`));
    expect(kit).toEqual([]);
  });
});
