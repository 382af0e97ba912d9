/**
 * The Table output `kubectl get` asks for (`Accept: …;as=Table`): a name column, then the
 * type's printer columns (a CRD's `additionalPrinterColumns`) or its age, each read from the
 * object with the JSONPath forms printer columns use.
 */
import type { Json } from './fields';
import type { ResourceType } from './resources';

function jsonPath(obj: unknown, path: string): unknown {
  // The forms printer columns use: .a.b, .a[0].b, .a[?(@.k=="v")].b
  const tokens = path.match(/\.[A-Za-z0-9_-]+|\[\d+\]|\[\?\(@\.[A-Za-z0-9_-]+=="[^"]*"\)\]/g) ?? [];
  let v: unknown = obj;
  for (const t of tokens) {
    if (v === undefined || v === null) return undefined;
    if (t.startsWith('.')) v = (v as Json)[t.slice(1)];
    else if (t.startsWith('[?')) {
      const [, k, want] = /@\.([A-Za-z0-9_-]+)=="([^"]*)"/.exec(t)!;
      v = Array.isArray(v) ? v.find((x) => (x as Json)?.[k!] === want) : undefined;
    } else v = Array.isArray(v) ? v[Number(t.slice(1, -1))] : undefined;
  }
  return v;
}

const age = (ts: string | undefined) => {
  if (!ts) return '<unknown>';
  const s = Math.max(0, Math.floor((Date.now() - Date.parse(ts)) / 1000));
  return s < 120 ? `${s}s` : s < 7200 ? `${Math.floor(s / 60)}m` : `${Math.floor(s / 3600)}h`;
};

export function table(t: ResourceType, items: Json[], rv: string): Json {
  const columns = [
    { name: 'Name', type: 'string', format: 'name', description: 'name', priority: 0 },
    ...(t.columns ?? [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }]).map((c) => ({ name: c.name, type: c.type, format: '', description: c.jsonPath, priority: 0 })),
  ];
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: { resourceVersion: rv },
    columnDefinitions: columns,
    rows: items.map((o) => ({
      cells: [
        (o.metadata as Json).name,
        ...(t.columns ?? [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }]).map((c) => {
          const v = jsonPath(o, c.jsonPath);
          return c.type === 'date' ? age(v as string) : (v ?? '<none>');
        }),
      ],
      object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata },
    })),
  };
}
