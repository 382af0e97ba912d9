/**
 * The state and semantics of the test API server, independent of HTTP: typed storage with a
 * global resourceVersion, optimistic concurrency, reads and writes (create, update, patch,
 * server-side apply, delete) with status subresources, finalizers and `deletionTimestamp`,
 * namespace deletion, background garbage collection by `ownerReferences`, and CRDs that register
 * new types. What a write must pass (names, defaulting, schemas, managed fields) is
 * admission.ts; watches and their history are watches.ts; label selectors selectors.ts; the
 * errors errors.ts.
 */
import { compileCrdSchema, type CompiledSchema } from './crd-schema';
import { admit, applyFields, checkName, merged, nextGeneration, stamp, updatedFields, type Scope } from './admission';
import { alreadyExists, ApiError, conflict, notFound } from './errors';
import { sameJson, type Json } from './fields';
import { meta, now, objKey, typeKey } from './objects';
import { apiVersionOf, BUILT_IN, typesOfCrd, type ResourceType } from './resources';
import { matches, type Selector } from './selectors';
import { Watches, type WatchEvent } from './watches';

export { ApiError } from './errors';
export { parseSelector, type Selector } from './selectors';
export type { WatchEvent } from './watches';

export interface WriteRecord {
  verb: 'create' | 'update' | 'patch' | 'apply' | 'delete';
  resource: string;
  namespace: string | undefined;
  name: string;
  manager: string;
  /** The request changed the stored object (an apply or patch that changes nothing does not). */
  changed: boolean;
}

export class Store {
  private rv = 1;
  private readonly types = new Map<string, ResourceType>();
  private readonly schemas = new Map<string, CompiledSchema>();
  private readonly objects = new Map<string, Map<string, Json>>();
  /** Per type, the keys of its objects in each namespace: a namespace's list reads only its own. */
  private readonly byNamespace = new Map<string, Map<string, Set<string>>>();
  /** Every stored object's uid, and the uids each owner uid has as dependents (ownerReferences). */
  private readonly uids = new Map<string, { t: ResourceType; key: string }>();
  private readonly dependents = new Map<string, Set<string>>();
  /** Owner uids some object refers to that no stored object has: the garbage collector's work. */
  private readonly danglingOwners = new Set<string>();
  /** Namespaces with a deletionTimestamp: the namespace controller's work. */
  private readonly terminating = new Set<string>();
  private readonly watches: Watches;
  readonly writes: WriteRecord[] = [];

  constructor(historySize = 1000) {
    this.watches = new Watches(historySize);
    for (const t of BUILT_IN) this.register(t);
    // What every cluster starts with.
    for (const name of ['default', 'kube-system', 'kube-public']) this.create(this.typeOf('', 'v1', 'namespaces'), undefined, { metadata: { name } }, 'kube-apiserver');
  }

  // --- types ---------------------------------------------------------------------------

  private register(t: ResourceType): void {
    this.types.set(typeKey(t), t);
    if (!this.objects.has(typeKey(t))) this.objects.set(typeKey(t), new Map());
    if (t.schema) this.schemas.set(typeKey(t), compileCrdSchema(t.schema));
  }

  allTypes(): ResourceType[] {
    return [...this.types.values()];
  }

  typeOf(group: string, version: string, plural: string): ResourceType {
    const t = this.types.get(`${group}/${plural}`);
    if (!t || t.version !== version) throw new ApiError(404, 'NotFound', `the server could not find the requested resource`);
    return t;
  }

  typeOfKind(apiVersion: string, kind: string): ResourceType | undefined {
    return this.allTypes().find((t) => apiVersionOf(t) === apiVersion && t.kind === kind);
  }

  get resourceVersion(): string {
    return String(this.rv);
  }

  // --- reads ---------------------------------------------------------------------------

  get(t: ResourceType, ns: string | undefined, name: string): Json {
    const o = this.objects.get(typeKey(t))!.get(objKey(t.namespaced ? ns : undefined, name));
    if (!o) throw notFound(t, name);
    return structuredClone(o);
  }

  find(t: ResourceType, ns: string | undefined, name: string): Json | undefined {
    const o = this.objects.get(typeKey(t))!.get(objKey(t.namespaced ? ns : undefined, name));
    return o && structuredClone(o);
  }

  private has(t: ResourceType, ns: string | undefined, name: string): boolean {
    return this.objects.get(typeKey(t))!.has(objKey(t.namespaced ? ns : undefined, name));
  }

