import express, { type NextFunction, type Request, type RequestHandler, type Response, type Router } from 'express';
import type Joi from 'joi';
import { match } from 'path-to-regexp';
import type { Db } from '../../core/db';
import type { ChainAccess } from '../../core/tx';
import type { Tier } from '../../core/limits';
import type { Metrics } from '../../core/telemetry/metrics';
import type { AdminGate } from '../http/admin-gate';
import { ApiError, type ErrorCode, type ErrorWriter } from '../http/errors';
import type { HotCache } from '../read/hot-cache';
import { parse, parseBody } from '../http/validate';
import type { Guards } from './guards';

export type Method = 'GET' | 'POST' | 'DELETE';

/**
 * Who may call a route and which rate-limit tier it spends: `ip`, public and limited per
 * client address; `wallet`, signed by a wallet (spec 5) and then limited per wallet (D-43).
 */
export type Access =
  | {
      by: 'ip' | 'wallet';
      tier: Tier;
    }
  /** The appendix variant: limited by the caller's API key plan, or Free by IP without a key (D-154). */
  | { by: 'plan' };

/** What a handler receives besides the request: its query and path parameters, validated. */
export interface RouteInput<Q, P, B = unknown> {
  query: Q;
  params: P;
  /** The JSON body, validated by the route's `body` rules (POST routes that take one). */
  body: B;
}

/**
 * One served operation: the route table is a list of these, and it is the only place a route
 * is declared. It mounts the routes, answers 405 for a known path with another method, and is
 * what the OpenAPI document is checked against.
 */
