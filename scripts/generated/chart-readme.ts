import { parse } from 'yaml';
import { EnvironmentSchema } from '../../cdk8s/lib/values';

/**
 * The parameters table of the chart's README.md, from values.yaml's comments, in helm-docs'
 * convention, so a chart user's usual tool reads the same file the same way:
 *
 * - `# -- description` right above a key documents it (continued by the `#` lines under it); its
 *   path is the keys above it joined by dots (a key holding a dot or a space is quoted);
 * - `# -- (type) description` states the type column; otherwise it follows from the value;
 * - `# @default -- text` replaces the default column;
 * - `# path.to.key -- description` documents a key by its full path wherever it stands: how an
 *   optional key that values.yaml leaves out (commented out) is documented; it needs a type and a
 *   `@default`;
 * - every scalar, empty list and empty map is a row; a non-empty map or list is a row when it
 *   has a description, and then its own keys are rows only if they have one.
 *
 * Stricter than helm-docs: every row must have a description, and where the values schema
 * (cdk8s/lib/values.ts) describes a key, the description must begin with the schema's words.
 * The schema is the field's one definition (values.schema.json and the CRD carry it, the cdk8s
 * app validates with it); values.yaml may only add what a chart user needs after it (D-183).
 */

export const BEGIN = '<!-- parameters table: generated from values.yaml by `npm run generate` -->';
export const END = '<!-- end of parameters table -->';

export interface ValueRow {
  key: string;
  type: string;
  default: string;
  description: string;
}

interface Doc {
  description: string;
  type?: string;
  default?: string;
  /** Set for the full-path form. */
  path?: string;
  line: number;
}

/** A path segment as helm-docs writes it. */
const segment = (key: string) => (/[.\s]/.test(key) ? JSON.stringify(key) : key);
const KEY_LINE = /^(\s*)("[^"]+"|'[^']+'|[^\s#:"'][^:#]*?):(?:\s+(.*))?$/;

