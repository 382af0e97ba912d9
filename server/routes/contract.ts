import type { Request } from 'express';
import type Joi from 'joi';
import { ERROR_STATUS } from '../../core/http/errors';
import { LEGACY_PREFIX, rootAliasOf, type AliasMatch } from '../http/aliases';
import type { Method, RouteDef } from './table';

/** The subset of JSON Schema a query or path parameter's rules translate to. */
export interface ParameterSchema {
  type?: 'integer' | 'number' | 'string' | 'boolean';
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  pattern?: string;
  enum?: unknown[];
  default?: unknown;
  anyOf?: ParameterSchema[];
}

export interface ParameterContract {
  name: string;
  in: 'query' | 'path';
  required: boolean;
  schema: ParameterSchema;
}

interface Described {
  type: string;
  flags?: { presence?: string; default?: unknown; only?: boolean };
  rules?: { name: string; args?: { limit?: number; regex?: string } }[];
  allow?: unknown[];
  matches?: { schema: Described }[];
  metas?: Record<string, unknown>[];
  keys?: Record<string, Described>;
}

/**
 * A joi rule as JSON Schema: what the OpenAPI document must say about the parameter. A value
 * fixed per deployment (`.meta({ setting })`, such as `chain`) is a plain string there: the
 * document describes every deployment.
 */
function toSchema(d: Described): ParameterSchema {
  if (d.type === 'alternatives') return { anyOf: (d.matches ?? []).map((m) => toSchema(m.schema)) };
  const s: ParameterSchema = {};
  const integer = d.rules?.some((r) => r.name === 'integer');
  switch (d.type) {
    case 'number':
      s.type = integer ? 'integer' : 'number';
      break;
    case 'string':
    case 'boolean':
      s.type = d.type;
      break;
    default:
      throw new Error(`no JSON Schema for a joi ${d.type} parameter`);
  }
  for (const r of d.rules ?? []) {
    if (r.name === 'min' && d.type === 'number') s.minimum = r.args!.limit;
    if (r.name === 'max' && d.type === 'number') s.maximum = r.args!.limit;
    if (r.name === 'max' && d.type === 'string') s.maxLength = r.args!.limit;
    if (r.name === 'pattern') s.pattern = r.args!.regex!.replace(/^\/(.*)\/[a-z]*$/, '$1');
  }
  const setting = d.metas?.some((m) => 'setting' in m);
  if (d.flags?.only && d.allow && !setting) s.enum = d.allow;
  if (d.flags?.default !== undefined) s.default = d.flags.default;
  return s;
}

function fromObject(schema: Joi.ObjectSchema | undefined, where: 'query' | 'path'): ParameterContract[] {
  if (!schema) return [];
  const d = schema.describe() as Described;
  return Object.entries(d.keys ?? {}).map(([name, k]) => ({ name, in: where, required: where === 'path' || k.flags?.presence === 'required', schema: toSchema(k) }));
}

/**
 * The query and path parameters a route accepts, from its joi rules: the OpenAPI document is
 * checked against these (`test/unit/openapi.test.ts`). A route whose handler picks its query
 * rules (`query: 'custom'`) documents the union of its sets, each parameter with the rules of
 * the first set that names it.
 */
export function parametersOf(route: RouteDef): ParameterContract[] {
  const sets = route.query === 'custom' ? (route.documentedQuery ?? []).map((q) => fromObject(q, 'query')) : [fromObject(route.query, 'query')];
  const merged = new Map<string, ParameterContract>();
  for (const p of sets.flat()) if (!merged.has(p.name)) merged.set(p.name, p);
  // Where the handler chooses between rule sets, a parameter is required only if every set requires it.
  for (const [name, p] of merged) merged.set(name, { ...p, required: sets.every((set) => set.some((q) => q.name === name && q.required)) });
  return [...fromObject(route.params, 'path'), ...merged.values()];
}

/**
 * Every HTTP status an operation can answer with: 200; 304 for a conditional read; 400 for
 * its rules (every route refuses unknown parameters) and malformed percent-encoding; 401 where
 * a wallet signs; the handler's own refusals; 429 (its tier, or the failed-authentication
 * budget); 500, 503 and 504 when a store fails, is unreachable or is too slow.
 */
export function statusesOf(route: RouteDef): number[] {
  const signed = route.access.by === 'wallet' || route.alternative?.access.by === 'wallet';
  const own = (route.errors ?? []).map((c) => ERROR_STATUS[c]);
  const all = [200, ...(route.accepted ? [202] : []), ...(route.conditional ? [304] : []), 400, ...(signed ? [401] : []), ...own, 429, 500, 503, 504];
  return [...new Set(all)].sort((a, b) => a - b);
}

/** A route's path as the OpenAPI document names it: under the prefix, `{param}` for `:param`. */
export const openapiPath = (prefix: string, route: Pick<RouteDef, 'path'>): string => `${prefix}${route.path.replace(/:(\w+)/g, '{$1}')}`;

/** A deprecated alias of one operation, as the OpenAPI document declares it (D-168). */
export interface AliasOperation {
  kind: AliasMatch['kind'];
  method: Method;
  /** The alias's path as the document names it (`/config`, `/api/markets/{marketId}`). */
  path: string;
  /** The canonical operation's path in the document. */
  canonicalPath: string;
  /** The operation as the alias serves it: for `/orders?tx=`, the public lookup's rules and access only. */
  route: RouteDef;
  /** The query parameter without which the request is not the alias (required in the document). */
  query?: string;
}

/**
 * The operation a query-conditioned alias serves: the rule set naming that parameter, and the
 * access the route gives a request carrying it (its `alternative`, if that is what applies).
 */
function narrowed(route: RouteDef, name: string): RouteDef {
  const sets = route.query === 'custom' ? (route.documentedQuery ?? []) : [route.query];
  const set = sets.find((s) => name in ((s.describe() as Described).keys ?? {}));
  if (!set) throw new Error(`${route.path}: no query rules name ${name}`);
  const alt = route.alternative?.when({ query: { [name]: 'x' } } as unknown as Request) ? route.alternative.access : route.access;
  return { ...route, query: set, documentedQuery: undefined, access: alt, alternative: undefined };
}

/**
 * Every alias operation of a route table: the root aliases of the operations they cover, then
 * every operation under the legacy `/api/` prefix. The documents' alias operations are generated
 * from this, and the Prism run sends traffic to each.
 */
export function aliasOperationsOf(prefix: string, routes: readonly RouteDef[]): AliasOperation[] {
  const root: AliasOperation[] = [];
  for (const route of routes) {
    const alias = rootAliasOf(route.path);
    if (!alias) continue;
    root.push({
      kind: 'root',
      method: route.method,
      path: openapiPath('', route),
      canonicalPath: openapiPath(prefix, route),
      route: alias.query === undefined ? route : narrowed(route, alias.query),
      ...(alias.query === undefined ? {} : { query: alias.query }),
    });
  }
  const legacy = routes.map(
    (route): AliasOperation => ({ kind: 'legacy-prefix', method: route.method, path: openapiPath(LEGACY_PREFIX, route), canonicalPath: openapiPath(prefix, route), route }),
  );
  return [...root, ...legacy];
}