export interface RouteDef<Q = Record<string, unknown>, P = Record<string, string>> {
  method: Method;
  /** Relative to the presentation's prefix, in Express syntax (`/markets/:marketId`). */
  path: string;
  access: Access;
  /**
   * Another access for some requests of the same operation: `/orders?tx=` is the public trades
   * lookup while `/orders` is the caller's own orders (spec 4.1).
   */
  alternative?: { when: (req: Request) => boolean; access: Access };
  /**
   * The query rules (unknown parameters are refused), or `custom` where the handler picks its
   * rules from the request (documented beside the route).
   */
  query: Joi.ObjectSchema<Q> | 'custom';
  /** With `query: 'custom'`: the rule sets the handler chooses from, for the API contract. */
  documentedQuery?: Joi.ObjectSchema[];
  /** The path parameter rules, for paths with parameters. */
  params?: Joi.ObjectSchema<P>;
  /** Only for ADMIN_WALLETS (D-146): audited, 403 FORBIDDEN for other wallets. Needs `by: 'wallet'`. */
  admin?: boolean;
  /** The JSON body rules (400 VALIDATION_ERROR with `details`), for routes that take a body. */
  body?: Joi.ObjectSchema;
  /**
   * The refusals the handler itself makes (NOT_FOUND, ...), beyond those every route can give
   * (validation, limits, authentication, store failures, timeout): the contract lists them.
   */
  errors?: ErrorCode[];
  /** Answers 304 to a current `If-None-Match` (a hot read, D-48). */
  conditional?: boolean;
  /** Answers 202 when the work it asked for is not finished within its wait (D-164). */
  accepted?: boolean;
  /** Answers, or fails (thrown or rejected); a hot read answers a hit at once, without a promise. */
  handler: (req: Request, res: Response, input: RouteInput<Q, P, any>) => void | Promise<void>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** Declares a route with its parameter types inferred from its schemas. */
export const route = <Q, P = Record<string, string>>(def: RouteDef<Q, P>): RouteDef => def as unknown as RouteDef;

function guard(g: Guards, a: Access): RequestHandler {
  return a.by === 'plan' ? g.plan() : a.by === 'ip' ? g.ip(a.tier) : g.wallet(a.tier);
}

/** The raw query string of a request target ('' without one). */
const searchOf = (url: string): string => {
  const q = url.indexOf('?');
  return q < 0 ? '' : url.slice(q + 1);
};

/** Distinct accepted inputs remembered per route and rule set. */
const MEMO_ENTRIES = 256;

/**
 * `parse` for one rule set, remembering what the last accepted inputs (by their raw text)
 * validated to: hot reads repeat the same few queries, and joi costs more per request than
 * the rest of a cached answer. Refused inputs are not remembered; the result is frozen so no
 * handler can change what the next request receives.
 */
function memoized<T>(schema: Joi.ObjectSchema<T>, where: 'query' | 'path'): (input: () => unknown, raw: string) => T {
  const seen = new Map<string, T>();
  return (input, raw) => {
    const hit = seen.get(raw);
    if (hit !== undefined) return hit;
    const value = Object.freeze(parse(schema, input(), where)) as T;
    if (seen.size >= MEMO_ENTRIES) seen.clear();
    seen.set(raw, value);
    return value;
  };
}

/** Small JSON bodies only: every body the API takes is a handful of fields. */
const jsonBody = express.json({ limit: '4kb', strict: true, type: 'application/json' });

/** Express's route: what `req.route` is while one of its handlers runs (the route template's source). */
type MountedRoute = ReturnType<Router['route']>;

/** A parameterless route served by exact path, and the Express route it is mounted as. */
interface ExactRoute {
  steps: RequestHandler[];
  route?: MountedRoute;
}

/** Whether `path` (the table's syntax) has no parameters, wildcards or optional parts. */
const isLiteral = (path: string) => !/[:*{}()\[\]?+!]/.test(path);

export interface RouteTable {
  /**
   * Serves a request whose method and path are exactly those of a parameterless route, as the
   * router would, or passes it on (D-172). The hot reads are such routes; the router would walk
   * every earlier route's layer and match each one's expression, and run the route's own
   * dispatch, to find what one map lookup finds. Only a path the router would give to the same
   * route is in the map: any other request (a parameter, a trailing slash, other letter case,
   * HEAD of a GET route included) goes to the router as before. Runs in the middleware sequence,
   * after the middleware every request passes.
   */
  exact: (req: Request, res: Response, next: NextFunction) => void;
  /** Every route in table order, on `router` under the prefix: what `exact` does not serve. */
  mount(router: Pick<Router, 'route' | 'use' | 'all'>): void;
}

/**
 * The routes under `prefix`, each as its steps: the access check (rate limit, signature)
 * before validation, so a refused parameter still costs its request (spec 8).
 */
export function routeTable(
  prefix: string,
  routes: readonly RouteDef[],
  g: Guards,
  policy: (path: string) => RequestHandler | undefined = () => undefined,
  admin?: AdminGate,
): RouteTable {
  const compiled = routes.map((r) => {
    const primary = guard(g, r.access);
    const alt = r.alternative;
    const access: RequestHandler = alt ? ((altGuard) => (req, res, next) => (alt.when(req) ? altGuard : primary)(req, res, next))(guard(g, alt.access)) : primary;
    const parseParams = r.params ? memoized(r.params, 'path') : undefined;
    const parseQuery = r.query === 'custom' ? undefined : memoized(r.query, 'query');
    // Not async: a handler that answers at once costs no promise (a failure, thrown or
    // rejected, reaches the error handlers either way).
    const handle: RequestHandler = (req, res) => {
      const params = parseParams ? parseParams(() => req.params, Object.values(req.params).join('\u0000')) : (req.params as Record<string, string>);
      // `req.query` parses the query string on every read: only a miss needs it.
      const query = parseQuery ? parseQuery(() => req.query, searchOf(req.url)) : req.query;
      const body = r.body ? parseBody(r.body, req.body) : undefined;
      return r.handler(req, res, { query, params, body });
    };
    // Bodies are read only after the access check: an unauthenticated flood costs no parsing.
    // The jurisdiction policy (451) runs once the caller is known, before the body is read.
    const guarded = policy(r.path);
    if (r.admin && (!admin || r.access.by !== 'wallet')) throw new Error(`${r.path}: an admin route needs the admin gate and wallet access`);
    const steps: RequestHandler[] = [access, ...(r.admin ? [admin!.check] : []), ...(guarded ? [guarded] : []), ...(r.body ? [jsonBody] : []), handle];
    return { def: r, path: `${prefix}${r.path}`, steps };
  });

  // By method and path: the parameterless routes no earlier layer would take first (the /admin
  // watch, or an earlier route of the same method whose expression matches the path).
  const exact = new Map<string, Map<string, ExactRoute>>();
  const entries = new Map<(typeof compiled)[number], ExactRoute>();
  compiled.forEach((c, i) => {
    if (!isLiteral(c.def.path) || c.path.toLowerCase().startsWith(`${prefix}/admin`.toLowerCase())) return;
    const shadowed = compiled.slice(0, i).some((e) => e.def.method === c.def.method && match(e.path, { decode: false })(c.path) !== false);
    const byPath = exact.get(c.def.method) ?? exact.set(c.def.method, new Map()).get(c.def.method)!;
    if (shadowed || byPath.has(c.path)) return;
    const entry: ExactRoute = { steps: c.steps };
    byPath.set(c.path, entry);
    entries.set(c, entry);
  });

  return {
    exact: (req, res, next) => {
      const q = req.url.indexOf('?');
      // Express serves HEAD with the GET route.
      const hit = exact.get(req.method === 'HEAD' ? 'GET' : req.method)?.get(q < 0 ? req.url : req.url.slice(0, q));
      if (!hit?.route) return next();
      // What the router sets for a route's handlers: the route, and no parameters.
      req.route = hit.route;
      req.params = {};
      const steps = hit.steps;
      let i = 0;
      // Like the route's own dispatch: a failure, thrown or rejected, goes on to the error
      // handlers. The last step answers or fails; it never passes the request on.
      const step = (err?: unknown): void => {
        if (err) return next(err);
        const fn = steps[i++];
        if (!fn) return next();
        try {
          const r = fn(req, res, step) as unknown;
          if (r instanceof Promise) r.catch((e: unknown) => next(e || new Error('Rejected promise')));
        } catch (e) {
          next(e);
        }
      };
      step();
    },
    mount(router) {
      // Every /admin/* request is watched, known path or not: refusals before an admin is
      // verified are counted; admins' calls are audited from the admin check on (D-146, D-186).
      if (admin) router.use(`${prefix}/admin`, admin.watch);
      for (const c of compiled) {
        const route = router.route(c.path);
        switch (c.def.method) {
          case 'GET':
            route.get(...c.steps);
            break;
          case 'POST':
            route.post(...c.steps);
            break;
          case 'DELETE':
            route.delete(...c.steps);
            break;
          default: {
            const never: never = c.def.method;
            throw new Error(`unsupported method ${String(never)}`);
          }
        }
        const entry = entries.get(c);
        if (entry) entry.route = route;
      }
      // Any other /admin/* path: the same signature and allow-list first, so a wallet outside it
      // learns nothing about which admin paths exist (403 everywhere); admins get 404.
      if (admin) {
        router.all(`${prefix}/admin/*rest`, g.wallet('sensitive'), admin.check, () => {
          throw new ApiError('NOT_FOUND', 'Not found');
        });
      }
    },
  };
}

/**
 * The methods served on a path, from the route table (not from Express's internals), for the
 * 405 answer's `Allow` header. HEAD is allowed wherever GET is, as Express serves it.
 */
export function createAllowedMethods(known: readonly { method: Method; path: string }[]): (path: string) => string[] {
  const matchers = known.map((k) => ({ method: k.method, matches: match(k.path, { decode: decodeURIComponent }) }));
  return (path) => {
    const methods = [...new Set(matchers.filter((m) => m.matches(path) !== false).map((m) => m.method as string))];
    return methods.includes('GET') ? [...methods, 'HEAD'] : methods;
  };
}

/** What the routes read from: the tenant's database and its chain, and the hot-read cache. */
export interface RouteDeps {
  /** Where reads go: a replica while it is fresh enough, else the primary (D-510). */
  db: Db;
  /** The primary: everything that writes, and the admin routes (they report the primary's state). */
  primary: Db;
  chainId: string;
  programId: string;
  /** The tenant this process serves: its writer lock and API keys (admin routes). */
  tenantId: string;
  /** The handler timeout: waits inside a handler stay well below it. */
  requestTimeoutMs: number;
  hot: HotCache;
  metrics: Metrics;
  startedAt: number;
  /** The tenant's chain, for the recent blockhash of `/tx/*`; unset answers them 503. */
  chain?: ChainAccess;
  /** Told of an API key revoked here, to close its connections on every replica (D-190); the appendix variant's plan limits. */
  apiKeyRevoked?: (keyId: string) => Promise<void>;
}

/**
 * One shape of the API: where it is served, its routes, and how it writes errors. The REST app
 * takes one, so a second shape of the same service (the spec's appendix variant) reuses the
 * app's middleware, limits and queries and differs only here.
 */
export interface Presentation {
  /** The versioned prefix every route is served under (`/api/v1`). */
  prefix: string;
  routes(deps: RouteDeps): RouteDef[];
  /** The error envelope. */
  errorBody: ErrorWriter;
  /** Its OpenAPI document in `api-reference/`, what `/docs` renders (`openapi.yaml` by default). */
  openapi?: 'openapi.yaml' | 'openapi-legacy.yaml';
}
