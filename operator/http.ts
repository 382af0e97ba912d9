import http from 'node:http';
import type { Common } from '../core/common';

/** The operator's own port: `/metrics`, `/healthz` (the process answers), `/readyz` (caches synced, or waiting as a standby). */
export function createOperatorHttp(common: Common, ready: () => boolean): http.Server {
  return http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET') {
      res.writeHead(405, { Allow: 'GET' }).end();
      return;
    }
    if (path === '/healthz') {
      res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok');
    } else if (path === '/readyz') {
      const ok = ready();
      res.writeHead(ok ? 200 : 503, { 'Content-Type': 'text/plain' }).end(ok ? 'ok' : 'not ready');
    } else if (path === '/metrics') {
      void common.metrics.registry.metrics().then((text) => res.writeHead(200, { 'Content-Type': common.metrics.registry.contentType }).end(text));
    } else {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
    }
  });
}
