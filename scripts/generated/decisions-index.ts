/**
 * The index at the top of docs/decisions.md: each section (a `## ` heading) with the decisions
 * it holds, in the order they appear, each linked to its entry. Decisions keep their numbers
 * and their places; the index is what makes 200 of them navigable (issue 32).
 */

export const BEGIN = '<!-- decisions index: generated from the headings and entries below by `npm run generate` -->';
export const END = '<!-- end of decisions index -->';

/** GitHub's anchor of a heading: lowercase, punctuation dropped, spaces to hyphens. */
const anchor = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

export function decisionsIndex(doc: string): string {
  const body = doc.includes(END) ? doc.slice(doc.indexOf(END) + END.length) : doc;
  const rows: string[] = [];
  let section: { title: string; ids: string[] } | undefined;
  const flush = () => section && rows.push(`| [${section.title}](#${anchor(section.title)}) | ${section.ids.join(', ') || '—'} |`);
  for (const line of body.split('\n')) {
    const h = /^## (.+)$/.exec(line);
    if (h) {
      flush();
      section = { title: h[1]!.trim(), ids: [] };
      continue;
    }
    const d = /^\*\*(D-\d+)\b/.exec(line);
    if (d && section) section.ids.push(d[1]!);
  }
  flush();
  return [BEGIN, '', '| Area | Decisions |', '|---|---|', ...rows, '', END].join('\n');
}

/** The document with its index (inserted after the introduction on the first run). */
export function withDecisionsIndex(doc: string): string {
  const start = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (start >= 0 && end > start) return doc.slice(0, start) + decisionsIndex(doc) + doc.slice(end + END.length);
  const firstSection = doc.indexOf('\n## ');
  if (firstSection < 0) throw new Error('docs/decisions.md has no sections');
  return `${doc.slice(0, firstSection + 1)}${decisionsIndex(doc)}\n\n${doc.slice(firstSection + 1)}`;
}
