import net from 'node:net';

/**
 * A Service's front, kube-proxy: each TCP connection to the Service's address goes to one ready
 * endpoint, round robin; endpoints that are not ready get no new connections, and established
 * ones are left alone. (The public edge is real nginx: edge-nginx.ts.)
 */

export interface Endpoint {
  host: string;
  port: number;
  ready: () => boolean;
}

export interface ServiceFront {
  url: string;
  close(): Promise<void>;
}

function roundRobin(endpoints: () => Endpoint[]) {
  let next = 0;
  return (): Endpoint | undefined => {
    const ready = endpoints().filter((e) => e.ready());
    if (!ready.length) return undefined;
    return ready[next++ % ready.length];
  };
}

const listen = (server: net.Server, host: string, port: number) =>
  new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as net.AddressInfo).port));
  });

const closeServer = (server: net.Server) => new Promise<void>((resolve) => server.close(() => resolve()));

/** kube-proxy for one Service port: `host:port` to the ready endpoints. */
export async function startServiceFront(opts: { host: string; port: number; endpoints: () => Endpoint[] }): Promise<ServiceFront> {
  const pick = roundRobin(opts.endpoints);
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const e = pick();
    if (!e) return void client.destroy();
    const upstream = net.connect(e.port, e.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  const port = await listen(server, opts.host, opts.port);
  return {
    url: `${opts.host}:${port}`,
    close: async () => {
      for (const s of sockets) s.destroy();
      await closeServer(server);
    },
  };
}
