/**
 * The index at the top of docs/decisions.md: every decision's title, grouped by its topic and
 * linked to its heading. An entry is a heading `### D-NNN Title` followed by the line
 * `**Status:** accepted · **Topic:** <topic>` (or `superseded by [D-N](#…)`); the index is
 * computed from those two lines only, so entries appended in that shape index themselves.
 */

export const BEGIN = '<!-- decisions index -->';
export const END = '<!-- end of decisions index -->';

/** The topics an entry may name, in the order the index shows them. */
export const DECISION_TOPICS = [
  'api',
  'websocket',
  'auth',
  'indexer',
  'storage',
  'kit',
  'operator',
  'observability',
  'security',
  'local-tools',
  'benchmarks',
  'releases',
  'project',
] as const;
export type DecisionTopic = (typeof DECISION_TOPICS)[number];

export interface Decision {
  id: string;
  title: string;
  anchor: string;
  topic: DecisionTopic;
  /** The decision that replaces this one, when one does. */
  supersededBy?: string;
}

/** GitHub's anchor of a heading (github-slugger): lowercase, punctuation dropped, spaces to hyphens. */
export const headingAnchor = (heading: string) =>
  heading
    .replace(/`/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');

const HEADING = /^### (D-\d+) (.+)$/;
const STATUS = /^\*\*Status:\*\* (accepted|superseded by \[(D-\d+)\]\(#[^)]*\)) · \*\*Topic:\*\* ([a-z-]+)\s*$/;

/** The entries of docs/decisions.md; throws naming the entry whose shape is wrong. */
export function parseDecisions(doc: string): Decision[] {
  const lines = doc.split('\n');
  const decisions: Decision[] = [];
  const seen = new Set<string>();
  lines.forEach((line, i) => {
    const h = HEADING.exec(line);
    if (!h) {
      if (/^\*\*D-\d+\b/.test(line) || /^#{1,6} D-\d+\b/.test(line)) throw new Error(`docs/decisions.md line ${i + 1}: a decision must be a heading "### D-NNN Title": ${line.slice(0, 60)}`);
      return;
    }
    const [, id, title] = h as unknown as [string, string, string];
    const s = STATUS.exec(lines[i + 1] ?? '');
    if (!s) throw new Error(`docs/decisions.md: ${id} must be followed by "**Status:** accepted · **Topic:** <topic>" (line ${i + 2})`);
    const topic = s[3] as DecisionTopic;
    if (!DECISION_TOPICS.includes(topic)) throw new Error(`docs/decisions.md: ${id} has topic "${topic}"; topics are ${DECISION_TOPICS.join(', ')}`);
    if (seen.has(id)) throw new Error(`docs/decisions.md: ${id} appears twice`);
    seen.add(id);
    decisions.push({ id, title: title.trim(), anchor: headingAnchor(`${id} ${title}`), topic, ...(s[2] ? { supersededBy: s[2] } : {}) });
  });
  const ids = new Set(decisions.map((d) => d.id));
  for (const d of decisions) if (d.supersededBy && !ids.has(d.supersededBy)) throw new Error(`docs/decisions.md: ${d.id} is superseded by ${d.supersededBy}, which has no entry`);
  return decisions;
}

export function decisionsIndex(doc: string): string {
  const decisions = parseDecisions(doc);
  const byId = new Map(decisions.map((d) => [d.id, d]));
  const num = (d: Decision) => Number(d.id.slice(2));
  const out = [BEGIN, '', '## Index by topic', ''];
  out.push(
    DECISION_TOPICS.map((t) => `[${t}](#${t})`)
      .filter((_, i) => decisions.some((d) => d.topic === DECISION_TOPICS[i]))
      .join(' · '),
    '',
  );
  for (const topic of DECISION_TOPICS) {
    const of = decisions.filter((d) => d.topic === topic).sort((a, b) => num(a) - num(b));
    if (of.length === 0) continue;
    out.push(`### ${topic}`, '');
    for (const d of of) {
      const by = d.supersededBy && byId.get(d.supersededBy);
      out.push(`- [${d.id} ${d.title}](#${d.anchor})${by ? ` (superseded by [${by.id}](#${by.anchor}))` : ''}`);
    }
    out.push('');
  }
  out.push(END);
  return out.join('\n');
}

/** The document with its index, between the markers (placed before the first `## ` heading on the first run). */
export function withDecisionsIndex(doc: string): string {
  const start = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (start >= 0 && end > start) return doc.slice(0, start) + decisionsIndex(doc) + doc.slice(end + END.length);
  const firstSection = doc.indexOf('\n## ');
  if (firstSection < 0) throw new Error('docs/decisions.md has no sections');
  return `${doc.slice(0, firstSection + 1)}${decisionsIndex(doc)}\n\n${doc.slice(firstSection + 1)}`;
}
