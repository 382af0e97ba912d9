import { ENVIRONMENTS } from '../../cdk8s/environments';
import type { EnvironmentInput } from '../../cdk8s/lib/values';
import { synthEnvironment } from '../../cdk8s/synth';
import { cdk8sRefusal, helmRefusal, helmTemplate, keyOf, schemaProblems, withoutBookkeeping, type Manifest } from '../support/kit';

// A tenant's database as a CloudNativePG Cluster (D-500..D-504), from the cdk8s app and from the
// chart (the real helm binary): the same objects, valid against the vendored CRD, wired to the
// Cluster's own Service and Secret, closed by its NetworkPolicy, and the same refusals.
jest.setTimeout(60_000);

type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any
const staging = () => structuredClone(ENVIRONMENTS.staging!) as Any;
/** Staging with alpha on CloudNativePG (the environment says 2 instances). */
const stagingOnCnpg = () => {
  const e = staging();
  e.tenants.alpha.database = { cloudnativepg: { enabled: true } };
  return e as EnvironmentInput;
};

const cdk8sObjects = (env: EnvironmentInput) => synthEnvironment(env, 'test').flatMap((f) => f.objects as Manifest[]);
const byKey = (objects: Manifest[]) => Object.fromEntries(objects.filter((o) => !o.metadata.annotations?.['helm.sh/hook']).map((o) => [keyOf(o), withoutBookkeeping(o)]));
const envOf = (o: Manifest) => {
  const pod = (o as Any).spec?.template?.spec;
  return [...(pod?.initContainers ?? []), ...(pod?.containers ?? [])].flatMap((c: Any) => (c.env ?? []).map((e: Any) => ({ container: c.name, ...e })));
};

