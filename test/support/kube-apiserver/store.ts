import { randomUUID } from 'node:crypto';
import { compileCrdSchema, type CompiledSchema, type FieldError } from './crd-schema';
import { recordUpdate, sameJson, serverSideApply, type Json } from './fields';
import { apiVersionOf, BUILT_IN, typesOfCrd, type ResourceType } from './resources';

/** An error the API server answers with a `Status` object. */
export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details: Json = {},
  ) {
    super(message);
  }
}

export interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'ERROR' | 'BOOKMARK';
  object: Json;
}

interface Watcher {
  type: ResourceType;
  namespace: string | undefined;
  selector: Selector;
  send(e: WatchEvent): void;
}

export interface WriteRecord {
  verb: 'create' | 'update' | 'patch' | 'apply' | 'delete';
  resource: string;
  namespace: string | undefined;
  name: string;
  manager: string;
  /** The request changed the stored object (an apply or patch that changes nothing does not). */
  changed: boolean;
}

const typeKey = (t: Pick<ResourceType, 'group' | 'plural'>) => `${t.group}/${t.plural}`;
const objKey = (ns: string | undefined, name: string) => `${ns ?? ''}/${name}`;
const meta = (o: Json) => o.metadata as Json & { name: string; namespace?: string; labels?: Record<string, string> };

// --- label selectors --------------------------------------------------------------------

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

const matches = (sel: Selector, o: Json) => sel.every((r) => r(meta(o).labels ?? {}));

/**
 * The state and semantics of the test API server, independent of HTTP: typed storage with a
 * global resourceVersion, optimistic concurrency, watches with a bounded history (410 Gone past
 * it), server-side apply with field managers, status subresources, finalizers and
 * `deletionTimestamp`, namespace deletion, background garbage collection by `ownerReferences`,
 * and CRDs that register new types with schema validation and defaulting.
 */
export class Store {
  private rv = 1;
  private readonly types = new Map<string, ResourceType>();
  private readonly schemas = new Map<string, CompiledSchema>();
  private readonly objects = new Map<string, Map<string, Json>>();
  private readonly history = new Map<string, { rv: number; event: WatchEvent; namespace: string | undefined }[]>();
  /** Watches may start from resourceVersions at or after this one (older ones get 410 Gone). */
  private oldestWatchable = 1;
  private readonly watchers = new Set<Watcher>();
  readonly writes: WriteRecord[] = [];

  constructor(private readonly historySize = 1000) {
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
    if (!o) throw this.notFound(t, name);
    return structuredClone(o);
  }

  find(t: ResourceType, ns: string | undefined, name: string): Json | undefined {
    const o = this.objects.get(typeKey(t))!.get(objKey(t.namespaced ? ns : undefined, name));
    return o && structuredClone(o);
  }

  list(t: ResourceType, ns: string | undefined, selector: Selector, fieldSelector?: string): Json[] {
    const byName = fieldSelector && /^metadata\.name=(.+)$/.exec(fieldSelector)?.[1];
    return [...this.objects.get(typeKey(t))!.values()]
      .filter((o) => (!t.namespaced || ns === undefined || meta(o).namespace === ns) && matches(selector, o) && (!byName || meta(o).name === byName))
      .sort((a, b) => objKey(meta(a).namespace, meta(a).name).localeCompare(objKey(meta(b).namespace, meta(b).name)))
      .map((o) => structuredClone(o));
  }

  // --- writes --------------------------------------------------------------------------

  create(t: ResourceType, ns: string | undefined, body: Json, manager: string, dryRun = false): Json {
    const name = meta(body)?.name;
    if (!name) throw new ApiError(422, 'Invalid', `${t.kind} is invalid: metadata.name: Required value: name is required`);
    // RBAC objects' names are path segments (`system:controller:…`), every other kind's a DNS subdomain.
    const rbacName = t.group === 'rbac.authorization.k8s.io' && !/[/%]/.test(name) && name !== '.' && name !== '..';
    if (!rbacName && (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(name) || name.length > 253)) {
      throw this.invalid(t, name, [{ field: 'metadata.name', message: `Invalid value: "${name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.'` }]);
    }
    this.checkNamespace(t, ns);
    if (this.find(t, ns, name)) throw new ApiError(409, 'AlreadyExists', `${t.plural}${t.group ? `.${t.group}` : ''} "${name}" already exists`, this.detailsOf(t, name));
    const obj: Json = structuredClone(body);
    obj.apiVersion = apiVersionOf(t);
    obj.kind = t.kind;
    const m = meta(obj);
    if (t.namespaced) m.namespace = ns;
    else delete m.namespace;
    if (t.status && t.group !== 'apiextensions.k8s.io') delete obj.status;
    this.admit(t, obj, undefined);
    Object.assign(m, { uid: randomUUID(), creationTimestamp: this.now(), generation: 1 });
    if (t.kind === 'Namespace') obj.status = { phase: 'Active' };
    m.managedFields = recordUpdate({ before: undefined, after: obj, manager, scope: 'main', apiVersion: apiVersionOf(t), now: this.now() });
    if (dryRun) return obj;
    return this.store(t, obj, 'ADDED', { verb: 'create', manager, changed: true });
  }

