/**
 * What a write must pass, and what it may change, before the store keeps it: object names, the
 * real server's defaulting, schema validation (a CRD's own schemas must compile, a custom
 * resource must meet its CRD's, crd-schema.ts), what PUT and PATCH keep of the live object,
 * `metadata.generation`, and the managed fields each write records (fields.ts: server-side
 * apply and its conflicts).
 */
import { randomUUID } from 'node:crypto';
import { compileCrdSchema, type CompiledSchema } from './crd-schema';
import { ApiError, detailsOf, invalid } from './errors';
import { recordUpdate, sameJson, serverSideApply, type ApplyResult, type Json } from './fields';
import { meta } from './objects';
import { apiVersionOf, typesOfCrd, type ResourceType } from './resources';

export type Scope = 'main' | 'status';

/** The name of an object to create: required, an RFC 1123 subdomain, or for RBAC objects any path segment. */
export function checkName(t: ResourceType, name: string | undefined): string {
  if (!name) throw new ApiError(422, 'Invalid', `${t.kind} is invalid: metadata.name: Required value: name is required`);
  if (t.group === 'rbac.authorization.k8s.io') {
    // RBAC objects take any path segment (`system:controller:…`, `operator:namespace`), as the real server's validation does.
    if (name === '.' || name === '..' || /[/%]/.test(name)) {
      throw invalid(t, name, [{ field: 'metadata.name', message: `Invalid value: "${name}": may not be '.' or '..' and may not contain '/' or '%'` }]);
    }
  } else if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(name) || name.length > 253) {
    throw invalid(t, name, [{ field: 'metadata.name', message: `Invalid value: "${name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.'` }]);
  }
  return name;
}

/** Defaults and validates an object about to be stored (`old`: the live one, for an update). */
export function admit(t: ResourceType, obj: Json, old: Json | undefined, schema: CompiledSchema | undefined): void {
  // The real server's defaulting for a built-in kind users create by hand.
  if (t.group === '' && t.kind === 'Secret' && !obj.type) obj.type = 'Opaque';
  // Every namespace carries its name as a label, set (and set back) by the server's defaulting,
  // which runs before admission: policies and selectors see it.
  if (t.group === '' && t.kind === 'Namespace') {
    const m = meta(obj);
    m.labels = { ...(m.labels as Json | undefined), 'kubernetes.io/metadata.name': m.name };
  }
  if (t.kind === 'CustomResourceDefinition') {
    const types = typesOfCrd(obj as Parameters<typeof typesOfCrd>[0]);
    for (const nt of types) {
      try {
        if (nt.schema) compileCrdSchema(nt.schema);
      } catch (err) {
        throw invalid(t, meta(obj).name, [{ field: 'spec.versions.schema', message: (err as Error).message }]);
      }
    }
    return;
  }
  if (!schema) return;
  const errors = schema.admit(obj, old);
  if (errors.length) throw invalid(t, meta(obj).name, errors);
}

/** What a new object is given: identity, creation time, the first generation (and a namespace's phase). */
export function stamp(t: ResourceType, obj: Json, now: string): void {
  Object.assign(meta(obj), { uid: randomUUID(), creationTimestamp: now, generation: 1 });
  if (t.kind === 'Namespace') obj.status = { phase: 'Active' };
}

/** PUT/PATCH keep what the request cannot change: identity, and status or spec by scope. */
export function merged(t: ResourceType, live: Json, body: Json, scope: Scope): Json {
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

/** What `metadata.generation` counts: changes to anything but metadata and status, through the main endpoint. */
export function nextGeneration(live: Json, next: Json, scope: Scope): number {
  const specChanged = !sameJson(strip(live), strip(next));
  return (meta(live).generation as number) + (specChanged && scope === 'main' ? 1 : 0);
}

function strip(o: Json): Json {
  const { metadata: _m, status: _s, ...rest } = o;
  return rest;
}

/** The managed fields after an update, create, patch (not an apply): the manager owns what it changed. */
export function updatedFields(t: ResourceType, before: Json | undefined, after: Json, manager: string, scope: Scope, now: string): unknown {
  return recordUpdate({ before, after, manager, scope, apiVersion: apiVersionOf(t), now });
}

/** Server-side apply of `applied` over `live`; 409 listing the conflicts unless forced. */
export function applyFields(t: ResourceType, name: string, o: { live: Json | undefined; applied: Json; manager: string; force: boolean; scope: Scope; now: string }): ApplyResult {
  const res = serverSideApply({ ...o, apiVersion: apiVersionOf(t) });
  if (res.conflicts.length && !o.force) {
    const causes = res.conflicts.map((c) => ({ type: 'FieldManagerConflict', message: `conflict with "${c.manager}"`, field: `.${c.path.join('.')}` }));
    throw new ApiError(409, 'Conflict', `Apply failed with ${causes.length} conflict(s): ${causes.map((c) => `${c.message}: ${c.field}`).join('; ')}`, {
      ...detailsOf(t, name),
      causes,
    });
  }
  return res;
}
