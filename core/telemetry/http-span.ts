import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import {
  ATTR_CLIENT_ADDRESS,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_URL_PATH,
  ATTR_USER_AGENT_ORIGINAL,
} from '@opentelemetry/semantic-conventions';
import type { NextFunction, Request, Response } from 'express';

/** Probes and scrapes would drown the useful traces. */
const UNTRACED = /^\/(health|ready|metrics)(\?|$)/;

/** `GET /api/v1/markets/:marketId`: the matched route's template, or undefined when none matched. */
export function routeTemplate(req: Request): string | undefined {
  return req.route?.path === undefined ? undefined : `${req.baseUrl}${req.route.path}`;
}

/**
 * The server span of each request (decision D-61), in place of the HTTP auto-instrumentation:
 * the W3C parent from `traceparent`, the stable HTTP semantic-convention attributes, the name
 * `METHOD <route template>` and `http.route` once routing is done, status ERROR on 5xx. The
 * handlers run inside the span's context, so pg and ioredis spans and log lines join it.
 *
 * The auto-instrumentation wraps every listener added to the request and response in a
 * context binding and records its own attribute sets; with it, tracing on cost the API 70 %
 * more CPU per request, and the server span is the only span it gave us (the API makes no
 * outgoing HTTP calls). Mounted first, and only when tracing is on.
 */
export function serverSpans() {
  // The instrumentation scope; which process it is, is the resource's service.name.
  const tracer = trace.getTracer('market-indexer/http');
  // The headers the configured propagators read (`traceparent`, `tracestate`, `baggage` by
  // default; others with OTEL_PROPAGATORS), asked once the SDK is up. A request carrying none of
  // them, as most do, starts a root span without running every propagator over its headers (D-256).
  let fields: string[] | undefined;
  return (req: Request, res: Response, next: NextFunction) => {
    if (UNTRACED.test(req.url)) return next();
    fields ??= propagation.fields().map((f) => f.toLowerCase());
    const parent = fields.some((f) => req.headers[f] !== undefined) ? propagation.extract(ROOT_CONTEXT, req.headers) : ROOT_CONTEXT;
    // The sampler decides here (no sampler of ours reads attributes at start).
    const span = tracer.startSpan(req.method, { kind: SpanKind.SERVER }, parent);
    // An unsampled request runs outside any trace context (D-85): no context to carry through
    // its async work, no attributes, no close listener. The pg and ioredis instrumentations
    // make spans only under a parent span, so none of its queries becomes a trace of its own.
    if (!span.isRecording()) return next();
    const q = req.url.indexOf('?');
    span.setAttributes({
      [ATTR_HTTP_REQUEST_METHOD]: req.method,
      [ATTR_URL_PATH]: q < 0 ? req.url : req.url.slice(0, q),
      [ATTR_CLIENT_ADDRESS]: req.socket.remoteAddress,
      [ATTR_USER_AGENT_ORIGINAL]: req.headers['user-agent'],
    });
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      const route = routeTemplate(req);
      if (route !== undefined) {
        span.updateName(`${req.method} ${route}`);
        span.setAttribute(ATTR_HTTP_ROUTE, route);
      }
      if (res.headersSent) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, res.statusCode);
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      // A response that closed before it finished: the client went away.
      else if (!res.writableFinished) span.setStatus({ code: SpanStatusCode.ERROR, message: 'connection closed before the response finished' });
      span.end();
    };
    res.once('close', end);
    context.with(trace.setSpan(parent, span), next);
  };
}
