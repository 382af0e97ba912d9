import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../../core/telemetry/logger';
import type { Metrics } from '../../core/telemetry/metrics';
import { routeTemplate } from '../../core/telemetry/http-span';
import { ApiError, sendError } from './errors';

declare module 'express-serve-static-core' {
  interface Request {
    id: string;
    log: Logger;
  }
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Echo a sane client `x-request-id`, or generate one; every log line of the request carries it. */
export function requestId(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction) => {
    const given = req.get('x-request-id');
    req.id = given && REQUEST_ID.test(given) ? given : randomUUID();
    req.log = logger.child({ requestId: req.id });
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
      if (!res.headersSent) sendError(res, new ApiError('TIMEOUT', `Request took longer than ${Math.round(ms / 1000)} seconds`));
    }, ms);
    res.on('close', () => clearTimeout(timer));
    res.on('finish', () => clearTimeout(timer));
    next();
  };
}

/** Request count and duration by method, route template (bounded cardinality) and status. */
export function requestMetrics(metrics: Metrics) {
  return (req: Request, res: Response, next: NextFunction) => {
    const start = process.hrtime.bigint();
    res.on('finish', () => {
      const labels = { method: req.method, route: routeTemplate(req) ?? 'unmatched', status: String(res.statusCode) };
      metrics.apiRequests.inc(labels);
      metrics.apiRequestDuration.observe(labels, Number(process.hrtime.bigint() - start) / 1e9);
    });
    next();
  };
}