describe('CloudNativePG in the kit', () => {
  it('renders the same Cluster and policies from the chart as from the cdk8s app, valid against the vendored CRD', async () => {
    const env = stagingOnCnpg();
    const fromCdk8s = byKey(cdk8sObjects(env));
    const rendered = await helmTemplate([env]);
    for (const o of rendered) expect(schemaProblems(o)).toEqual([]);
    const fromHelm = byKey(rendered);
    expect(Object.keys(fromHelm).sort()).toEqual(Object.keys(fromCdk8s).sort());
    for (const k of Object.keys(fromCdk8s)) expect([k, fromHelm[k]]).toEqual([k, fromCdk8s[k]]);

    const cluster = fromCdk8s['Cluster mi-alpha/market-indexer-db'] as Any;
    expect(cluster.apiVersion).toBe('postgresql.cnpg.io/v1');
    expect(cluster.spec).toMatchObject({ instances: 2, monitoring: { enablePodMonitor: true }, bootstrap: { initdb: { database: 'market', owner: 'market' } } });
    // Asynchronous unless asked: no synchronous section at all.
    expect(cluster.spec.postgresql).toBeUndefined();
    // beta keeps its own PostgreSQL.
    expect(Object.keys(fromCdk8s).filter((k) => k.startsWith('Cluster '))).toEqual(['Cluster mi-alpha/market-indexer-db']);
  });

  it('points the migration, the API and the indexer at the Cluster\'s -app Secret (uri, to -rw), and writes no Secret for it', () => {
    const objects = cdk8sObjects(stagingOnCnpg()).filter((o) => o.metadata.namespace === 'mi-alpha');
    const dbEnv = objects.flatMap((o) => envOf(o).filter((e: Any) => e.name === 'DATABASE_URL').map((e: Any) => [`${o.kind}/${o.metadata.name}/${e.container}`, e.valueFrom]));
    expect(dbEnv.length).toBeGreaterThanOrEqual(3);
    for (const [, from] of dbEnv) expect(from).toEqual({ secretKeyRef: { name: 'market-indexer-db-app', key: 'uri' } });
    expect(dbEnv.map(([w]) => w)).toEqual(expect.arrayContaining([expect.stringMatching(/^Deployment\/market-indexer-api\/migrate/), expect.stringMatching(/^Deployment\/market-indexer-indexer\//)]));
    expect(objects.filter((o) => o.kind === 'Secret')).toEqual([]);
  });

  it('opens the instances to their clients, each other, the CloudNativePG operator (8000) and the scraper, and nothing else', () => {
    const env = stagingOnCnpg() as Any;
    env.tenants.alpha.database.cloudnativepg.operatorNamespace = 'postgres-operator';
    const objects = cdk8sObjects(env).filter((o) => o.metadata.namespace === 'mi-alpha');
    const policy = objects.find((o) => o.kind === 'NetworkPolicy' && o.metadata.name === 'market-indexer-db') as Any;
    const instances = { podSelector: { matchLabels: { 'cnpg.io/cluster': 'market-indexer-db' } } };
    const ns = (name: string) => ({ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': name } } });
    const tcp = (port: number) => ({ protocol: 'TCP', port });
    expect(policy.spec).toEqual({
      podSelector: instances.podSelector,
      policyTypes: ['Ingress', 'Egress'],
      ingress: [
        { from: [{ podSelector: { matchExpressions: [{ key: 'app.kubernetes.io/component', operator: 'In', values: ['api', 'indexer'] }] } }, instances], ports: [tcp(5432)] },
        { from: [ns('postgres-operator')], ports: [tcp(8000)] },
        { from: [ns('monitoring')], ports: [tcp(9187)] },
      ],
      egress: [
        { to: [instances], ports: [tcp(5432)] },
        { to: [{ ipBlock: { cidr: '0.0.0.0/0' } }], ports: [tcp(443), tcp(6443)] },
      ],
    });
    // The API and the indexer reach PostgreSQL at the instances, no longer at an address block.
    for (const name of ['market-indexer-api', 'market-indexer-indexer']) {
      const egress = (objects.find((o) => o.kind === 'NetworkPolicy' && o.metadata.name === name) as Any).spec.egress;
      expect(egress).toContainEqual({ to: [instances], ports: [tcp(5432)] });
      expect(egress.filter((r: Any) => r.ports.some((p: Any) => p.port === 5432))).toHaveLength(1);
    }
  });

  it('renders the shipped prod tenants on three synchronous instances', () => {
    const clusters = cdk8sObjects(ENVIRONMENTS.prod!).filter((o) => o.kind === 'Cluster') as Any[];
    expect(clusters.map((c) => c.metadata.namespace).sort()).toEqual(['mi-alpha', 'mi-beta', 'mi-gamma']);
    for (const c of clusters) {
      expect(c.spec).toMatchObject({ instances: 3, postgresql: { synchronous: { method: 'any', number: 1, dataDurability: 'required' } }, storage: { size: '50Gi' } });
    }
  });

  describe('refuses what cannot run, naming the field, in the cdk8s app and the chart alike', () => {
    const cnpg = (e: Any) => e.tenants.alpha.database.cloudnativepg;

    it.each([
      [
        'its own Secret and a Cluster',
        (e: Any) => (e.tenants.alpha.database.secretRef = { name: 'pg', key: 'url' }),
        'database.secretRef and database.cloudnativepg.enabled: choose one (the Cluster makes its own credentials, in the Secret market-indexer-db-app)',
        /tenant alpha: database.secretRef and database.cloudnativepg.enabled: choose one/,
      ],
      [
        'synchronous replication on one instance',
        (e: Any) => Object.assign(cnpg(e), { instances: 1, synchronous: { enabled: true } }),
        'database.cloudnativepg.synchronous.number (1) must be below database.cloudnativepg.instances (1): synchronous replication needs that many standbys besides the primary',
        /tenant alpha: database.cloudnativepg.synchronous.number \(1\) must be below database.cloudnativepg.instances \(1\)/,
      ],
      [
        'no instance',
        (e: Any) => (cnpg(e).instances = 0),
        'tenants.alpha.database.cloudnativepg.instances: must be >= 1',
        /- tenants\.alpha\.database\.cloudnativepg\.instances: Must be greater than or equal to 1/,
      ],
      [
        'a Cluster beside the dev stores',
        (e: Any) => {
          e.tenants.alpha.devStores = { enabled: true };
          e.tenants.alpha.source = { rpcUrlSecretRef: { name: 'rpc', key: 'RPC_URL' } };
        },
        "database.cloudnativepg.enabled and devStores.enabled: choose one (both would run the tenant's PostgreSQL)",
        /tenant alpha: database.cloudnativepg.enabled and devStores.enabled: choose one/,
      ],
    ])('%s', async (_what, mutate, cdk8sMessage, helmMessage) => {
      const e = stagingOnCnpg() as Any;
      mutate(e);
      expect(cdk8sRefusal(e)).toContain(cdk8sMessage);
      expect(await helmRefusal(e)).toMatch(helmMessage);
    });

    it('and a quota without room for the instances\' volumes (cdk8s: the chart compares no quantities, D-70)', () => {
      const e = stagingOnCnpg() as Any;
      e.tenants.alpha.quota = { persistentVolumeClaims: 1 };
      expect(cdk8sRefusal(e)).toContain('quota.persistentVolumeClaims (1) is below the 2 the tenant needs');
    });
  });
});
