import type http from 'node:http';
import net from 'node:net';

/**
 * An upgrade request (WebSocket) passed on to one endpoint as it came, then bytes both ways until
 * either side closes: what an L4 hop does once the handshake is on its way.
 */
export function tunnelUpgrade(
  req: http.IncomingMessage,
  client: net.Socket,
  head: Buffer,
  to: { host: string; port: number },
  extraHeaders: Record<string, string> = {},
): void {
  const upstream = net.connect(to.port, to.host, () => {
    const lines = [`${req.method} ${req.url} HTTP/1.1`];
    for (let i = 0; i < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
    for (const [k, v] of Object.entries(extraHeaders)) lines.push(`${k}: ${v}`);
    upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
    if (head.length) upstream.write(head);
    client.pipe(upstream).pipe(client);
  });
  const done = () => {
    client.destroy();
    upstream.destroy();
  };
  for (const s of [client, upstream]) {
    s.on('error', done);
    s.on('close', done);
  }
}
