
/**
 * Field ownership for server-side apply, as the real API server keeps it in
 * `metadata.managedFields` (fieldsV1), simplified in one documented way: every list is atomic
 * (owned and replaced whole), where Kubernetes merges some lists by key (containers by name).
 * Map keys, including labels and annotations, are owned one by one.
 */
export type Json = Record<string, unknown>;

/**
 * Equality of JSON values, key order and prototypes aside (objects made by structuredClone and
 * by literals can come from different realms, which node:util's deep-strict equality tells apart).
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === (b as unknown[]).length && a.every((x, i) => sameJson(x, (b as unknown[])[i]));
  const ka = Object.keys(a).filter((k) => (a as Json)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Json)[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => sameJson((a as Json)[k], (b as Json)[k]));
}
export type Path = string[];

export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time: string;
  fieldsType: 'FieldsV1';
  fieldsV1: Json;
  subresource?: string;
}

/** Fields nobody owns: identity and bookkeeping the server sets. */
const UNOWNED = new Set(['apiVersion', 'kind', 'metadata.name', 'metadata.namespace', 'metadata.uid', 'metadata.resourceVersion',
  'metadata.generation', 'metadata.creationTimestamp', 'metadata.managedFields', 'metadata.deletionTimestamp', 'metadata.selfLink']);

const isMap = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const key = (p: Path) => p.join('\u0000');

/** Paths of the leaves of an object: scalars, lists, empty maps. */
export function leafPaths(obj: unknown, scope: 'main' | 'status', prefix: Path = []): Path[] {
  const out: Path[] = [];
  const walk = (v: unknown, p: Path) => {
    const dotted = p.join('.');
    if (UNOWNED.has(dotted)) return;
    if (p.length === 1 && ((scope === 'main' && p[0] === 'status') || (scope === 'status' && p[0] !== 'status'))) return;
    if (isMap(v) && Object.keys(v).length > 0) {
      for (const [k, sub] of Object.entries(v)) walk(sub, [...p, k]);
    } else if (p.length) {
      out.push(p);
    }
  };
  walk(obj, prefix);
  return out;
}

export function getAt(obj: unknown, p: Path): unknown {
  let v = obj;
  for (const k of p) {
    if (!isMap(v)) return undefined;
    v = v[k];
  }
  return v;
}

export function setAt(obj: Json, p: Path, value: unknown): void {
  let v: Json = obj;
  for (const k of p.slice(0, -1)) {
    if (!isMap(v[k])) v[k] = {};
    v = v[k] as Json;
  }
  v[p[p.length - 1]!] = structuredClone(value);
}

/** Removes a field and any map left empty by it (so a removed label leaves no `labels: {}`). */
export function deleteAt(obj: Json, p: Path): void {
  const parents: [Json, string][] = [];
  let v: Json = obj;
  for (const k of p.slice(0, -1)) {
    if (!isMap(v[k])) return;
    parents.push([v, k]);
    v = v[k] as Json;
  }
  delete v[p[p.length - 1]!];
  for (const [parent, k] of parents.reverse()) {
    if (isMap(parent[k]) && Object.keys(parent[k] as Json).length === 0) delete parent[k];
    else break;
  }
}

const overlaps = (a: Path, b: Path) => {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
};

export function toFieldsV1(paths: Path[]): Json {
  const root: Json = {};
  for (const p of paths) {
    let node = root;
    for (const k of p) node = (node[`f:${k}`] ??= {}) as Json;
  }
  return root;
}

export function fromFieldsV1(fields: Json, prefix: Path = []): Path[] {
  const out: Path[] = [];
  for (const [k, sub] of Object.entries(fields)) {
    if (!k.startsWith('f:')) continue;
    const p = [...prefix, k.slice(2)];
    if (isMap(sub) && Object.keys(sub).some((s) => s.startsWith('f:'))) out.push(...fromFieldsV1(sub, p));
    else out.push(p);
  }
  return out;
}

export interface Conflict {
  manager: string;
  path: Path;
}

export interface ApplyResult {
  object: Json;
  managedFields: ManagedFieldsEntry[];
  conflicts: Conflict[];
}

/**
 * Server-side apply of `applied` (the manager's whole intent) onto `live`: conflicts with other
 * managers' fields whose value would change (unless forced, which takes them over); fields this
 * manager applied before and no longer applies are removed unless someone else owns them.
 */
