import type { Server } from 'node:http';

/**
 * An HTTP server's idle keep-alive (`HTTP_KEEP_ALIVE_TIMEOUT_MS`, D-282): longer than the ingress
 * controller keeps its upstream connections (60 s in ingress-nginx), so the proxy closes an idle
 * connection first and never sends a request on one the process has just closed (a 502, and a
 * `POST /tx/*` is not retried). Node's header timeout must exceed it, or an idle connection is
 * cut by that one instead (Node's default is 60 s).
 */
export function applyKeepAlive(server: Server, keepAliveTimeoutMs: number): Server {
  server.keepAliveTimeout = keepAliveTimeoutMs;
  server.headersTimeout = keepAliveTimeoutMs + 1_000;
  // Node checks a request's whole time against requestTimeout (300 s by default): it must stay above.
  if (server.requestTimeout > 0 && server.requestTimeout <= server.headersTimeout) server.requestTimeout = server.headersTimeout + 1_000;
  return server;
}
