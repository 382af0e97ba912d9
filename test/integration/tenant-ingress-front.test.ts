import http from 'node:http';
import net from 'node:net';
import { INGRESS_KEEP_ALIVE_MS, startIngressFront, type Endpoint } from '../../local/tenant/front';

/**
 * The harness's Ingress (local/tenant/front.ts) as ingress-nginx behaves towards a client: its
 * own keep-alive connection, whatever the upstream says of its connection (a draining API pod
 * answers `Connection: close`; an upstream's `Keep-Alive` names its own timeout), and a connection
 * closed, not left hanging, when an upstream fails in the middle of a body.
 */

const listen = (server: http.Server) => new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)));
const close = (server: http.Server) => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve())));

/** Sends raw requests on one socket, one after the other, and resolves each answer's head (or how the socket ended). */
function rawClient(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  let buffer = '';
  let ended: string | undefined;
  const waiters: (() => void)[] = [];
  const wake = () => waiters.splice(0).forEach((w) => w());
  socket.on('data', (d) => ((buffer += d.toString()), wake()));
  socket.on('close', () => ((ended ??= 'closed'), wake()));
  socket.on('error', (err: NodeJS.ErrnoException) => ((ended = err.code ?? 'error'), wake()));
  return {
    async get(path: string): Promise<{ head: string } | { ended: string }> {
      buffer = '';
      socket.write(`GET ${path} HTTP/1.1\r\nHost: front\r\n\r\n`);
      for (;;) {
        const at = buffer.indexOf('\r\n\r\n');
        const length = /content-length: (\d+)/i.exec(buffer.slice(0, at));
        if (at >= 0 && length && buffer.length >= at + 4 + Number(length[1])) return { head: buffer.slice(0, at).toLowerCase() };
        if (ended) return { ended };
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
    destroy: () => socket.destroy(),
  };
}

describe('the harness Ingress towards a client', () => {
  let upstream: http.Server;
  let front: Awaited<ReturnType<typeof startIngressFront>>;

  beforeAll(async () => {
    upstream = http.createServer((req, res) => {
      if (req.url === '/draining') return void res.writeHead(200, { connection: 'close', 'content-length': 2 }).end('ok');
      if (req.url === '/advertising') return void res.writeHead(200, { 'keep-alive': 'timeout=600', 'content-length': 2 }).end('ok');
      // Half a body, then the pod is gone.
      res.writeHead(200, { 'content-length': 100 });
      res.write('partial');
      setImmediate(() => req.socket.destroy());
    });
    const port = await listen(upstream);
    const endpoint: Endpoint = { host: '127.0.0.1', port, ready: () => true };
    front = await startIngressFront({ host: '127.0.0.1', port: 0, endpoints: () => [endpoint], readTimeoutSeconds: 5, tries: 3 });
  });
  afterAll(async () => {
    await front.close();
    await close(upstream);
  });

  it("keeps the client's connection across an upstream's Connection: close and advertises its own keep-alive only", async () => {
    const client = rawClient(Number(new URL(front.url).port));
    try {
      const first = await client.get('/draining');
      expect(first).toEqual({ head: expect.stringContaining('200 ok') });
      const head = (first as { head: string }).head;
      expect(head).not.toContain('connection: close');
      // The same socket answers again: the upstream's close was about its own connection.
      const second = await client.get('/advertising');
      expect(second).toEqual({ head: expect.stringContaining('200 ok') });
      // What a client is told of the idle timeout is the front's, never longer than it keeps the connection.
      const advertised = /keep-alive: timeout=(\d+)/.exec((second as { head: string }).head);
      expect(Number(advertised?.[1] ?? 0) * 1000).toBeLessThanOrEqual(INGRESS_KEEP_ALIVE_MS);
    } finally {
      client.destroy();
    }
  });

  it('closes the client connection when the upstream fails in the middle of a body', async () => {
    const client = rawClient(Number(new URL(front.url).port));
    try {
      expect(await client.get('/partial')).toEqual({ ended: expect.any(String) });
    } finally {
      client.destroy();
    }
  });
});
