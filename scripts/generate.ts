// `npm run generate [path prefix...]`: rewrites every file derived from a catalog in code
// (scripts/generated), or only those under the prefixes given (`npm run kit:import` is
// `generate cdk8s/imports/`).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgsOrExit } from '../core/cli';
import { GENERATED_FILES, ROOT } from './generated';

const USAGE = `usage: npm run generate [-- <path prefix>...]
  rewrites every file derived from a catalog in code (settings, metrics, alerts, schemas, the
  chart's generated parts, cdk8s/imports/), or only those under the prefixes given; prints what
  changed. npm test fails while a generated file is not current.`;

const only = parseArgsOrExit({ options: { help: { type: 'boolean' } }, allowPositionals: true, strict: true }, USAGE).positionals;
const files = GENERATED_FILES.filter((f) => only.length === 0 || only.some((prefix) => f.path.startsWith(prefix)));
if (files.length === 0) {
  process.stderr.write(`no generated file under ${only.join(', ')}\n`);
  process.exit(2);
}
let changed = 0;
for (const file of files) {
  const target = path.join(ROOT, file.path);
  const next = file.content();
  let current: string | undefined;
  try {
    current = readFileSync(target, 'utf8');
  } catch {
    current = undefined;
  }
  if (current === next) continue;
  mkdirSync(path.dirname(target), { recursive: true });
  writeFileSync(target, next);
  changed += 1;
  process.stdout.write(`wrote ${file.path} (from ${file.source})\n`);
}
process.stdout.write(changed ? `${changed} file(s) regenerated\n` : 'every generated file is current\n');
