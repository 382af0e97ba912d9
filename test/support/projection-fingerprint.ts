import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import type { TableDef } from '../../core/db/table';

const ROOT = path.resolve(__dirname, '../..');

/**
 * A source as the code it is: comments dropped and layout normalised (printed back from its
 * syntax tree), so a reworded comment or a reformat does not ask for a re-index; JSON parsed and
 * printed back for the same reason.
 */
export function canonicalSource(file: string, text = readFileSync(path.join(ROOT, file), 'utf8')): string {
  if (file.endsWith('.json')) return JSON.stringify(JSON.parse(text));
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  return ts.createPrinter({ removeComments: true }).printFile(sf);
}

/** What a descriptor says about its table: name, columns in order with type and nullability, key. */
export const canonicalTable = (t: TableDef) => ({
  name: t.name,
  columns: t.props.map((p) => `${t.columnOf[p]} ${t.columns[p]!.sql}${t.columns[p]!.nullable ? ' null' : ''}`),
  key: t.key?.map((p) => t.columnOf[p]) ?? null,
});

/** sha256 (first 16 hex digits) of the projected tables' descriptors and the projection's step sources. */
export function projectionFingerprint(tables: readonly TableDef[], steps: readonly string[], read: (file: string) => string = (f) => canonicalSource(f)): string {
  const h = createHash('sha256');
  h.update(JSON.stringify(tables.map(canonicalTable)));
  for (const file of [...steps].sort()) h.update(`\0${file}\0${read(file)}`);
  return h.digest('hex').slice(0, 16);
}

const FILE = 'core/db/projection-version.ts';

/**
 * What a developer must do when the fingerprint is not accepted: both ways, with the entry to
 * paste. Kept here so that the message and the check cannot disagree.
 */
function unacceptedMessage(fingerprint: string, version: number): string {
  return [
    `The projected tables' descriptors (core/db/tables.ts) or the projection's steps (PROJECTION_STEPS in ${FILE}) changed: fingerprint ${fingerprint} is not in PROJECTION_HISTORY.`,
    `- If the change can change a row of a projected table (a column, a value, which events make rows), a re-index is due: set PROJECTION_VERSION to ${version + 1} and append`,
    `    { version: ${version + 1}, fingerprint: '${fingerprint}', change: '<what the tables now hold differently>' },`,
    `- If it cannot (a refactor, a rename, a faster path to the same rows), append under the current version`,
    `    { version: ${version}, fingerprint: '${fingerprint}', change: '<why the rows stay the same>' },`,
    `to PROJECTION_HISTORY in ${FILE} (docs/decisions.md#d-330-the-projection-version-and-its-fingerprint).`,
  ].join('\n');
}

/** The verdict on a fingerprint against a history: null when accepted, else what to do. */
export function checkFingerprint(fingerprint: string, version: number, history: readonly { version: number; fingerprint: string; change: string }[]): string | null {
  const last = history[history.length - 1];
  if (!last || last.version !== version) return `PROJECTION_VERSION is ${version} but the last entry of PROJECTION_HISTORY in ${FILE} is for version ${last?.version ?? 'none'}: append the entry of version ${version} with the fingerprint ${fingerprint}.`;
  if (history.some((h) => h.fingerprint === fingerprint && h.version === version)) return null;
  return unacceptedMessage(fingerprint, version);
}
