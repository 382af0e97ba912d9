import net from 'node:net';

/** A port nothing listens on now at `host` (the kernel's pick), for a server that cannot be given port 0. */
export const freePort = (host: string) =>
  new Promise<number>((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, host, () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
