// `npm run generate`: rewrites every file derived from a catalog in code (scripts/generated).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { GENERATED_FILES, ROOT } from './generated';

let changed = 0;
for (const file of GENERATED_FILES) {
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
