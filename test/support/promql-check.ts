/**
 * What a PromQL expression reads: its metric selectors (name and matched labels) and the labels
 * it groups or matches by. Not a full parser (promtool parses every expression); enough to tell
 * which metric and label names an expression relies on, so they can be checked against a live
 * /metrics.
 */
export interface Reads {
  selectors: { metric: string; labels: string[] }[];
  grouping: string[];
}

const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'inf', 'nan']);

/** Blanks the content of quoted strings (keeping positions), so quotes hide nothing from the scan. */
const blankStrings = (expr: string) => expr.replace(/"(?:[^"\\]|\\.)*"/g, (m) => `"${' '.repeat(m.length - 2)}"`);

export function readsOf(expr: string): Reads {
  const text = blankStrings(expr);
  const selectors: Reads['selectors'] = [];
  const grouping: string[] = [];
  // Grouping and matching clauses: by (a, b), without (...), on (...), ignoring (...), group_left (...).
  for (const m of text.matchAll(/\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g)) {
    for (const l of m[2]!.split(',').map((x) => x.trim()).filter(Boolean)) grouping.push(l);
  }
  const withoutClauses = text.replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, (m) => ' '.repeat(m.length));
  for (const m of withoutClauses.matchAll(/(?<![\w.:$])([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\{[^}]*\})?/g)) {
    const name = m[1]!;
    const after = withoutClauses.slice(m.index! + m[0].length);
    if (KEYWORDS.has(name.toLowerCase())) continue;
    // A function or an aggregation (sum, rate, histogram_quantile, ...), not a metric.
    if (!m[2] && /^\s*(\(|by\b|without\b)/.test(after)) continue;
    const labels = m[2] ? [...m[2].matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)/g)].map((x) => x[1]!) : [];
    selectors.push({ metric: name, labels });
  }
  return { selectors, grouping };
}

/** A /metrics exposition: each metric family's type and the label names its samples carry. */
export interface Exposition {
  families: Map<string, { type: string; labels: Set<string>; samples: number }>;
}

export function parseExposition(text: string): Exposition {
  const families = new Map<string, { type: string; labels: Set<string>; samples: number }>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)/.exec(line);
    if (type) {
      families.set(type[1]!, { type: type[2]!, labels: new Set(), samples: 0 });
      continue;
    }
    if (!line || line.startsWith('#')) continue;
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s/.exec(line);
    if (!sample) continue;
    const name = sample[1]!;
    const family = families.get(name) ?? families.get(name.replace(/_(bucket|sum|count)$/, ''));
    if (!family) continue;
    family.samples += 1;
    for (const l of sample[2] ? sample[2].matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="/g) : []) family.labels.add(l[1]!);
  }
  return { families };
}

/** The family a series name belongs to (histogram series `_bucket`, `_sum`, `_count`). */
export function familyOf(exposition: Exposition, series: string): string | undefined {
  if (exposition.families.has(series)) return series;
  const base = series.replace(/_(bucket|sum|count)$/, '');
  return exposition.families.get(base)?.type === 'histogram' ? base : undefined;
}

/**
 * Problems of an expression against live expositions: a metric that is not exposed, a label
 * its samples do not carry (`declared` supplies the labels of a family without samples yet),
 * a grouping label no metric of the expression has. `extraLabels` are added by scraping or by
 * the Prometheus (instance, job, environment…); `skip` names series checked elsewhere.
 */
export function problemsOf(
  expr: string,
  exposition: Exposition,
  opts: { extraLabels: string[]; declared: (family: string) => string[] | undefined; skip: (metric: string) => boolean },
): string[] {
  const problems: string[] = [];
  const reads = readsOf(expr);
  const known = new Set<string>(opts.extraLabels);
  for (const s of reads.selectors) {
    if (opts.skip(s.metric)) continue;
    const family = familyOf(exposition, s.metric);
    if (!family) {
      problems.push(`${s.metric}: not exposed`);
      continue;
    }
    const f = exposition.families.get(family)!;
    const labels = new Set([...(f.samples ? f.labels : (opts.declared(family) ?? [])), ...opts.extraLabels, ...(f.type === 'histogram' ? ['le'] : [])]);
    labels.forEach((l) => known.add(l));
    for (const l of s.labels) if (!labels.has(l)) problems.push(`${s.metric}: no label ${l}`);
  }
  for (const l of reads.grouping) if (!known.has(l)) problems.push(`grouping by ${l}, which none of its metrics has`);
  return problems;
}