export function serverSideApply(opts: {
  live: Json | undefined;
  applied: Json;
  manager: string;
  force: boolean;
  scope: 'main' | 'status';
  apiVersion: string;
  now: string;
}): ApplyResult {
  const { live, applied, manager, scope } = opts;
  const entries: ManagedFieldsEntry[] = structuredClone(((live?.metadata as Json | undefined)?.managedFields as ManagedFieldsEntry[]) ?? []);
  const subresource = scope === 'status' ? 'status' : undefined;
  const isMine = (e: ManagedFieldsEntry) => e.manager === manager && e.operation === 'Apply' && e.subresource === subresource;
  const appliedPaths = leafPaths(applied, scope);
  const previous = entries.filter(isMine).flatMap((e) => fromFieldsV1(e.fieldsV1));
  const conflicts: Conflict[] = [];
  for (const e of entries.filter((x) => !isMine(x))) {
    for (const owned of fromFieldsV1(e.fieldsV1)) {
      for (const p of appliedPaths) {
        if (overlaps(owned, p) && !sameJson(getAt(live, p), getAt(applied, p))) conflicts.push({ manager: e.manager, path: p });
      }
    }
  }
  if (conflicts.length && !opts.force) return { object: live ?? {}, managedFields: entries, conflicts };

  const result: Json = structuredClone(live ?? { apiVersion: applied.apiVersion, kind: applied.kind, metadata: {} });
  const appliedKeys = new Set(appliedPaths.map(key));
  const ownedByOthers = entries.filter((e) => !isMine(e)).flatMap((e) => fromFieldsV1(e.fieldsV1));
  for (const p of previous) {
    if (appliedKeys.has(key(p))) continue;
    if (!ownedByOthers.some((o) => overlaps(o, p))) deleteAt(result, p);
  }
  for (const p of appliedPaths) setAt(result, p, getAt(applied, p));

  const next: ManagedFieldsEntry[] = [];
  for (const e of entries) {
    if (isMine(e)) continue;
    let paths = fromFieldsV1(e.fieldsV1);
    // Forced fields change hands; fields applied with the same value are owned by both.
    if (opts.force) paths = paths.filter((o) => !conflicts.some((c) => c.manager === e.manager && overlaps(o, c.path)));
    if (paths.length) next.push({ ...e, fieldsV1: toFieldsV1(paths) });
  }
  const mine = entries.find(isMine);
  const unchanged = mine && sameJson(fromFieldsV1(mine.fieldsV1).map(key).sort(), appliedPaths.map(key).sort());
  next.push({
    manager,
    operation: 'Apply',
    apiVersion: opts.apiVersion,
    // An apply that changes nothing keeps its entry (and its time) as it was.
    time: unchanged ? mine.time : opts.now,
    fieldsType: 'FieldsV1',
    fieldsV1: toFieldsV1(appliedPaths),
    ...(subresource ? { subresource } : {}),
  });
  return { object: result, managedFields: next, conflicts };
}

/** A plain update (create, PUT, merge or JSON patch): the manager takes the fields it changed. */
export function recordUpdate(opts: {
  before: Json | undefined;
  after: Json;
  manager: string;
  scope: 'main' | 'status';
  apiVersion: string;
  now: string;
}): ManagedFieldsEntry[] {
  const entries: ManagedFieldsEntry[] = structuredClone(((opts.before?.metadata as Json | undefined)?.managedFields as ManagedFieldsEntry[]) ?? []);
  const afterPaths = leafPaths(opts.after, opts.scope);
  const beforePaths = opts.before ? leafPaths(opts.before, opts.scope) : [];
  const all = new Map([...beforePaths, ...afterPaths].map((p) => [key(p), p]));
  const changed = [...all.values()].filter((p) => !sameJson(getAt(opts.before, p), getAt(opts.after, p)));
  if (!changed.length) return entries;
  const changedKeys = new Set(changed.map(key));
  const subresource = opts.scope === 'status' ? 'status' : undefined;
  const next: ManagedFieldsEntry[] = [];
  let own: Path[] = [];
  for (const e of entries) {
    const paths = fromFieldsV1(e.fieldsV1).filter((p) => !changed.some((c) => overlaps(c, p)));
    if (e.manager === opts.manager && e.operation === 'Update' && e.subresource === subresource) own = paths;
    else if (paths.length) next.push({ ...e, fieldsV1: toFieldsV1(paths) });
  }
  const present = new Set(afterPaths.map(key));
  const mine = [...own, ...changed.filter((p) => changedKeys.has(key(p)) && present.has(key(p)))];
  if (mine.length) {
    next.push({
      manager: opts.manager,
      operation: 'Update',
      apiVersion: opts.apiVersion,
      time: opts.now,
      fieldsType: 'FieldsV1',
      fieldsV1: toFieldsV1(mine),
      ...(subresource ? { subresource } : {}),
    });
  }
  return next;
}
