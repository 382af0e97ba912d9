import { channelPattern } from '../live/channels';
import { createKeys } from './keys';

/**
 * The Redis ACL user of one tenant (D-193): what the kit renders (`ACL SETUSER <user> <rules…>`,
 * or one `user` line of an ACL file) so that tenants sharing one Redis are kept apart by Redis
 * itself, not only by the `t:{tenant}:` prefix of `core/redis/keys.ts`.
 *
 * - Keys: the tenant's prefix only (`~t:<tenant>:*`), reads and writes, inside Lua scripts too.
 * - Channels: `&t:<tenant>:*` for PUBLISH and SUBSCRIBE; PSUBSCRIBE is checked against the
 *   allowed patterns literally (Redis 7), so every pattern the processes subscribe to
 *   (`PSUBSCRIBED_KINDS`) is listed as it is sent.
 * - Commands: reads, writes, keyspace, pub/sub, scripts, transactions and connection
 *   commands, less everything `@admin` or `@dangerous` (CONFIG, FLUSHALL, KEYS, DEBUG, CLIENT
 *   KILL…), less SCAN and RANDOMKEY (they list every tenant's key names, which hold client
 *   addresses and wallets), plus INFO (ioredis's ready check) and TIME (the scripts read Redis's clock, D-52, D-102).
 * - Less what those categories allow that reaches past the tenant's prefix (`SERVER_WIDE_DENIED`).
 *
 * What is given up: the API's start-up check of `maxmemory-policy` and persistence needs CONFIG
 * GET, which would also show the server's `requirepass`; with this user it logs one `warn` that it
 * cannot check, and the operator checks Redis instead (docs/security.md). A Redis Cluster also
 * needs `CLUSTER_ACL_COMMANDS`.
 */
export const ACL_COMMANDS = ['-@all', '+@read', '+@write', '+@keyspace', '+@pubsub', '+@scripting', '+@transaction', '+@connection', '-@admin', '-@dangerous', '-scan', '-randomkey', '+info', '+time'] as const;

/**
 * What `@connection`, `@pubsub`, `@scripting` and `@keyspace` allow (Redis 7.0, less `@admin` and
 * `@dangerous`) that names or acts on other tenants' keys, channels or scripts (issue 41, D-280);
 * key and channel patterns do not apply to these, the server's state is not per user:
 * - `CLIENT TRACKING` (with `BCAST` and no prefix, every invalidated key name of the server) and
 *   `CLIENT CACHING`, which only serves it;
 * - `PUBSUB` (CHANNELS, NUMSUB, NUMPAT, SHARDCHANNELS, SHARDNUMSUB: every tenant's channel names);
 * - `SCRIPT FLUSH`, `SCRIPT KILL` (another client's script), `SCRIPT DEBUG` (SYNC blocks the server);
 * - `FUNCTION` and `FCALL`/`FCALL_RO`: one library namespace for the whole server; the processes use none;
 * - `DBSIZE`: the number of every tenant's keys.
 * Left allowed, and why: `INFO` (ioredis's ready check; sections of counts, no names), `SELECT` (key
 * patterns hold in every database), `CLIENT INFO/ID/GETNAME/SETNAME/REPLY` (the caller's own
 * connection), `SCRIPT LOAD/EXISTS` (ioredis loads the processes' scripts; a SHA names no key).
 * Already denied by `-@admin`/`-@dangerous`: `CLIENT LIST/KILL/PAUSE/UNBLOCK`, `MONITOR`, `KEYS`,
 * `SLOWLOG`, `SORT`, `MIGRATE`, `FLUSHALL/FLUSHDB`; by the rules above: `SCAN`, `RANDOMKEY`.
 */
export const SERVER_WIDE_DENIED = ['-client|tracking', '-client|caching', '-pubsub', '-script|flush', '-script|kill', '-script|debug', '-function', '-fcall', '-fcall_ro', '-dbsize'] as const;

/**
 * The channel kinds whose patterns (`market:*`, `orderbook:*`) the API PSUBSCRIBEs: the hot-read
 * cache drops entries on them (`server/read/hot-cache.ts` reads this list). Declared here
 * because the ACL must name each pattern as it is sent.
 */
export const PSUBSCRIBED_KINDS = ['market', 'orderbook'] as const;

/** The user name of a tenant's processes. */
export const tenantAclUser = (tenant: string) => `mi-${tenant}`;

/** `ACL SETUSER` arguments after the user name, without the password (`>password` or `#sha256` goes after `on`). */
export function tenantAclRules(tenant: string, opts: { cluster?: boolean } = {}): string[] {
  const keys = createKeys(tenant);
  return [
    'reset',
    'on',
    `~${keys.prefix}*`,
    'resetchannels',
    `&${keys.prefix}*`,
    ...PSUBSCRIBED_KINDS.map((k) => `&${keys.channel(channelPattern(k))}`),
    ...ACL_COMMANDS,
    ...SERVER_WIDE_DENIED,
    ...(opts.cluster ? CLUSTER_ACL_COMMANDS : []),
  ];
}

/**
 * What a tenant's user needs on a Redis Cluster besides: ioredis's Cluster client finds the slots
 * with CLUSTER SLOTS and checks the cluster is up with CLUSTER INFO before it is ready; without
 * either it never becomes ready ("Failed to refresh slots cache"). Measured on a local cluster of
 * three masters (redis-server 7), and no more than that: CLUSTER NODES and CLUSTER SHARDS are not
 * needed. ACLs are per node: the user is created on every node.
 */
export const CLUSTER_ACL_COMMANDS = ['+cluster|slots', '+cluster|info'] as const;
