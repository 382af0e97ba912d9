/**
 * A CRD's CEL validation rules (`x-kubernetes-validations`) as kube-apiserver applies them
 * (k8s.io/apiextensions-apiserver `pkg/apiserver/schema/cel`): every rule is compiled when the CRD
 * is created (one that does not compile makes the CRD Invalid), then evaluated on every write for
 * each value at its place in the schema (through `properties`, list `items` and map
 * `additionalProperties`), with `self` bound to that value. Integers are CEL ints, property names
 * that are CEL reserved words or hold `.`, `-`, `/` or `__` are escaped as Kubernetes escapes them
 * (`__namespace__`, `__dash__`, ...). A rule that is false, or that fails to evaluate (a missing
 * key read without `has()`), refuses the write with its message, as the real server does.
 *
 * Transition rules (those that name `oldSelf`) are evaluated only where the old value correlates,
 * which here means a path of object properties alone; the real server also correlates map-type
 * lists by key, which no CRD the kit uses relies on. Not modelled: `messageExpression`,
 * `fieldPath`, `reason`, `optionalOldSelf` and the cost budget.
 */
import { parse } from '@marcbachmann/cel-js';
import type { Json } from './fields';

export interface CelFieldError {
  field: string;
  message: string;
}

type Step = { prop: string } | 'items' | 'values';
type Compiled = (ctx: Record<string, unknown>) => unknown;

interface Rule {
  steps: Step[];
  schema: Json;
  rule: string;
  message: string;
  transition: boolean;
  run: Compiled;
}

const isMap = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

// CEL's reserved words (cel-spec, "Syntax"), escaped by Kubernetes when used as property names.
const RESERVED = new Set(['true', 'false', 'null', 'in', 'as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if', 'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while']);

export function escapeProperty(name: string): string {
  if (RESERVED.has(name)) return `__${name}__`;
  return name.replace(/__/g, '__underscores__').replace(/\./g, '__dot__').replace(/-/g, '__dash__').replace(/\//g, '__slash__');
}

/** A JSON value as CEL sees it under its schema: integers as ints, property names escaped. */
function toCel(schema: Json | undefined, v: unknown): unknown {
  // Array.from, not map: a list decoded by another realm's code (structuredClone under Jest) keeps
  // that realm's Array through map, and the CEL library does not take it as a list.
  if (Array.isArray(v)) return Array.from(v, (item) => toCel(isMap(schema?.items) ? schema.items : undefined, item));
  if (isMap(v)) {
    const props = (schema?.properties ?? {}) as Record<string, Json>;
    const extra = isMap(schema?.additionalProperties) ? schema.additionalProperties : undefined;
    return Object.fromEntries(Object.entries(v).map(([k, sub]) => [props[k] ? escapeProperty(k) : k, toCel(props[k] ?? extra, sub)]));
  }
  if (typeof v === 'number' && (schema?.type === 'integer' || Number.isInteger(v))) return BigInt(v);
  return v;
}

/**
 * The CEL library's has() takes only a chain of fields from an identifier; CEL (and Gateway API's
 * rules) also allow one through an index, `has(self.matches[0].path)`. On a JSON object that test
 * is the map membership test, which the library has: `'path' in self.matches[0]`.
 */
const hasThroughIndex = (rule: string) => rule.replace(/has\(([^()]*\[[^()]*\])\.([A-Za-z_][A-Za-z0-9_]*)\)/g, "('$2' in $1)");

function collect(s: Json, steps: Step[], out: Rule[]): void {
  for (const r of (s['x-kubernetes-validations'] as { rule: string; message?: string }[] | undefined) ?? []) {
    let run: Compiled;
    try {
      run = parse(hasThroughIndex(r.rule)) as unknown as Compiled;
    } catch (err) {
      throw new Error(`compilation failed for rule "${r.rule}": ${(err as Error).message.split('\n')[0]}`);
    }
    out.push({ steps, schema: s, rule: r.rule, message: r.message ?? `failed rule: ${r.rule}`, transition: /\boldSelf\b/.test(r.rule), run });
  }
  for (const [p, sub] of Object.entries((s.properties as Record<string, Json> | undefined) ?? {})) collect(sub, [...steps, { prop: p }], out);
  if (isMap(s.items)) collect(s.items, [...steps, 'items'], out);
  if (isMap(s.additionalProperties)) collect(s.additionalProperties, [...steps, 'values'], out);
}

/** Every value at `steps` in `v`, with the field path kube-apiserver names in its errors. */
function* valuesAt(v: unknown, steps: Step[], field: string): Generator<[unknown, string]> {
  if (v === undefined || v === null) return;
  if (!steps.length) {
    yield [v, field];
    return;
  }
  const [step, ...rest] = steps;
  if (step === 'items') {
    if (Array.isArray(v)) for (const [i, item] of v.entries()) yield* valuesAt(item, rest, `${field}[${i}]`);
  } else if (step === 'values') {
    if (isMap(v)) for (const [k, item] of Object.entries(v)) yield* valuesAt(item, rest, `${field}[${k}]`);
  } else if (isMap(v)) {
    yield* valuesAt(v[step!.prop], rest, field ? `${field}.${step!.prop}` : step!.prop);
  }
}

const shown = (v: unknown) => (isMap(v) ? '"object"' : Array.isArray(v) ? '"array"' : JSON.stringify(v));

export interface CompiledRules {
  check(obj: Json, old: Json | undefined): CelFieldError[];
}

/** Throws, naming the rule, when one does not compile (the CRD is then Invalid). */
export function compileCelRules(schema: Json): CompiledRules {
  const rules: Rule[] = [];
  collect(schema, [], rules);
  return {
    check(obj, old) {
      const errors: CelFieldError[] = [];
      for (const r of rules) {
        if (r.transition && (!old || r.steps.some((s) => typeof s !== 'object'))) continue;
        for (const [value, field] of valuesAt(obj, r.steps, '')) {
          let oldValue: unknown;
          if (r.transition) {
            oldValue = [...valuesAt(old, r.steps, '')][0]?.[0];
            if (oldValue === undefined) continue;
          }
          let ok: unknown;
          try {
            ok = r.run(r.transition ? { self: toCel(r.schema, value), oldSelf: toCel(r.schema, oldValue) } : { self: toCel(r.schema, value) });
          } catch (err) {
            errors.push({ field: field || '<root>', message: `Invalid value: ${shown(value)}: ${r.message}: ${(err as Error).message.split('\n')[0]}` });
            continue;
          }
          if (ok !== true) errors.push({ field: field || '<root>', message: `Invalid value: ${shown(value)}: ${r.message}` });
        }
      }
      return errors;
    },
  };
}
