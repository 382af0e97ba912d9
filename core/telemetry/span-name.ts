import { context } from '@opentelemetry/api';
import { getRPCMetadata, RPCType } from '@opentelemetry/core';

/**
 * Names the current HTTP server span by its route template (`GET /api/v1/markets/:marketId`)
 * and sets `http.route`, as the Express instrumentation would: the HTTP instrumentation reads
 * the route from the request's RPC metadata when the response closes. Without tracing there
 * is no such metadata and this does nothing. Kept apart from tracing.ts so that the API does
 * not load the OpenTelemetry SDK when tracing is off.
 */
export function nameServerSpan(route: string): void {
  const meta = getRPCMetadata(context.active());
  if (meta?.type === RPCType.HTTP) meta.route = route;
}
