import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../../core/telemetry/logger';
import type { Metrics } from '../../core/telemetry/metrics';
import { routeTemplate } from '../../core/telemetry/http-span';
import type { RateLimits } from '../limits/rate-limit';
import { aliasHeaders, aliasOf, ROOT_ALIASES, type RootAlias } from './aliases';
import { ApiError, clip, sendError, timeoutError, type ErrorDetail } from './errors';

declare module 'express-serve-static-core' {
  interface Request {
    id: string;
  }
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

type Middleware = (req: Request, res: Response, next: NextFunction) => void | Promise<void>;

/**
 * Middleware run in order as one Express layer: each layer costs the router a walk and a
 * match per request, and the ones every request passes through need neither.
 */
export function sequence(...steps: Middleware[]): Middleware {
  return (req, res, next) => {
    let i = 0;
    const step = (err?: unknown): void => {
      if (err !== undefined) return next(err);
      const mw = steps[i++];
      if (!mw) return next();
      try {
        const r = mw(req, res, step);
        if (r instanceof Promise) r.catch(next);
      } catch (e) {
        next(e);
      }
    };
    step();
  };
}

/**
 * Echo a sane client `x-request-id`, or generate one; a log line about the request carries it
 * (no child logger per request: most requests log nothing, and pino's child costs CPU).
 */
export function requestId() {
  return (req: Request, res: Response, next: NextFunction) => {
    const given = req.headers['x-request-id'];
    req.id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    res.setHeader('x-request-id', req.id);
    next();
  };
}

/**
 * Spec 4.1: root-level aliases and the legacy `/api/` prefix (declared in `./aliases`) are
 * served by rewriting them to their canonical path under the API prefix (`/api/v1/...`), with
 * the deprecation headers.
 */
export function deprecatedAliases(prefix: string, rootAliases: readonly RootAlias[] = ROOT_ALIASES) {
  const canonicalPrefix = `${prefix}/`;
  return (req: Request, res: Response, next: NextFunction) => {
    // Nearly every request is already canonical: it costs one comparison.
    if (req.url.startsWith(canonicalPrefix)) return next();
    const q = req.url.indexOf('?');
    const path = q < 0 ? req.url : req.url.slice(0, q);
    const query = q < 0 ? '' : req.url.slice(q);
    const alias = aliasOf(prefix, path, query, rootAliases);
    if (alias) {
      for (const [name, value] of Object.entries(aliasHeaders(alias))) res.setHeader(name, value);
      req.url = alias.canonical + query;
    }
    next();
  };
}

/**
 * What every request is given on its way in and settled on its way out: 504 TIMEOUT when a
 * handler runs longer than `timeoutMs` (spec 8), and the request count and duration by method,
 * route template (bounded cardinality) and status once the response is written. One listener
 * per request for both (a response emits 'close' after 'finish', and also when the client goes
 * away first, which is not counted), and the timer takes the response as its argument: no
 * closure, `once` wrapper or second listener per request.
 */
export function requestLifecycle(metrics: Metrics, timeoutMs: number) {
  // One pair of label children per method, route template and status (a bounded set): the
  // registry hashes a label object on every call, and this runs on every request.
  const children = new Map<string, { count: { inc(): void }; duration: { observe(v: number): void } }>();
  const childrenOf = (method: string, route: string, status: string) => {
    const key = `${method} ${route} ${status}`;
    let c = children.get(key);
    if (!c) {
      const labels = { method, route, status };
      children.set(key, (c = { count: metrics.apiRequests.labels(labels), duration: metrics.apiRequestDuration.labels(labels) }));
    }
    return c;
  };
  const timedOut = (res: Response) => {
    if (!res.headersSent) sendError(res, timeoutError(timeoutMs));
  };
  return (req: Request, res: Response, next: NextFunction) => {
    const start = process.hrtime.bigint();
    const timer = setTimeout(timedOut, timeoutMs, res);
    res.on('close', () => {
      clearTimeout(timer);
      if (!res.writableFinished) return;
      const c = childrenOf(req.method, routeTemplate(req) ?? 'unmatched', String(res.statusCode));
      c.count.inc();
      c.duration.observe(Number(process.hrtime.bigint() - start) / 1e9);
    });
    next();
  };
}

const decodes = (s: string): boolean => {
  try {
    decodeURIComponent(s);
    return true;
  } catch {
    return false;
  }
};

/**
 * Where a request target's percent-encoding is malformed (a `%` without two hex digits after
 * it, or escapes whose bytes are not UTF-8), as the `details` entry of the 400; undefined when
 * the path and every query pair decode. The router would otherwise throw while matching a path
 * parameter (a 500), and the query parser silently decodes what it can.
 */
export function malformedEncoding(url: string): ErrorDetail | undefined {
  if (!url.includes('%')) return undefined;
  const q = url.indexOf('?');
  if (!decodes(q < 0 ? url : url.slice(0, q))) return { field: 'path', message: 'malformed percent-encoding' };
  if (q < 0) return undefined;
  for (const pair of url.slice(q + 1).split('&')) {
    if (decodes(pair)) continue;
    const eq = pair.indexOf('=');
    const name = (eq < 0 ? pair : pair.slice(0, eq)).replace(/\+/g, ' ');
    return { field: decodes(name) ? `query.${clip(decodeURIComponent(name))}` : 'query', message: 'malformed percent-encoding' };
  }
  return undefined;
}

/**
 * Decision D-75: a request target with malformed percent-encoding is 400 INVALID_PARAMETER on
 * every path, before routing. It still costs the caller one request of the public tier per IP,
 * like any other request refused without reaching a handler, so a flood of them ends in 429s.
 * Nothing is logged above debug: a client's mistake is not the server's error.
 */
export function refuseMalformedEncoding(limits: RateLimits, logger: Logger) {
  const refuse = async (req: Request, res: Response, bad: ErrorDetail) => {
    if (!(await limits.consume('public', `ip:${req.ip ?? 'unknown'}`, res))) return;
    logger.debug({ requestId: req.id, ip: req.ip, field: bad.field }, 'malformed percent-encoding refused');
    sendError(res, new ApiError('INVALID_PARAMETER', `Malformed percent-encoding in the request ${bad.field === 'path' ? 'path' : 'query'}`, [bad]));
  };
  // Synchronous for the requests that pass (every one without a `%`): no promise per request.
  return (req: Request, res: Response, next: NextFunction) => {
    const bad = malformedEncoding(req.originalUrl);
    if (!bad) return next();
    return refuse(req, res, bad);
  };
}