/** The documentation comments of values.yaml, by path. */
function docComments(yaml: string, problems: string[]): Map<string, Doc> {
  const docs = new Map<string, Doc>();
  const stack: { indent: number; key: string }[] = [];
  let pending: Doc | undefined;
  let closed = false;
  const put = (path: string, doc: Doc) => {
    if (docs.has(path)) problems.push(`values.yaml line ${doc.line}: ${path} is documented twice`);
    const typed = /^\((\w+)\)\s+(.*)$/s.exec(doc.description);
    docs.set(path, typed ? { ...doc, type: typed[1], description: typed[2]! } : doc);
  };
  const flush = () => {
    if (pending?.path) put(pending.path, pending);
    else if (pending) problems.push(`values.yaml line ${pending.line}: a \`# --\` comment documents no key (one must follow it on the next line)`);
    pending = undefined;
  };
  yaml.split('\n').forEach((text, i) => {
    const line = i + 1;
    const comment = /^\s*#\s?(.*)$/.exec(text);
    if (comment) {
      const body = comment[1]!.trim();
      const fullPath = /^([^\s#]+) -- (.*)$/.exec(body);
      const own = /^-- (.*)$/.exec(body);
      const dflt = /^@default -- (.*)$/.exec(body);
      if (own || (fullPath && !body.startsWith('@'))) {
        flush();
        pending = own ? { description: own[1]!, line } : { description: fullPath![2]!, path: fullPath![1]!, line };
        closed = false;
      } else if (dflt && pending) {
        // One line, and the last of its comment: what follows is an ordinary comment.
        pending.default = dflt[1]!;
        closed = true;
      } else if (pending && body && !closed) {
        pending.description += ` ${body}`;
      }
      return;
    }
    const key = KEY_LINE.exec(text);
    if (!key) {
      // A blank line (or a list item) ends a comment: it documents nothing below.
      flush();
      return;
    }
    const indent = key[1]!.length;
    while (stack.length && stack[stack.length - 1]!.indent >= indent) stack.pop();
    const name = key[2]!.replace(/^["']|["']$/g, '');
    const path = [...stack.map((s) => s.key), name].map(segment).join('.');
    if (pending && !pending.path) {
      put(path, pending);
      pending = undefined;
    }
    flush();
    if (!key[3]) stack.push({ indent, key: name });
  });
  flush();
  return docs;
}

const typeOf = (v: unknown): string => {
  if (Array.isArray(v)) return 'list';
  if (v === null) return 'string';
  switch (typeof v) {
    case 'string':
      return 'string';
    case 'number':
      return Number.isInteger(v) ? 'int' : 'float';
    case 'boolean':
      return 'bool';
    default:
      return 'object';
  }
};

type SchemaNode = { description?: string; properties?: Record<string, SchemaNode>; additionalProperties?: SchemaNode | boolean };

/** The values schema's node of a path, if the schema has it. */
function schemaNode(path: string[]): SchemaNode | undefined {
  let node: SchemaNode | undefined = EnvironmentSchema as SchemaNode;
  for (const key of path) {
    const next: SchemaNode | undefined = node?.properties?.[key] ?? (typeof node?.additionalProperties === 'object' ? node.additionalProperties : undefined);
    node = next;
  }
  return node;
}

const normalized = (s: string) => s.replace(/\s+/g, ' ').trim();
/** Whether `text` begins with `start`, its first letter's case and a final period aside. */
export function beginsWith(text: string, start: string): boolean {
  const a = normalized(text);
  const b = normalized(start).replace(/\.$/, '');
  if (!b) return true;
  const head = a.slice(0, b.length);
  const next = a.charAt(b.length);
  return head.slice(1) === b.slice(1) && head.charAt(0).toLowerCase() === b.charAt(0).toLowerCase() && (next === '' || !/[\p{L}\p{N}]/u.test(next));
}

/** The table's rows, sorted by key as helm-docs sorts them; throws naming every undocumented or wrongly documented key. */
export function valuesRows(yaml: string): ValueRow[] {
  const problems: string[] = [];
  const docs = docComments(yaml, problems);
  const values = parse(yaml) as Record<string, unknown>;
  const rows: ValueRow[] = [];
  const used = new Set<string>();

  const row = (keys: string[], value: unknown, doc: Doc) => {
    const key = keys.map(segment).join('.');
    used.add(key);
    const fromSchema = schemaNode(keys)?.description;
    if (fromSchema && !beginsWith(doc.description, fromSchema)) {
      problems.push(`values.yaml line ${doc.line}: the description of ${key} must begin with the schema's (cdk8s/lib/values.ts): "${fromSchema}"`);
    }
    rows.push({
      key,
      type: doc.type ?? typeOf(value),
      default: doc.default ?? `\`${JSON.stringify(value)}\``,
      description: normalized(doc.description),
    });
  };
  const walk = (keys: string[], value: unknown, documentedOnly: boolean) => {
    const doc = docs.get(keys.map(segment).join('.'));
    const isMap = value !== null && typeof value === 'object' && !Array.isArray(value);
    const nonEmpty = isMap ? Object.keys(value as object).length > 0 : Array.isArray(value) && value.length > 0;
    if (doc) row(keys, value, doc);
    if (isMap && nonEmpty) {
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) walk([...keys, k], v, documentedOnly || !!doc);
    } else if (!doc && !documentedOnly) {
      problems.push(`values.yaml: ${keys.map(segment).join('.')} has no \`# --\` description`);
    }
  };
  for (const [k, v] of Object.entries(values)) walk([k], v, false);

  // Keys documented by their full path that values.yaml leaves out.
  for (const [key, doc] of docs) {
    if (used.has(key)) continue;
    if (!doc.path) {
      problems.push(`values.yaml line ${doc.line}: the description of ${key} documents nothing in the table (a key under a documented map without one of its own?)`);
    } else if (!schemaNode(doc.path.split('.'))) {
      problems.push(`values.yaml line ${doc.line}: ${key} is not a field of the values schema (cdk8s/lib/values.ts)`);
    } else if (!doc.type || doc.default === undefined) {
      problems.push(`values.yaml line ${doc.line}: ${key} is not in values.yaml, so its description needs a (type) and a @default`);
    } else {
      row(key.split('.'), undefined, doc);
    }
  }
  if (problems.length) throw new Error(`charts/market-indexer/values.yaml cannot make the README's parameters table:\n${problems.join('\n')}`);
  return rows.sort((a, b) => a.key.localeCompare(b.key, 'en'));
}

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** The parameters table, between its markers. */
/** The keys every values file must set, shown first. */
export const REQUIRED_KEYS = ['environment', 'tenants'];

/** The groups of the table, in order: the required keys, then by top-level key (a section each). */
const GROUPS: { title: string; keys: (key: string) => boolean }[] = [
  { title: 'Required', keys: (k) => REQUIRED_KEYS.includes(k) },
  { title: 'Image and what a tenant serves', keys: (k) => /^(image|variant|settings)(\.|$)/.test(k) },
  { title: 'Source: where the events come from', keys: (k) => k.startsWith('source.') },
  { title: 'Stores: PostgreSQL and Redis', keys: (k) => /^(database|redis|devStores)\./.test(k) },
  { title: 'API', keys: (k) => k.startsWith('api.') },
  { title: 'Indexer', keys: (k) => k.startsWith('indexer.') },
  { title: 'Network policies and quota', keys: (k) => /^(networkPolicy|quota)\./.test(k) },
  { title: 'Monitoring', keys: (k) => /^(monitoring|slo)\./.test(k) },
  { title: 'Platform: operator, dashboards, load tests', keys: (k) => k.startsWith('platform.') },
];

/** The parameters tables, grouped (required keys first), between their markers. */
export function valuesTable(valuesYaml: string): string {
  const rows = valuesRows(valuesYaml);
  const row = (r: ValueRow) => `| ${cell(r.key)} | ${r.type} | ${cell(r.default)} | ${cell(r.description)} |`;
  const out = [BEGIN];
  const placed = new Set<ValueRow>();
  for (const [i, g] of [...GROUPS, { title: 'Other', keys: () => true }].entries()) {
    const of = rows.filter((r) => !placed.has(r) && g.keys(r.key));
    if (of.length === 0) continue;
    of.forEach((r) => placed.add(r));
    if (i === 0 && of.map((r) => r.key).sort().join() !== [...REQUIRED_KEYS].sort().join()) throw new Error(`values.yaml must document the required keys ${REQUIRED_KEYS.join(', ')}`);
    out.push('', `### ${g.title}`, '', '| Key | Type | Default | Description |', '|-----|------|---------|-------------|', ...of.map(row));
  }
  out.push('', END);
  return out.join('\n');
}

/** Replaces the table between the markers of the chart's README. */
export function withValuesTable(readme: string, valuesYaml: string): string {
  const start = readme.indexOf(BEGIN);
  const end = readme.indexOf(END);
  if (start < 0 || end < start) throw new Error(`charts/market-indexer/README.md lacks the markers ${BEGIN} … ${END}`);
  return readme.slice(0, start) + valuesTable(valuesYaml) + readme.slice(end + END.length);
}
