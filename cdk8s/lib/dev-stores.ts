import { Construct } from 'constructs';
import { k8s } from 'cdk8s-plus-33';
import { tenantAclUser } from '../../core/redis/acl';
import { chainRpcUrl } from './chain';
import { databaseSecretRef } from './cloudnativepg';
import { metadataOf, type TenantContext } from './context';
import { commonLabels, NAMES, selectorLabels } from './names';
import { containerSecurity, podSecurity, resourcesOf } from './pod';
import { sha256Hex, tenantAclFileLine } from './redis-users';
import { DEV_STORE_RESOURCES } from './sizing';

export const DEV_STORE_PORTS = { postgres: 5432, redis: 6379 } as const;

/** Users of the official alpine images: `postgres` is 70, `redis` is 999. */
const UIDS = { postgres: 70, redis: 999 } as const;

/** Dev only: the in-cluster stores' credentials are not secret, so they are plain values. */
export const DEV_DATABASE = { user: 'market', password: 'market-dev', database: 'market' } as const;

/**
 * Dev only: the dev Redis's users (D-231). The default user is off; `admin` is the operators'
 * (`redis-cli --user admin`), the tenant's processes connect as `mi-<tenant>` with the rules of
 * `tenantAclRules`, as on a shared Redis. The passwords are fixed and not secret, like the dev
 * PostgreSQL's: what the ACL shows in dev is the tenant's fence, not a secret.
 */
export const DEV_REDIS = {
  admin: { user: 'admin', password: 'admin-dev' },
  tenantPassword: 'market-dev',
  /** Where the ACL file is mounted from the dev stores' Secret (key `users.acl`). */
  aclDir: '/etc/redis',
  aclKey: 'users.acl',
} as const;

/** The dev Redis's ACL file: the passwords only as SHA-256, so the file is the form to keep for any Redis. */
export function devRedisAclFile(tenant: string): string {
  return [
    'user default off',
    `user ${DEV_REDIS.admin.user} on #${sha256Hex(DEV_REDIS.admin.password)} ~* &* +@all`,
    tenantAclFileLine(tenant, { sha256: sha256Hex(DEV_REDIS.tenantPassword) }),
    '',
  ].join('\n');
}

export const devStoreUrls = (tenant: string) =>
  ({
    DATABASE_URL: `postgres://${DEV_DATABASE.user}:${DEV_DATABASE.password}@${NAMES.postgres}:${DEV_STORE_PORTS.postgres}/${DEV_DATABASE.database}`,
    // The tenant's own ACL user (D-193, D-231).
    REDIS_URL: `redis://${tenantAclUser(tenant)}:${DEV_REDIS.tenantPassword}@${NAMES.redis}:${DEV_STORE_PORTS.redis}`,
  }) as const;

const q = (v: string) => k8s.Quantity.fromString(v);

/** How the dev Redis keeps its data (docs/security.md, D-104; the chart reads them from files/service.json). */
export const REDIS_ARGS = ['--dir', '/data', '--appendonly', 'yes', '--appendfsync', 'always', '--save', '', '--maxmemory-policy', 'noeviction'] as const;
/** Its users, from the ACL file (D-231). */
export const REDIS_ACL_ARGS = ['--aclfile', `${DEV_REDIS.aclDir}/${DEV_REDIS.aclKey}`] as const;
/** The Redis pod annotation that restarts it when its users change (Redis reads the file when it starts). */
export const ACL_CHECKSUM_ANNOTATION = 'checksum/acl';

/**
 * Single-instance PostgreSQL and Redis inside a dev tenant's namespace, and the Secret(s) the
 * tenant's references point at, so a dev cluster needs nothing else. Staging and prod use
 * external stores whose Secrets an operator creates (docs/deploy.md).
 */
