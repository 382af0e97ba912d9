/**
 * What `REDIS_URL` names (decision D-92): one Redis (`redis://` / `rediss://`, as ioredis reads
 * it) or a Redis Cluster (`redis+cluster://` / `rediss+cluster://`) given by a comma-separated
 * list of seed nodes, `[user:password@]host:port,host:port,...`. The client learns the rest of
 * the cluster from any seed; several seeds let a process start while one of them is down.
 */
export type RedisTarget =
  | { cluster: false; url: string }
  | { cluster: true; nodes: { host: string; port: number }[]; username?: string; password?: string; tls: boolean };

export const REDIS_URL_SCHEMES = ['redis', 'rediss', 'redis+cluster', 'rediss+cluster'] as const;

const SINGLE = /^rediss?:\/\/[^\s]+$/;
const CLUSTER = /^(rediss?)\+cluster:\/\/(?:([^@/\s]*)@)?([^@/\s]+?)\/?$/;
const NODE = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):([0-9]{1,5})$/;

/** The target, or a message saying what is wrong (the URL itself is never echoed: it may hold a password). */
export function parseRedisUrl(url: string): RedisTarget | { error: string } {
  if (SINGLE.test(url)) {
    try {
      new URL(url);
      return { cluster: false, url };
    } catch {
      return { error: 'is not a valid redis:// URI' };
    }
  }
  const m = CLUSTER.exec(url);
  if (!m) return { error: `must be a ${REDIS_URL_SCHEMES.map((s) => `${s}://`).join(', ')} URI` };
  const [, scheme, userinfo, hostList] = m;
  const nodes: { host: string; port: number }[] = [];
  for (const part of hostList!.split(',')) {
    const n = NODE.exec(part);
    const port = n ? Number(n[2]) : 0;
    if (!n || port < 1 || port > 65535) return { error: 'must list cluster nodes as host:port,host:port' };
    nodes.push({ host: n[1]!.replace(/^\[|\]$/g, ''), port });
  }
  let username: string | undefined;
  let password: string | undefined;
  if (userinfo !== undefined) {
    const i = userinfo.indexOf(':');
    const decode = (s: string) => (s === '' ? undefined : decodeURIComponent(s));
    try {
      if (i < 0) username = decode(userinfo);
      else [username, password] = [decode(userinfo.slice(0, i)), decode(userinfo.slice(i + 1))];
    } catch {
      return { error: 'has malformed percent-encoding in its credentials' };
    }
  }
  return { cluster: true, nodes, username, password, tls: scheme === 'rediss' };
}