  /**
   * The objects of a type (in one namespace: from its index, without reading the others), sorted
   * by namespace and name. Copies, unless `shared` (the caller only serializes them: the stored
   * objects themselves, which it must not change); only what is returned is copied.
   */
  list(t: ResourceType, ns: string | undefined, selector: Selector, fieldSelector?: string, opts: { shared?: boolean } = {}): Json[] {
    const byName = fieldSelector && /^metadata\.name=(.+)$/.exec(fieldSelector)?.[1];
    const all = this.objects.get(typeKey(t))!;
    let keys: Iterable<string>;
    if (t.namespaced && ns !== undefined) keys = byName ? [objKey(ns, byName)] : (this.byNamespace.get(typeKey(t))?.get(ns) ?? []);
    else keys = all.keys();
    const out: [string, Json][] = [];
    for (const k of keys) {
      const o = all.get(k);
      if (o && matches(selector, o) && (!byName || meta(o).name === byName)) out.push([k, o]);
    }
    out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    return out.map(([, o]) => (opts.shared ? o : structuredClone(o)));
  }

  /**
   * Starts a watch after `fromRv` (a list's resourceVersion), replaying what happened since;
   * `undefined` or "0" starts with every current object as ADDED. Returns the stop function, or
   * throws 410 when `fromRv` is older than the history kept.
   */
  watch(t: ResourceType, ns: string | undefined, selector: Selector, fromRv: string | undefined, send: (e: WatchEvent) => void): () => void {
    return this.watches.watch(t, ns, selector, fromRv, () => this.list(t, ns, selector), send);
  }

  /** Forgets every watch event so far: a watch from an older resourceVersion gets 410 Gone. */
  compact(): void {
    this.watches.compact(this.rv);
  }

  // --- writes --------------------------------------------------------------------------

  create(t: ResourceType, ns: string | undefined, body: Json, manager: string, dryRun = false): Json {
    const name = checkName(t, meta(body)?.name);
    this.checkNamespace(t, ns);
    if (this.has(t, ns, name)) throw alreadyExists(t, name);
    const obj: Json = structuredClone(body);
    obj.apiVersion = apiVersionOf(t);
    obj.kind = t.kind;
    const m = meta(obj);
    if (t.namespaced) m.namespace = ns;
    else delete m.namespace;
    if (t.status && t.group !== 'apiextensions.k8s.io') delete obj.status;
    this.admit(t, obj, undefined);
    stamp(t, obj, now());
    m.managedFields = updatedFields(t, undefined, obj, manager, 'main', now());
    if (dryRun) return obj;
    return this.store(t, obj, 'ADDED', { verb: 'create', manager, changed: true });
  }

  /** PUT: the whole object (or, with `scope: 'status'`, its status), at the given resourceVersion if any. */
  update(t: ResourceType, ns: string | undefined, name: string, body: Json, manager: string, scope: Scope, dryRun = false): Json {
    const live = this.get(t, ns, name);
    const rv = meta(body)?.resourceVersion;
    if (rv !== undefined && rv !== meta(live).resourceVersion) throw conflict(t, name);
    return this.write(t, live, merged(t, live, body, scope), manager, scope, 'update', dryRun);
  }

  patch(t: ResourceType, ns: string | undefined, name: string, apply: (live: Json) => Json, manager: string, scope: Scope, dryRun = false): Json {
    const live = this.get(t, ns, name);
    const patched = apply(structuredClone(live));
    const rv = meta(patched)?.resourceVersion;
    if (rv !== undefined && rv !== meta(live).resourceVersion) throw conflict(t, name);
    return this.write(t, live, merged(t, live, patched, scope), manager, scope, 'patch', dryRun);
  }

  /** Server-side apply (`application/apply-patch+yaml`); creates the object when it does not exist. */
  apply(t: ResourceType, ns: string | undefined, name: string, applied: Json, manager: string, force: boolean, scope: Scope, dryRun = false): Json {
    if (meta(applied)?.name !== name) throw new ApiError(400, 'BadRequest', `the name of the object (${String(meta(applied)?.name)}) does not match the name on the URL (${name})`);
    const live = this.find(t, ns, name);
    if (!live && scope === 'status') throw notFound(t, name);
    const time = now();
    const res = applyFields(t, name, { live, applied, manager, force, scope, now: time });
    const obj = res.object;
    meta(obj).managedFields = res.managedFields;
    if (!live) {
      this.checkNamespace(t, ns);
      meta(obj).name = name;
      obj.apiVersion = apiVersionOf(t);
      obj.kind = t.kind;
      if (t.namespaced) meta(obj).namespace = ns;
      if (t.status) delete obj.status;
      this.admit(t, obj, undefined);
      stamp(t, obj, time);
      if (dryRun) return obj;
      return this.store(t, obj, 'ADDED', { verb: 'apply', manager, changed: true });
    }
    return this.write(t, live, obj, manager, scope, 'apply', dryRun, res.managedFields);
  }

