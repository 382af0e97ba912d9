/**
 * Label selectors, as lists and watches take them (`labelSelector`): parsed once into a list of
 * requirements that an object's labels must all meet.
 */
import type { Json } from './fields';
import { meta } from './objects';

type Requirement = (labels: Record<string, string>) => boolean;
export type Selector = Requirement[];

/** `a=b`, `a==b`, `a!=b`, `a`, `!a`, `a in (x,y)`, `a notin (x,y)`, comma-separated. */
export function parseSelector(s: string | null | undefined): Selector {
  if (!s) return [];
  const parts = s.match(/([^,(]+(\([^)]*\))?)/g) ?? [];
  return parts.map((raw) => {
    const p = raw.trim();
    let m: RegExpExecArray | null;
    if ((m = /^(\S+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(p))) {
      const [, k, op, list] = m;
      const values = list!.split(',').map((x) => x.trim());
      return (l) => (op === 'in' ? values.includes(l[k!]!) : !values.includes(l[k!]!));
    }
    if ((m = /^(\S+?)\s*(==|=|!=)\s*(\S*)$/.exec(p))) {
      const [, k, op, v] = m;
      return (l) => (op === '!=' ? l[k!] !== v : l[k!] === v);
    }
    if (p.startsWith('!')) return (l) => !(p.slice(1) in l);
    return (l) => p in l;
  });
}

export const matches = (sel: Selector, o: Json) => sel.every((r) => r(meta(o).labels ?? {}));
