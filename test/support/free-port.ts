import net from 'node:net';

async function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/**
 * A loopback port nothing listens on now (the kernel's pick), and with `plus` set, such that
 * `port + plus` is free too (a Redis Cluster node's bus port is its port + 10000).
 */
export async function freePort(plus?: number): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const s = net.createServer();
      s.once('error', reject);
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    if (plus === undefined) return port;
    if (port + plus <= 65535 && (await canListen(port + plus))) return port;
  }
}
