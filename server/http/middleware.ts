import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Metrics } from '../../core/telemetry/metrics';
import { routeTemplate } from '../../core/telemetry/http-span';
import { sendError, timeoutError } from './errors';

declare module 'express-serve-static-core' {
  interface Request {
    id: string;
  }
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

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
 * Spec 4.1: root-level aliases and the legacy `/api/` prefix are served by rewriting them to
 * their canonical `/api/v1/...` path, with the deprecation headers.
 */
const ROOT_ALIASES = [/^\/v2\//, /^\/tx\//, /^\/admin\//, /^\/config$/, /^\/trades$/, /^\/orderbook\/top$/, /^\/status$/, /^\/orders$/];

export function deprecatedAliases() {
  return (req: Request, res: Response, next: NextFunction) => {
    const q = req.url.indexOf('?');
    const path = q < 0 ? req.url : req.url.slice(0, q);
    const query = q < 0 ? '' : req.url.slice(q);
    let canonical: string | undefined;
    if (ROOT_ALIASES.some((r) => r.test(path))) {
      // `/orders` is an alias only for the public `?tx=` lookup.
      if (path !== '/orders' || new URLSearchParams(query).has('tx')) canonical = `/api/v1${path}`;
      if (canonical) {
        res.setHeader('Link', `<${canonical}>; rel=canonical`);
        res.setHeader('X-Service-Canonical-Path', canonical);
      }
    } else if (path.startsWith('/api/') && !path.startsWith('/api/v1/') && path !== '/api/v1') {
      canonical = `/api/v1${path.slice(4)}`;
    }
    if (canonical) {
      res.setHeader('Deprecation', 'true');
      req.url = canonical + query;
    }
    next();
  };
}

/** 504 TIMEOUT when a handler runs longer than the limit (spec 8). */
export function handlerTimeout(ms: number) {
  return (req: Request, res: Response, next: NextFunction) => {
    const timer = setTimeout(() => {
      if (!res.headersSent) sendError(res, timeoutError(ms));
    }, ms);
    // A response emits 'close' after 'finish', and also when the client goes away first.
    res.once('close', () => clearTimeout(timer));
    next();
  };
}

/** Request count and duration by method, route template (bounded cardinality) and status. */
export function requestMetrics(metrics: Metrics) {
  return (req: Request, res: Response, next: NextFunction) => {
    const start = process.hrtime.bigint();
    res.once('finish', () => {
      const labels = { method: req.method, route: routeTemplate(req) ?? 'unmatched', status: String(res.statusCode) };
      metrics.apiRequests.inc(labels);
      metrics.apiRequestDuration.observe(labels, Number(process.hrtime.bigint() - start) / 1e9);
    });
    next();
  };
}
