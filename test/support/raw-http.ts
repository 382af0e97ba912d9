import net from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The body parsed, when the response says it is JSON. */
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/**
 * One GET over a fresh TCP connection with the request target sent byte for byte as given
 * (fetch and http.request encode or refuse what a hostile client would send), optionally
 * from a chosen local address (127.0.0.x) so per-IP limits can be exercised. Reads until the
 * server closes (the request says `Connection: close`).
 */
export function rawGet(
  port: number,
  target: string | Buffer,
  opts: { localAddress?: string; headers?: Record<string, string | Buffer> } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1', localAddress: opts.localAddress });
    const chunks: Buffer[] = [];
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', reject);
    socket.on('connect', () => {
      const headers = Object.entries({ host: 'localhost', connection: 'close', ...opts.headers });
      socket.write(
        Buffer.concat([
          Buffer.from('GET '),
          Buffer.isBuffer(target) ? target : Buffer.from(target, 'utf8'),
          Buffer.from(' HTTP/1.1\r\n'),
          ...headers.flatMap(([k, v]) => [Buffer.from(`${k}: `), Buffer.isBuffer(v) ? v : Buffer.from(v, 'latin1'), Buffer.from('\r\n')]),
          Buffer.from('\r\n'),
        ]),
      );
    });
    socket.on('close', () => {
      const raw = Buffer.concat(chunks);
      const end = raw.indexOf('\r\n\r\n');
      if (end < 0) return reject(new Error(`no HTTP response: ${JSON.stringify(raw.toString('latin1').slice(0, 200))}`));
      const [statusLine, ...lines] = raw.subarray(0, end).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines) {
        const i = l.indexOf(':');
        headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
      }
      const body = raw.subarray(end + 4).toString('utf8');
      const json = headers['content-type']?.includes('application/json') && body ? JSON.parse(body) : undefined;
      resolve({ status: Number(statusLine!.split(' ')[1]), headers, body, json });
    });
  });
}
