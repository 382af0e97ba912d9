import { Construct } from 'constructs';
import { k8s } from 'cdk8s-plus-33';
import { chainRpcUrl } from './chain';
import { metadataOf, type TenantContext } from './context';
import { commonLabels, NAMES, selectorLabels } from './names';
import { containerSecurity, podSecurity, resourcesOf } from './pod';
import { DEV_STORE_RESOURCES } from './sizing';

export const DEV_STORE_PORTS = { postgres: 5432, redis: 6379 } as const;

/** Users of the official alpine images: `postgres` is 70, `redis` is 999. */
const UIDS = { postgres: 70, redis: 999 } as const;

/** Dev only: the in-cluster stores' credentials are not secret, so they are plain values. */
export const DEV_DATABASE = { user: 'market', password: 'market-dev', database: 'market' } as const;

export const devStoreUrls = {
  DATABASE_URL: `postgres://${DEV_DATABASE.user}:${DEV_DATABASE.password}@${NAMES.postgres}:${DEV_STORE_PORTS.postgres}/${DEV_DATABASE.database}`,
  // Append-only, never evicting: a used nonce or a /ws lease must not be dropped to make room.
  REDIS_URL: `redis://${NAMES.redis}:${DEV_STORE_PORTS.redis}`,
} as const;

const q = (v: string) => k8s.Quantity.fromString(v);

/** How the dev Redis runs (the chart's dev-stores.yaml says the same). */
export const REDIS_ARGS = ['--dir', '/data', '--appendonly', 'yes', '--appendfsync', 'always', '--save', '', '--maxmemory-policy', 'noeviction'] as const;

/**
 * Single-instance PostgreSQL and Redis inside a dev tenant's namespace, and the Secret(s) the
 * tenant's references point at, so a dev cluster needs nothing else. Staging and prod use
 * external stores whose Secrets an operator creates (docs/deploy.md).
 */
export class DevStores extends Construct {
  constructor(scope: Construct, id: string, ctx: TenantContext) {
    super(scope, id);
    const v = ctx.values;
    const { secretRef: db } = v.database;
    const { secretRef: redis } = v.redis;

    // One Secret per name the references use, holding what they point at.
    const secrets = new Map<string, Record<string, string>>();
    const put = (name: string, key: string, value: string) => secrets.set(name, { ...secrets.get(name), [key]: value });
    put(db.name, db.key, devStoreUrls.DATABASE_URL);
    put(redis.name, redis.key, devStoreUrls.REDIS_URL);
    // The tenant's own simulated chain is its RPC (the API's /tx/*, the indexer's source).
    const rpc = v.source.rpcUrlSecretRef;
    if (v.source.type === 'simulator' && rpc) put(rpc.name, rpc.key, chainRpcUrl());
    put(NAMES.devStoresSecret, 'POSTGRES_PASSWORD', DEV_DATABASE.password);
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
      args: ['redis-server', ...REDIS_ARGS],
      dataPath: '/data',
      scratch: ['/tmp'],
      readiness: { tcpSocket: { port: k8s.IntOrString.fromNumber(DEV_STORE_PORTS.redis) }, periodSeconds: 5 },
      // PING, not just the port: a Redis that accepts connections but no longer answers is hung.
      liveness: { exec: { command: ['redis-cli', 'ping'] }, periodSeconds: 10, timeoutSeconds: 5, failureThreshold: 6 },
    });
  }

  private store(
    component: 'postgres' | 'redis',
    ctx: TenantContext,
    c: { image: string; env?: k8s.EnvVar[]; args?: string[]; dataPath: string; scratch: string[]; readiness: k8s.Probe; liveness: k8s.Probe },
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
          metadata: { labels: commonLabels(ctx.labels, component) },
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
                volumeMounts: [{ name: 'data', mountPath: c.dataPath }, ...scratchVolumes.map((s) => ({ name: s.name, mountPath: s.path }))],
              },
            ],
            volumes: scratchVolumes.map((s) => ({ name: s.name, emptyDir: {} })),
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