  delete(t: ResourceType, ns: string | undefined, name: string, manager: string, opts: { dryRun?: boolean; preconditionUid?: string } = {}): Json {
    const live = this.get(t, ns, name);
    if (opts.preconditionUid && opts.preconditionUid !== meta(live).uid) throw conflict(t, name);
    if (opts.dryRun) return live;
    const m = meta(live);
    if (t.kind === 'Namespace') {
      if (!m.deletionTimestamp) {
        m.deletionTimestamp = now();
        live.status = { phase: 'Terminating' };
        this.store(t, live, 'MODIFIED', { verb: 'delete', manager, changed: true });
      }
      this.settle();
      return this.find(t, ns, name) ?? live;
    }
    if ((m.finalizers as string[] | undefined)?.length) {
      if (!m.deletionTimestamp) {
        m.deletionTimestamp = now();
        return this.store(t, live, 'MODIFIED', { verb: 'delete', manager, changed: true });
      }
      return live;
    }
    this.remove(t, live, { verb: 'delete', manager });
    this.settle();
    return live;
  }

  // --- storage -------------------------------------------------------------------------

  private write(t: ResourceType, live: Json, next: Json, manager: string, scope: Scope, verb: WriteRecord['verb'], dryRun: boolean, managedFields?: unknown): Json {
    const m = meta(next);
    const lm = meta(live);
    if (lm.deletionTimestamp && JSON.stringify(m.finalizers ?? []) !== JSON.stringify(lm.finalizers ?? []) && !(m.finalizers as string[] | undefined)?.length) {
      // The last finalizer went: the object goes.
      if (dryRun) return next;
      this.remove(t, live, { verb, manager });
      this.settle();
      return next;
    }
    this.admit(t, next, live);
    m.generation = nextGeneration(live, next, scope);
    m.managedFields = managedFields ?? updatedFields(t, live, next, manager, scope, now());
    m.resourceVersion = lm.resourceVersion;
    if (sameJson(live, next)) {
      // Nothing changes: no new resourceVersion, no event. The request is still recorded.
      this.writes.push({ verb, resource: t.plural, namespace: lm.namespace, name: lm.name, manager, changed: false });
      return live;
    }
    if (dryRun) return next;
    return this.store(t, next, 'MODIFIED', { verb, manager, changed: true });
  }

  private admit(t: ResourceType, obj: Json, old: Json | undefined): void {
    admit(t, obj, old, this.schemas.get(typeKey(t)));
  }

  private store(t: ResourceType, obj: Json, type: 'ADDED' | 'MODIFIED', w: Pick<WriteRecord, 'verb' | 'manager' | 'changed'>): Json {
    this.rv += 1;
    const m = meta(obj);
    m.resourceVersion = String(this.rv);
    const key = objKey(t.namespaced ? m.namespace : undefined, m.name);
    const objs = this.objects.get(typeKey(t))!;
    const previous = objs.get(key);
    if (previous) this.unindex(t, key, previous);
    objs.set(key, obj);
    this.index(t, key, obj);
    this.writes.push({ ...w, resource: t.plural, namespace: m.namespace, name: m.name });
    this.watches.emit(t, this.rv, { type, object: obj }, previous);
    if (t.kind === 'CustomResourceDefinition') for (const nt of typesOfCrd(obj as Parameters<typeof typesOfCrd>[0])) this.register(nt);
    return structuredClone(obj);
  }

  private remove(t: ResourceType, obj: Json, w: Pick<WriteRecord, 'verb' | 'manager'>): void {
    this.rv += 1;
    const m = meta(obj);
    const gone = { ...obj, metadata: { ...m, resourceVersion: String(this.rv) } };
    const key = objKey(t.namespaced ? m.namespace : undefined, m.name);
    const objs = this.objects.get(typeKey(t))!;
    const stored = objs.get(key);
    objs.delete(key);
    if (stored) this.unindex(t, key, stored);
    this.writes.push({ ...w, changed: true, resource: t.plural, namespace: m.namespace, name: m.name });
    this.watches.emit(t, this.rv, { type: 'DELETED', object: gone });
  }

