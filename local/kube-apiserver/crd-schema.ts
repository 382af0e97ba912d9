import Ajv, { type ValidateFunction } from 'ajv';
import { compileCelRules, type CompiledRules } from './crd-cel';
import type { Json } from './fields';

/**
 * What the API server does with a custom resource against its CRD's structural schema:
 * defaulting, pruning of unknown fields, OpenAPI validation, then the CRD's CEL rules
 * (crd-cel.ts: a rule that does not compile makes the CRD Invalid, so none passes silently).
 */
export interface FieldError {
  field: string;
  message: string;
}

const isMap = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function toAjvSchema(s: Json): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(s)) {
    if (k.startsWith('x-kubernetes-')) continue;
    if (k === 'properties') out.properties = Object.fromEntries(Object.entries(v as Record<string, Json>).map(([p, sub]) => [p, toAjvSchema(sub)]));
    else if (k === 'items' || (k === 'additionalProperties' && isMap(v))) out[k] = toAjvSchema(v as Json);
    else out[k] = v;
  }
  // Kubernetes' OpenAPI v3 keeps draft 4's boolean exclusive bounds; ajv (draft 7) wants numbers.
  for (const [flag, bound] of [['exclusiveMaximum', 'maximum'], ['exclusiveMinimum', 'minimum']] as const) {
    if (typeof s[flag] === 'boolean') {
      delete out[flag];
      if (s[flag] === true) {
        out[flag] = s[bound];
        delete out[bound];
      }
    }
  }
  if (s['x-kubernetes-int-or-string']) {
    delete out.type;
    out.anyOf = [{ type: 'integer' }, { type: 'string' }];
  }
  return out;
}

export interface CompiledSchema {
  /** Defaults and prunes in place, then validates; `old` is the stored object on update. */
  admit(obj: Json, old: Json | undefined): FieldError[];
}

export function compileCrdSchema(schema: Json): CompiledSchema {
  let rules: CompiledRules;
  try {
    rules = compileCelRules(schema);
  } catch (err) {
    throw new Error(`test API server: ${(err as Error).message}`);
  }
  const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false });
  const validate: ValidateFunction = ajv.compile(toAjvSchema(schema));
  return {
    admit(obj, old) {
      applyDefaults(schema, obj);
      prune(schema, obj, true);
      const errors: FieldError[] = [];
      if (!validate(obj)) {
        for (const e of validate.errors ?? []) {
          const field = e.instancePath.split('/').filter(Boolean).join('.');
          errors.push({ field: field || '<root>', message: `Invalid value: ${e.message}` });
        }
      }
      // As kube-apiserver, CEL rules run on what passed the OpenAPI checks.
      if (!errors.length) errors.push(...rules.check(obj, old));
      return errors;
    },
  };
}

function applyDefaults(s: Json, v: unknown): void {
  if (isMap(v) && isMap(s.properties)) {
    for (const [p, sub] of Object.entries(s.properties as Record<string, Json>)) {
      if (v[p] === undefined && sub.default !== undefined) v[p] = structuredClone(sub.default);
      if (v[p] !== undefined) applyDefaults(sub, v[p]);
    }
  }
  if (isMap(v) && isMap(s.additionalProperties)) for (const sub of Object.values(v)) applyDefaults(s.additionalProperties, sub);
  if (Array.isArray(v) && isMap(s.items)) for (const item of v) applyDefaults(s.items, item);
}

function prune(s: Json, v: unknown, root = false): void {
  if (s['x-kubernetes-preserve-unknown-fields']) return;
  if (isMap(v) && isMap(s.properties)) {
    for (const k of Object.keys(v)) {
      // metadata is the server's, not the schema's; apiVersion and kind always stay.
      if (root && (k === 'metadata' || k === 'apiVersion' || k === 'kind')) continue;
      const sub = (s.properties as Record<string, Json>)[k];
      if (!sub && !s.additionalProperties) delete v[k];
      else if (sub) prune(sub, v[k]);
    }
  } else if (isMap(v) && isMap(s.additionalProperties)) {
    for (const sub of Object.values(v)) prune(s.additionalProperties, sub);
  } else if (isMap(v) && s.type === 'object' && !s.additionalProperties && !root) {
    // An object with neither properties nor additionalProperties keeps nothing.
    for (const k of Object.keys(v)) delete v[k];
  }
  if (Array.isArray(v) && isMap(s.items)) for (const item of v) prune(s.items, item);
}