export class DevStores extends Construct {
  constructor(scope: Construct, id: string, ctx: TenantContext) {
    super(scope, id);
    const v = ctx.values;
    const db = databaseSecretRef(v);
    const { secretRef: redis } = v.redis;

    // One Secret per name the references use, holding what they point at.
    const secrets = new Map<string, Record<string, string>>();
    const put = (name: string, key: string, value: string) => secrets.set(name, { ...secrets.get(name), [key]: value });
    const urls = devStoreUrls(ctx.tenant);
    put(db.name, db.key, urls.DATABASE_URL);
    put(redis.name, redis.key, urls.REDIS_URL);
    // The tenant's own simulated chain is its RPC (the API's /tx/*, the indexer's source).
    const rpc = v.source.rpcUrlSecretRef;
    if (v.source.type === 'simulator' && rpc) put(rpc.name, rpc.key, chainRpcUrl());
    put(NAMES.devStoresSecret, 'POSTGRES_PASSWORD', DEV_DATABASE.password);
    const acl = devRedisAclFile(ctx.tenant);
    put(NAMES.devStoresSecret, DEV_REDIS.aclKey, acl);
    put(NAMES.devStoresSecret, 'REDIS_ADMIN_PASSWORD', DEV_REDIS.admin.password);
    for (const [name, stringData] of [...secrets].sort(([a], [b]) => (a < b ? -1 : 1))) {
      new k8s.KubeSecret(this, `secret-${name}`, { metadata: metadataOf(ctx, name), type: 'Opaque', stringData });
    }

    this.store('postgres', ctx, {
      image: v.devStores.postgresImage,
      env: [
        { name: 'POSTGRES_USER', value: DEV_DATABASE.user },
        { name: 'POSTGRES_DB', value: DEV_DATABASE.database },
        { name: 'POSTGRES_PASSWORD', valueFrom: { secretKeyRef: { name: NAMES.devStoresSecret, key: 'POSTGRES_PASSWORD' } } },
        { name: 'PGDATA', value: '/var/lib/postgresql/data/pgdata' },
      ],
      dataPath: '/var/lib/postgresql/data',
      // The entrypoint writes its socket and init files there.
      scratch: ['/var/run/postgresql', '/tmp'],
      readiness: { exec: { command: ['pg_isready', '-U', DEV_DATABASE.user, '-d', DEV_DATABASE.database] }, periodSeconds: 5 },
      // A server that stopped answering is restarted; a slow one has a minute (6 × 10 s).
      liveness: { exec: { command: ['pg_isready', '-U', DEV_DATABASE.user, '-d', DEV_DATABASE.database] }, periodSeconds: 10, timeoutSeconds: 5, failureThreshold: 6 },
    });
    this.store('redis', ctx, {
      image: v.devStores.redisImage,
      // docs/security.md (D-104): every acknowledged write on disk before its reply (a restart
      // restores all of it), no snapshots (an older state would keep the nonce store's marker
      // while losing nonces), and nothing evicted to make room.
      args: ['redis-server', ...REDIS_ARGS, ...REDIS_ACL_ARGS],
      dataPath: '/data',
      scratch: ['/tmp'],
      readiness: { tcpSocket: { port: k8s.IntOrString.fromNumber(DEV_STORE_PORTS.redis) }, periodSeconds: 5 },
      // PING, not just the port: a Redis that accepts connections but no longer answers is hung.
      // Unauthenticated: with the default user off the answer is NOAUTH, which shows Redis
      // answering as PONG would; redis-cli fails only when no answer comes (D-231).
      liveness: { exec: { command: ['redis-cli', 'ping'] }, periodSeconds: 10, timeoutSeconds: 5, failureThreshold: 6 },
      secretFiles: { name: 'acl', path: DEV_REDIS.aclDir, secret: NAMES.devStoresSecret, keys: [DEV_REDIS.aclKey] },
      annotations: { [ACL_CHECKSUM_ANNOTATION]: sha256Hex(acl) },
    });
  }

  private store(
    component: 'postgres' | 'redis',
    ctx: TenantContext,
    c: {
      image: string;
      env?: k8s.EnvVar[];
      args?: string[];
      dataPath: string;
      scratch: string[];
      readiness: k8s.Probe;
      liveness: k8s.Probe;
      /** Keys of a Secret as read-only files in a folder. */
      secretFiles?: { name: string; path: string; secret: string; keys: string[] };
      annotations?: Record<string, string>;
    },
  ): void {
    const name = NAMES[component];
    const selector = selectorLabels(ctx.labels, component);
    const port = DEV_STORE_PORTS[component];
    new k8s.KubeService(this, `${component}-service`, {
      metadata: metadataOf(ctx, name, component),
      spec: { type: 'ClusterIP', selector, ports: [{ name: component, port, targetPort: k8s.IntOrString.fromNumber(port), protocol: 'TCP' }] },
    });
    const scratchVolumes = c.scratch.map((path, i) => ({ name: `scratch-${i}`, path }));
    new k8s.KubeStatefulSet(this, component, {
      metadata: metadataOf(ctx, name, component),
      spec: {
        serviceName: name,
        replicas: 1,
        selector: { matchLabels: selector },
        template: {
          metadata: { labels: commonLabels(ctx.labels, component), ...(c.annotations ? { annotations: c.annotations } : {}) },
          spec: {
            automountServiceAccountToken: false,
            enableServiceLinks: false,
            securityContext: podSecurity(UIDS[component]),
            containers: [
              {
                name: component,
                image: c.image,
                ...(c.args ? { args: c.args } : {}),
                ...(c.env ? { env: c.env } : {}),
                ports: [{ name: component, containerPort: port, protocol: 'TCP' }],
                readinessProbe: c.readiness,
                livenessProbe: c.liveness,
                resources: resourcesOf(DEV_STORE_RESOURCES),
                securityContext: containerSecurity(UIDS[component]),
                volumeMounts: [
                  { name: 'data', mountPath: c.dataPath },
                  ...scratchVolumes.map((s) => ({ name: s.name, mountPath: s.path })),
                  ...(c.secretFiles ? [{ name: c.secretFiles.name, mountPath: c.secretFiles.path, readOnly: true }] : []),
                ],
              },
            ],
            volumes: [
              ...scratchVolumes.map((s) => ({ name: s.name, emptyDir: {} })),
              ...(c.secretFiles
                ? [{ name: c.secretFiles.name, secret: { secretName: c.secretFiles.secret, items: c.secretFiles.keys.map((key) => ({ key, path: key })) } }]
                : []),
            ],
          },
        },
        volumeClaimTemplates: [
          {
            metadata: { name: 'data' },
            spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: q(ctx.values.devStores.storage) } } },
          },
        ],
      },
    });
  }
}