  private index(t: ResourceType, key: string, o: Json): void {
    const m = meta(o);
    if (t.namespaced) {
      const byNs = this.byNamespace.get(typeKey(t)) ?? this.byNamespace.set(typeKey(t), new Map()).get(typeKey(t))!;
      (byNs.get(m.namespace!) ?? byNs.set(m.namespace!, new Set()).get(m.namespace!)!).add(key);
    }
    const uid = m.uid as string;
    this.uids.set(uid, { t, key });
    this.danglingOwners.delete(uid);
    for (const r of (m.ownerReferences as { uid: string }[] | undefined) ?? []) {
      (this.dependents.get(r.uid) ?? this.dependents.set(r.uid, new Set()).get(r.uid)!).add(uid);
      if (!this.uids.has(r.uid)) this.danglingOwners.add(r.uid);
    }
    if (t.kind === 'Namespace' && m.deletionTimestamp) this.terminating.add(m.name);
  }

  private unindex(t: ResourceType, key: string, o: Json): void {
    const m = meta(o);
    if (t.namespaced) {
      const keys = this.byNamespace.get(typeKey(t))?.get(m.namespace!);
      keys?.delete(key);
      if (keys && !keys.size) this.byNamespace.get(typeKey(t))!.delete(m.namespace!);
    }
    const uid = m.uid as string;
    this.uids.delete(uid);
    if (this.dependents.get(uid)?.size) this.danglingOwners.add(uid);
    for (const r of (m.ownerReferences as { uid: string }[] | undefined) ?? []) {
      const deps = this.dependents.get(r.uid);
      deps?.delete(uid);
      if (deps && !deps.size) {
        this.dependents.delete(r.uid);
        this.danglingOwners.delete(r.uid);
      }
    }
    if (t.kind === 'Namespace') this.terminating.delete(m.name);
  }

  /**
   * What the controllers of a real control plane would do next, run to a fixed point after every
   * delete: namespaces being deleted lose their contents (and go when empty), and objects whose
   * owners are all gone are deleted (background propagation). It reads only what is concerned:
   * the dependents of owners that are gone, the contents of namespaces being deleted.
   */
  private settle(): void {
    for (let changed = true; changed; ) {
      changed = false;
      const doomed: { t: ResourceType; key: string; orphaned: boolean }[] = [];
      for (const owner of this.danglingOwners) {
        for (const uid of this.dependents.get(owner) ?? []) {
          const at = this.uids.get(uid);
          const o = at && this.objects.get(typeKey(at.t))!.get(at.key);
          const owners = (o && (meta(o).ownerReferences as { uid: string }[] | undefined)) ?? [];
          if (at && owners.length && owners.every((r) => !this.uids.has(r.uid))) doomed.push({ ...at, orphaned: true });
        }
      }
      for (const ns of this.terminating) {
        for (const t of this.types.values()) {
          if (!t.namespaced) continue;
          for (const key of this.byNamespace.get(typeKey(t))?.get(ns) ?? []) doomed.push({ t, key, orphaned: false });
        }
      }
      for (const { t, key, orphaned } of doomed) {
        const o = this.objects.get(typeKey(t))!.get(key);
        if (!o || meta(o).deletionTimestamp) continue;
        if ((meta(o).finalizers as string[] | undefined)?.length) {
          meta(o).deletionTimestamp = now();
          this.store(t, o, 'MODIFIED', { verb: 'delete', manager: 'garbage-collector', changed: true });
        } else {
          this.remove(t, o, { verb: 'delete', manager: orphaned ? 'garbage-collector' : 'namespace-controller' });
        }
        changed = true;
      }
      const namespaces = this.objects.get('/namespaces')!;
      for (const name of [...this.terminating]) {
        const empty = this.allTypes().every((t) => !t.namespaced || !this.byNamespace.get(typeKey(t))?.get(name)?.size);
        const ns = namespaces.get(objKey(undefined, name));
        if (empty && ns) {
          this.remove(this.types.get('/namespaces')!, ns, { verb: 'delete', manager: 'namespace-controller' });
          changed = true;
        }
      }
    }
  }

  private checkNamespace(t: ResourceType, ns: string | undefined): void {
    if (!t.namespaced) return;
    const n = this.objects.get('/namespaces')!.get(objKey(undefined, ns!));
    if (!n) throw new ApiError(404, 'NotFound', `namespaces "${ns}" not found`, { name: ns, kind: 'namespaces' });
    if (meta(n).deletionTimestamp) {
      throw new ApiError(403, 'Forbidden', `${t.plural} is forbidden: unable to create new content in namespace ${ns} because it is being terminated`);
    }
  }
}
