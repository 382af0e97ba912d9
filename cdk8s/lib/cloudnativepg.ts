import { Construct } from 'constructs';
import { k8s } from 'cdk8s-plus-33';
import { Cluster, ClusterSpecPostgresqlSynchronousDataDurability, ClusterSpecPostgresqlSynchronousMethod, ClusterSpecResourcesLimits, ClusterSpecResourcesRequests } from '../imports/postgresql.cnpg.io';
import { metadataOf, type TenantContext } from './context';
import { DEFAULT_SECRET_NAME } from './defaults';
import { NAMES } from './names';
import type { Destination, SecretKeyRef, TenantValues } from './values';

/**
 * A tenant's database as a CloudNativePG `Cluster` (D-500): CloudNativePG runs the instances,
 * the `-rw` Service follows the primary, and the generated `<cluster>-app` Secret holds the
 * application user's credentials, its `uri` key a complete connection URL to `-rw`. So the kit
 * writes no Secret for it: the indexer and the migration init container take `uri` as their
 * DATABASE_URL.
 */

/** The label CloudNativePG puts on every pod of a Cluster (instances and their jobs). */
export const CNPG_CLUSTER_LABEL = 'cnpg.io/cluster';
/** The instance manager's status endpoint, which the CloudNativePG operator polls on every instance. */
export const CNPG_STATUS_PORT = 8000;
/** The instances' metrics exporter (the PodMonitor's `metrics` port). */
export const CNPG_METRICS_PORT = 9187;
export const POSTGRES_PORT = 5432;
/** The database and its owner the Cluster bootstraps (initdb). */
export const CNPG_DATABASE = 'market';

/** Services CloudNativePG makes for a Cluster: read-write (the primary), read-only (replicas), any instance. */
export const cnpgServices = (cluster: string = NAMES.database) => ({ rw: `${cluster}-rw`, ro: `${cluster}-ro`, r: `${cluster}-r` });

/**
 * Where DATABASE_URL comes from: the stated Secret key; else, with CloudNativePG, the Cluster's
 * generated `-app` Secret's `uri`; else the Secret market-indexer's `DATABASE_URL` key.
 */
export function databaseSecretRef(v: Pick<TenantValues, 'database'>): SecretKeyRef {
  if (v.database.secretRef) return v.database.secretRef;
  if (v.database.cloudnativepg.enabled) return { name: `${NAMES.database}-app`, key: 'uri' };
  return { name: DEFAULT_SECRET_NAME, key: 'DATABASE_URL' };
}

/** What the schema cannot say about a CloudNativePG database (the chart refuses the same, `market-indexer.check`). */
export function cloudNativePgProblems(v: TenantValues): string[] {
  const c = v.database.cloudnativepg;
  if (!c.enabled) return [];
  const p: string[] = [];
  if (v.database.secretRef) {
    p.push('database.secretRef and database.cloudnativepg.enabled: choose one (the Cluster makes its own credentials, in the Secret market-indexer-db-app)');
  }
  if (v.devStores.enabled) p.push('database.cloudnativepg.enabled and devStores.enabled: choose one (both would run the tenant\'s PostgreSQL)');
  if (c.synchronous.enabled && c.synchronous.number >= c.instances) {
    p.push(
      `database.cloudnativepg.synchronous.number (${c.synchronous.number}) must be below database.cloudnativepg.instances (${c.instances}): synchronous replication needs that many standbys besides the primary`,
    );
  }
  return p;
}

const quantities = <T>(r: { cpu: string; memory: string }, of: (q: string) => T) => ({ cpu: of(r.cpu), memory: of(r.memory) });

export class CloudNativePgCluster extends Construct {
  constructor(scope: Construct, id: string, ctx: TenantContext) {
    super(scope, id);
    const c = ctx.values.database.cloudnativepg;
    new Cluster(this, 'cluster', {
      metadata: metadataOf(ctx, NAMES.database, 'database'),
      spec: {
        instances: c.instances,
        imageName: c.imageName,
        storage: { size: c.storage.size, ...(c.storage.storageClass ? { storageClass: c.storage.storageClass } : {}) },
        ...(c.synchronous.enabled
          ? {
              postgresql: {
                synchronous: {
                  // Quorum: any `number` standbys, so losing one of them does not stall commits.
                  method: ClusterSpecPostgresqlSynchronousMethod.ANY,
                  number: c.synchronous.number,
                  dataDurability: c.synchronous.dataDurability === 'required' ? ClusterSpecPostgresqlSynchronousDataDurability.REQUIRED : ClusterSpecPostgresqlSynchronousDataDurability.PREFERRED,
                },
              },
            }
          : {}),
        resources: {
          requests: quantities(c.resources.requests, ClusterSpecResourcesRequests.fromString),
          limits: quantities(c.resources.limits, ClusterSpecResourcesLimits.fromString),
        },
        // The tenant's Prometheus (the one its ServiceMonitors are for) scrapes the instances.
        monitoring: { enablePodMonitor: ctx.values.monitoring.enabled },
        bootstrap: { initdb: { database: CNPG_DATABASE, owner: CNPG_DATABASE } },
      },
    });
  }
}

const tcp = (port: number): k8s.NetworkPolicyPort => ({ protocol: 'TCP', port: k8s.IntOrString.fromNumber(port) });
const inNamespace = (name: string): k8s.NetworkPolicyPeer => ({ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': name } } });
const ipBlocks = (blocks: Destination['ipBlocks']): k8s.NetworkPolicyPeer[] =>
  blocks.map((b) => ({ ipBlock: { cidr: b.cidr, ...(b.except?.length ? { except: b.except } : {}) } }));

/** The Cluster's pods (instances and CloudNativePG's jobs for them), as a NetworkPolicy peer or selector. */
export const cnpgPods = (): k8s.LabelSelector => ({ matchLabels: { [CNPG_CLUSTER_LABEL]: NAMES.database } });

/** The tenant's pods' egress rule to the Cluster's instances (in place of the database's address blocks). */
export const toCloudNativePg = (): k8s.NetworkPolicyEgressRule => ({ to: [{ podSelector: cnpgPods() }], ports: [tcp(POSTGRES_PORT)] });

/**
 * The Cluster's NetworkPolicy (D-504): in, PostgreSQL from the tenant's clients and from the
 * other instances (streaming replication, a joining instance's base backup), the status port from
 * the CloudNativePG operator's namespace, the metrics port from the monitoring namespace; out,
 * PostgreSQL to the other instances and the Kubernetes API server (the instance manager watches
 * its Cluster). DNS is the namespace's allow-dns policy.
 */
export function cloudNativePgPolicy(ctx: TenantContext, clients: k8s.NetworkPolicyPeer): k8s.NetworkPolicySpec {
  const { values } = ctx;
  const c = values.database.cloudnativepg;
  const instances: k8s.NetworkPolicyPeer = { podSelector: cnpgPods() };
  return {
    podSelector: cnpgPods(),
    policyTypes: ['Ingress', 'Egress'],
    ingress: [
      { from: [clients, instances], ports: [tcp(POSTGRES_PORT)] },
      { from: [inNamespace(c.operatorNamespace)], ports: [tcp(CNPG_STATUS_PORT)] },
      ...(values.monitoring.enabled ? [{ from: [inNamespace(values.networkPolicy.monitoringNamespace)], ports: [tcp(CNPG_METRICS_PORT)] }] : []),
    ],
    egress: [
      { to: [instances], ports: [tcp(POSTGRES_PORT)] },
      { to: ipBlocks(c.apiServer.ipBlocks), ports: c.apiServer.ports.map(tcp) },
    ],
  };
}