  /** PUT: the whole object (or, with `scope: 'status'`, its status), at the given resourceVersion if any. */
  update(t: ResourceType, ns: string | undefined, name: string, body: Json, manager: string, scope: 'main' | 'status', dryRun = false): Json {
    const live = this.get(t, ns, name);
    const rv = meta(body)?.resourceVersion;
    if (rv !== undefined && rv !== meta(live).resourceVersion) throw this.conflict(t, name);
    return this.write(t, live, this.merged(t, live, body, scope), manager, scope, 'update', dryRun);
  }

  patch(t: ResourceType, ns: string | undefined, name: string, apply: (live: Json) => Json, manager: string, scope: 'main' | 'status', dryRun = false): Json {
    const live = this.get(t, ns, name);
    const patched = apply(structuredClone(live));
    const rv = meta(patched)?.resourceVersion;
    if (rv !== undefined && rv !== meta(live).resourceVersion) throw this.conflict(t, name);
    return this.write(t, live, this.merged(t, live, patched, scope), manager, scope, 'patch', dryRun);
  }

  /** Server-side apply (`application/apply-patch+yaml`); creates the object when it does not exist. */
  apply(t: ResourceType, ns: string | undefined, name: string, applied: Json, manager: string, force: boolean, scope: 'main' | 'status', dryRun = false): Json {
    if (meta(applied)?.name !== name) throw new ApiError(400, 'BadRequest', `the name of the object (${String(meta(applied)?.name)}) does not match the name on the URL (${name})`);
    const live = this.find(t, ns, name);
    if (!live && scope === 'status') throw this.notFound(t, name);
    const now = this.now();
    const res = serverSideApply({ live, applied, manager, force, scope, apiVersion: apiVersionOf(t), now });
    if (res.conflicts.length && !force) {
      const causes = res.conflicts.map((c) => ({ type: 'FieldManagerConflict', message: `conflict with "${c.manager}"`, field: `.${c.path.join('.')}` }));
      throw new ApiError(409, 'Conflict', `Apply failed with ${causes.length} conflict(s): ${causes.map((c) => `${c.message}: ${c.field}`).join('; ')}`, {
        ...this.detailsOf(t, name),
        causes,
      });
    }
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
      Object.assign(meta(obj), { uid: randomUUID(), creationTimestamp: now, generation: 1 });
      if (t.kind === 'Namespace') obj.status = { phase: 'Active' };
      if (dryRun) return obj;
      return this.store(t, obj, 'ADDED', { verb: 'apply', manager, changed: true });
    }
    return this.write(t, live, obj, manager, scope, 'apply', dryRun, res.managedFields);
  }

  delete(t: ResourceType, ns: string | undefined, name: string, manager: string, opts: { dryRun?: boolean; preconditionUid?: string } = {}): Json {
    const live = this.get(t, ns, name);
    if (opts.preconditionUid && opts.preconditionUid !== meta(live).uid) throw this.conflict(t, name);
    if (opts.dryRun) return live;
    const m = meta(live);
    if (t.kind === 'Namespace') {
      if (!m.deletionTimestamp) {
        m.deletionTimestamp = this.now();
        live.status = { phase: 'Terminating' };
        this.store(t, live, 'MODIFIED', { verb: 'delete', manager, changed: true });
      }
      this.settle();
      return this.find(t, ns, name) ?? live;
    }
    if ((m.finalizers as string[] | undefined)?.length) {
      if (!m.deletionTimestamp) {
        m.deletionTimestamp = this.now();
        return this.store(t, live, 'MODIFIED', { verb: 'delete', manager, changed: true });
      }
      return live;
    }
    this.remove(t, live, { verb: 'delete', manager });
    this.settle();
    return live;
  }

  // --- internals -----------------------------------------------------------------------

  /** PUT/PATCH keep what the request cannot change: identity, and status or spec by scope. */
  private merged(t: ResourceType, live: Json, body: Json, scope: 'main' | 'status'): Json {
    const next: Json = structuredClone(body);
    next.apiVersion = live.apiVersion;
    next.kind = live.kind;
    const m = meta(next);
    const lm = meta(live);
    for (const k of ['name', 'namespace', 'uid', 'creationTimestamp', 'generation', 'deletionTimestamp', 'managedFields']) {
      if (lm[k] === undefined) delete m[k];
      else m[k] = lm[k];
    }
    if (t.status) {
      if (scope === 'status') return { ...structuredClone(live), status: next.status, metadata: { ...meta(live) } };
      if (live.status === undefined) delete next.status;
      else next.status = live.status;
    }
    return next;
  }

  private write(
    t: ResourceType,
    live: Json,
    next: Json,
    manager: string,
    scope: 'main' | 'status',
    verb: WriteRecord['verb'],
    dryRun: boolean,
    managedFields?: unknown,
  ): Json {
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
    const specChanged = !sameJson(strip(live), strip(next));
    m.generation = (lm.generation as number) + (specChanged && scope === 'main' ? 1 : 0);
    m.managedFields = managedFields ?? recordUpdate({ before: live, after: next, manager, scope, apiVersion: apiVersionOf(t), now: this.now() });
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
    if (t.kind === 'CustomResourceDefinition') {
      const types = typesOfCrd(obj as Parameters<typeof typesOfCrd>[0]);
      for (const nt of types) {
        try {
          if (nt.schema) compileCrdSchema(nt.schema);
        } catch (err) {
          throw this.invalid(t, meta(obj).name, [{ field: 'spec.versions.schema', message: (err as Error).message }]);
        }
      }
      return;
    }
    const schema = this.schemas.get(typeKey(t));
    if (!schema) return;
    const errors = schema.admit(obj, old);
    if (errors.length) throw this.invalid(t, meta(obj).name, errors);
  }

  private store(t: ResourceType, obj: Json, type: 'ADDED' | 'MODIFIED', w: Pick<WriteRecord, 'verb' | 'manager' | 'changed'>): Json {
    this.rv += 1;
    const m = meta(obj);
    m.resourceVersion = String(this.rv);
    this.objects.get(typeKey(t))!.set(objKey(t.namespaced ? m.namespace : undefined, m.name), obj);
    this.writes.push({ ...w, resource: t.plural, namespace: m.namespace, name: m.name });
    this.emit(t, { type, object: obj });
    if (t.kind === 'CustomResourceDefinition') for (const nt of typesOfCrd(obj as Parameters<typeof typesOfCrd>[0])) this.register(nt);
    return structuredClone(obj);
  }

  private remove(t: ResourceType, obj: Json, w: Pick<WriteRecord, 'verb' | 'manager'>): void {
    this.rv += 1;
    const m = meta(obj);
    const gone = { ...obj, metadata: { ...m, resourceVersion: String(this.rv) } };
    this.objects.get(typeKey(t))!.delete(objKey(t.namespaced ? m.namespace : undefined, m.name));
    this.writes.push({ ...w, changed: true, resource: t.plural, namespace: m.namespace, name: m.name });
    this.emit(t, { type: 'DELETED', object: gone });
  }

  /**
   * What the controllers of a real control plane would do next, run to a fixed point after every
   * write: namespaces being deleted lose their contents (and go when empty), and objects whose
   * owners are all gone are deleted (background propagation).
   */
  private settle(): void {
    for (let changed = true; changed; ) {
      changed = false;
      const uids = new Set<string>();
      for (const objs of this.objects.values()) for (const o of objs.values()) uids.add(meta(o).uid as string);
      const namespaces = this.objects.get('/namespaces')!;
      for (const t of this.types.values()) {
        for (const o of [...this.objects.get(typeKey(t))!.values()]) {
          const m = meta(o);
          const owners = (m.ownerReferences as { uid: string }[] | undefined) ?? [];
          const orphaned = owners.length > 0 && owners.every((r) => !uids.has(r.uid));
          const ns = t.namespaced && namespaces.get(objKey(undefined, m.namespace!));
          const inTerminating = ns && meta(ns).deletionTimestamp;
          if ((orphaned || inTerminating) && !m.deletionTimestamp) {
            if ((m.finalizers as string[] | undefined)?.length) {
              m.deletionTimestamp = this.now();
              this.store(t, o, 'MODIFIED', { verb: 'delete', manager: 'garbage-collector', changed: true });
            } else {
              this.remove(t, o, { verb: 'delete', manager: orphaned ? 'garbage-collector' : 'namespace-controller' });
            }
            changed = true;
          }
        }
      }
      for (const ns of [...namespaces.values()]) {
        const m = meta(ns);
        if (!m.deletionTimestamp) continue;
        const empty = this.allTypes().every((t) => !t.namespaced || ![...this.objects.get(typeKey(t))!.values()].some((o) => meta(o).namespace === m.name));
        if (empty) {
          this.remove(this.types.get('/namespaces')!, ns, { verb: 'delete', manager: 'namespace-controller' });
          changed = true;
        }
      }
    }
  }

  private emit(t: ResourceType, event: WatchEvent): void {
    const ns = meta(event.object).namespace;
    const h = this.history.get(typeKey(t)) ?? [];
    h.push({ rv: this.rv, event: structuredClone(event), namespace: ns });
    if (h.length > this.historySize) {
      const dropped = h.shift()!;
      this.oldestWatchable = Math.max(this.oldestWatchable, dropped.rv);
    }
    this.history.set(typeKey(t), h);
    for (const w of this.watchers) {
      if (w.type !== t && typeKey(w.type) !== typeKey(t)) continue;
      if (w.namespace !== undefined && w.namespace !== ns) continue;
      if (!matches(w.selector, event.object)) continue;
      w.send(structuredClone(event));
    }
  }

  /**
   * Starts a watch after `fromRv` (a list's resourceVersion), replaying what happened since;
   * `undefined` or "0" starts with every current object as ADDED. Returns the stop function, or
   * throws 410 when `fromRv` is older than the history kept.
   */
  watch(t: ResourceType, ns: string | undefined, selector: Selector, fromRv: string | undefined, send: (e: WatchEvent) => void): () => void {
    const w: Watcher = { type: t, namespace: t.namespaced ? ns : undefined, selector, send };
    if (fromRv === undefined || fromRv === '' || fromRv === '0') {
      for (const o of this.list(t, ns, selector)) send({ type: 'ADDED', object: o });
    } else {
      const from = Number(fromRv);
      if (!Number.isInteger(from) || from < this.oldestWatchable - 1) {
        throw new ApiError(410, 'Expired', `too old resource version: ${fromRv} (${this.oldestWatchable})`);
      }
      for (const h of this.history.get(typeKey(t)) ?? []) {
        if (h.rv > from && (w.namespace === undefined || w.namespace === h.namespace) && matches(selector, h.event.object)) send(structuredClone(h.event));
      }
    }
    this.watchers.add(w);
    return () => this.watchers.delete(w);
  }

  /** Forgets every watch event so far: a watch from an older resourceVersion gets 410 Gone. */
  compact(): void {
    this.history.clear();
    this.oldestWatchable = this.rv + 1;
  }

  // --- errors and helpers --------------------------------------------------------------

  private checkNamespace(t: ResourceType, ns: string | undefined): void {
    if (!t.namespaced) return;
    const n = this.objects.get('/namespaces')!.get(objKey(undefined, ns!));
    if (!n) throw new ApiError(404, 'NotFound', `namespaces "${ns}" not found`, { name: ns, kind: 'namespaces' });
    if (meta(n).deletionTimestamp) {
      throw new ApiError(403, 'Forbidden', `${t.plural} is forbidden: unable to create new content in namespace ${ns} because it is being terminated`);
    }
  }

  private detailsOf(t: ResourceType, name: string): Json {
    return { name, ...(t.group ? { group: t.group } : {}), kind: t.plural };
  }

  private notFound(t: ResourceType, name: string): ApiError {
    return new ApiError(404, 'NotFound', `${t.plural}${t.group ? `.${t.group}` : ''} "${name}" not found`, this.detailsOf(t, name));
  }

  private conflict(t: ResourceType, name: string): ApiError {
    return new ApiError(
      409,
      'Conflict',
      `Operation cannot be fulfilled on ${t.plural}${t.group ? `.${t.group}` : ''} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
      this.detailsOf(t, name),
    );
  }

  private invalid(t: ResourceType, name: string, errors: FieldError[]): ApiError {
    const what = `${t.kind}${t.group ? `.${t.group}` : ''} "${name}"`;
    return new ApiError(422, 'Invalid', `${what} is invalid: ${errors.map((e) => `${e.field}: ${e.message}`).join(', ')}`, {
      ...this.detailsOf(t, name),
      kind: t.kind,
      causes: errors.map((e) => ({ reason: 'FieldValueInvalid', message: e.message, field: e.field })),
    });
  }

  private now(): string {
    return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  }
}

/** What `metadata.generation` counts: changes to anything but metadata and status. */
function strip(o: Json): Json {
  const { metadata: _m, status: _s, ...rest } = o;
  return rest;
}
