import Ajv, { type ValidateFunction } from 'ajv';
import type { Json } from './fields';

/**
 * What the API server does with a custom resource against its CRD's structural schema:
 * defaulting, pruning of unknown fields, OpenAPI validation, and the CEL transition rule the
 * kit uses (`self == oldSelf`). Any other CEL rule is refused when the CRD is created, so an
 * unsupported rule can never pass silently.
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

interface Rule {
  path: string[];
  rule: string;
  message: string;
}

function rulesOf(s: Json, path: string[] = []): Rule[] {
  const out: Rule[] = [];
  for (const r of (s['x-kubernetes-validations'] as { rule: string; message?: string }[] | undefined) ?? []) {
    out.push({ path, rule: r.rule, message: r.message ?? `failed rule: ${r.rule}` });
  }
  for (const [p, sub] of Object.entries((s.properties as Record<string, Json> | undefined) ?? {})) out.push(...rulesOf(sub, [...path, p]));
  return out;
}

export interface CompiledSchema {
  /** Defaults and prunes in place, then validates; `old` is the stored object on update. */
  admit(obj: Json, old: Json | undefined): FieldError[];
}

export function compileCrdSchema(schema: Json): CompiledSchema {
  const rules = rulesOf(schema);
  for (const r of rules) {
    if (r.rule.replace(/\s+/g, ' ').trim() !== 'self == oldSelf') {
      throw new Error(`test API server: unsupported CEL rule "${r.rule}" at ${r.path.join('.')}`);
    }
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
      if (old) {
        for (const r of rules) {
          const get = (o: unknown) => r.path.reduce<unknown>((v, k) => (isMap(v) ? v[k] : undefined), o);
          const before = get(old);
          if (before !== undefined && JSON.stringify(before) !== JSON.stringify(get(obj))) {
            errors.push({ field: r.path.join('.'), message: `Invalid value: ${JSON.stringify(get(obj))}: ${r.message}` });
          }
        }
      }
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
