import { randomBytes } from 'node:crypto';
import type { Json } from '../../local/kube-apiserver/fields';
import type { Store } from '../../local/kube-apiserver/store';

// CloudNativePG's part, where no CloudNativePG runs (the test API server): what its operator
// writes for a Cluster, as release 1.27 writes it. The status (api/v1/cluster_types.go: `phase`,
// `phaseReason`, `instances`, `readyInstances`, `currentPrimary`, and the `Ready` condition with
// reason ClusterIsReady / ClusterIsNotReady, its observedGeneration the Cluster's generation);
// and the `<cluster>-app` Secret (pkg/specs/secrets.go: type kubernetes.io/basic-auth, keys
// username, user, password, dbname, host (the -rw Service), port, uri, jdbc-uri, pgpass,
// fqdn-uri, fqdn-jdbc-uri), its password 64 random alphanumerics as CloudNativePG generates.

export const CNPG_HEALTHY = 'Cluster in healthy state';
const clusters = (store: Store) => store.typeOf('postgresql.cnpg.io', 'v1', 'clusters');

/** Writes the Cluster's status as CloudNativePG's operator does for `phase`. */
export function reportCluster(store: Store, namespace: string, name: string, phase: string, opts: { phaseReason?: string; readyInstances?: number; observedGeneration?: number } = {}): void {
  store.patch(
    clusters(store),
    namespace,
    name,
    (live) => {
      const instances = ((live.spec as Json).instances as number | undefined) ?? 1;
      const ready = phase === CNPG_HEALTHY;
      const generation = (live.metadata as Json).generation as number;
      return {
        ...live,
        status: {
          phase,
          ...(opts.phaseReason ? { phaseReason: opts.phaseReason } : {}),
          instances,
          readyInstances: opts.readyInstances ?? (ready ? instances : 0),
          currentPrimary: `${name}-1`,
          writeService: `${name}-rw`,
          readService: `${name}-r`,
          conditions: [
            {
              type: 'Ready',
              status: ready ? 'True' : 'False',
              reason: ready ? 'ClusterIsReady' : 'ClusterIsNotReady',
              message: ready ? 'Cluster is Ready' : 'Cluster Is Not Ready',
              lastTransitionTime: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
              observedGeneration: opts.observedGeneration ?? generation,
            },
          ],
        },
      };
    },
    'cloudnative-pg',
    'status',
  );
}

/** The Cluster's generated `-app` Secret, as CloudNativePG makes it once the Cluster is applied. */
export function makeAppSecret(store: Store, namespace: string, cluster: string): Record<string, string> {
  const spec = store.find(clusters(store), namespace, cluster)!.spec as Json;
  const initdb = ((spec.bootstrap as Json | undefined)?.initdb ?? {}) as Json;
  const [user, db] = [(initdb.owner as string | undefined) ?? 'app', (initdb.database as string | undefined) ?? 'app'];
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  const password = [...randomBytes(64)].map((b) => alphabet[b % alphabet.length]).join('');
  const host = `${cluster}-rw`;
  const fqdn = `${host}.${namespace}.svc.cluster.local`;
  const data = {
    username: user,
    user,
    password,
    dbname: db,
    host,
    port: '5432',
    uri: `postgresql://${user}:${password}@${host}.${namespace}:5432/${db}`,
    'jdbc-uri': `jdbc:postgresql://${host}.${namespace}:5432/${db}?password=${password}&user=${user}`,
    pgpass: `${host}:5432:${db}:${user}:${password}\n`,
    'fqdn-uri': `postgresql://${user}:${password}@${fqdn}:5432/${db}`,
    'fqdn-jdbc-uri': `jdbc:postgresql://${fqdn}:5432/${db}?password=${password}&user=${user}`,
  };
  store.create(
    store.typeOf('', 'v1', 'secrets'),
    namespace,
    {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/basic-auth',
      metadata: { name: `${cluster}-app`, namespace, labels: { 'cnpg.io/cluster': cluster, 'cnpg.io/reload': 'true' } },
      data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
    },
    'cloudnative-pg',
  );
  return data;
}
