import net from 'node:net';

/**
 * A TCP proxy in front of a real server that can stop passing bytes without closing anything:
 * to its clients the server looks alive but silent, as a hung or partitioned Redis does
 * (connections stay up; no reset, no reply). What arrives while frozen is held and passed on
 * when thawed. It can also go down (close everything, refuse connections) and come back up.
 */
export async function startFreezableProxy(target: { host: string; port: number }) {
  const held: (() => void)[] = [];
  const sockets = new Set<net.Socket>();
  let frozen = false;
  let down = false;
  let delayMs = 0;
  const forward = (from: net.Socket, to: net.Socket) =>
    from.on('data', (chunk: Buffer) => {
      if (frozen) held.push(() => to.write(chunk));
      // Timers of one delay fire in the order they were set: the byte order is kept.
      else if (delayMs) setTimeout(() => to.write(chunk), delayMs);
      else to.write(chunk);
    });
  const server = net.createServer((client) => {
    if (down) return void client.destroy();
    const upstream = net.connect(target.port, target.host);
    for (const s of [client, upstream]) sockets.add(s);
    forward(client, upstream);
    forward(upstream, client);
    const end = () => {
      for (const s of [client, upstream]) {
        sockets.delete(s);
        s.destroy();
      }
    };
    for (const s of [client, upstream]) s.on('close', end).on('error', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `redis://127.0.0.1:${port}`,
    freeze() {
      frozen = true;
    },
    /** Every chunk, either way, is passed on this many ms late (0: at once). */
    delay(ms: number) {
      delayMs = ms;
    },
    thaw() {
      frozen = false;
      for (const send of held.splice(0)) send();
    },
    /** As a Redis that went away: every connection is closed and new ones are refused. */
    down() {
      down = true;
      frozen = false;
      held.length = 0;
      for (const s of sockets) s.destroy();
    },
    up() {
      down = false;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

/**
 * A TCP load balancer over local backends: each new connection goes to the next backend in
 * turn, and to the one after when a backend refuses it (as a proxy retries a failed connect).
 * `remove(port)` takes a backend out of rotation as Kubernetes removes a terminating pod's
 * endpoint (during the API's preStop pause, before SIGTERM); its open connections stay. Bytes
 * the client sends before the backend connection is up are held and passed on.
 */
export async function startRoundRobinProxy(backends: number[]) {
  const ports = [...backends];
  let next = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    const held: Buffer[] = [];
    const hold = (d: Buffer) => held.push(d);
    client.on('data', hold);
    client.on('error', () => client.destroy());
    client.on('close', () => sockets.delete(client));
    const attempt = (tries: number) => {
      if (tries >= ports.length || client.destroyed) return void client.destroy();
      const port = ports[next++ % ports.length]!;
      const upstream = net.connect(port, '127.0.0.1');
      upstream.once('error', () => {
        if (!upstream.remoteAddress || upstream.connecting) attempt(tries + 1);
        else client.destroy();
      });
      upstream.once('connect', () => {
        sockets.add(upstream);
        client.off('data', hold);
        for (const d of held.splice(0)) upstream.write(d);
        client.pipe(upstream);
        upstream.pipe(client);
        const end = () => {
          client.destroy();
          upstream.destroy();
        };
        upstream.on('close', end).on('error', end);
        client.on('close', end);
        upstream.on('close', () => sockets.delete(upstream));
      });
    };
    attempt(0);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    remove(port: number) {
      const i = ports.indexOf(port);
      if (i >= 0) ports.splice(i, 1);
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}
