import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { marketIndexerCrd, type Condition, type MarketIndexer } from '../../cdk8s/lib/crd';
import { synthEnvironment } from '../../cdk8s/synth';
import type { Json } from '../../local/kube-apiserver/fields';
import { startTestApiServer, type TestApiServer } from '../../local/kube-apiserver/server';
import { LEASE_NAME } from '../../operator/run';
import { CNPG_HEALTHY, makeAppSecret, reportCluster } from '../support/cnpg-stand-in';
import { parseManifests, ROOT } from '../support/kit';
import { spawnOperator, type Child } from '../support/processes';
import { waitFor } from '../support/tables';

// The operator's report of a tenant's CloudNativePG Cluster (D-506): the operator runs as its
// own process against the test API server, and the test plays CloudNativePG's operator, writing
// the Cluster's status as release 1.27 does (test/support/cnpg-stand-in.ts). What is judged is the
// MarketIndexer's `DatabaseReady` condition, its observedGeneration, and the Events a user sees.
jest.setTimeout(120_000);

const PLATFORM_NAMESPACE = 'market-indexer-system';
const NS = 'mi-zeta';
const DB = 'market-indexer-db';

describe('operator: a tenant on CloudNativePG reports its Cluster in status', () => {
  let api: TestApiServer;
  let dir: string;
  let operator: Child;
  const s = () => api.store;
  const type = (group: string, version: string, plural: string) => s().typeOf(group, version, plural);
  const MI = () => type('marketindexer.dev', 'v1alpha1', 'marketindexers');
  const getMi = () => s().find(MI(), undefined, 'zeta') as unknown as MarketIndexer & { metadata: { generation: number } };
  const database = () => (getMi().status?.conditions as Condition[] | undefined)?.find((c) => c.type === 'DatabaseReady');
  const events = () => s().list(type('', 'v1', 'events'), PLATFORM_NAMESPACE, []).filter((e) => ((e.involvedObject as Json).name as string) === 'zeta');

  beforeAll(async () => {
    api = await startTestApiServer();
    dir = mkdtempSync(path.join(os.tmpdir(), 'operator-cnpg-'));
    writeFileSync(path.join(dir, 'kubeconfig'), api.kubeconfig('operator'));
    const platform = synthEnvironment({ environment: 'test', image: { tag: '1.0.0' }, networkPolicy: { egress: { redis: { ipBlocks: [{ cidr: '10.1.0.0/16' }] }, rpc: { ipBlocks: [{ cidr: '0.0.0.0/0' }] } } }, platform: { namespace: PLATFORM_NAMESPACE }, tenants: {} }, 'test')
      .find((f) => f.name === 'platform.yaml')!.objects as Json[];
    const defaults = platform.find((o) => o.kind === 'ConfigMap' && ((o.metadata as Json).name as string).endsWith('-defaults'))!;
    writeFileSync(path.join(dir, 'defaults.json'), (defaults.data as Json)['defaults.json'] as string);
    s().create(type('', 'v1', 'namespaces'), undefined, { metadata: { name: PLATFORM_NAMESPACE } }, 'test');
    const crds = type('apiextensions.k8s.io', 'v1', 'customresourcedefinitions');
    s().create(crds, undefined, marketIndexerCrd(), 'test');
    for (const file of ['monitoring.coreos.com', 'postgresql.cnpg.io']) for (const crd of parseManifests(readFileSync(path.join(ROOT, `cdk8s/crds/${file}.yaml`), 'utf8'))) s().create(crds, undefined, crd, 'test');
    operator = spawnOperator(['--kubeconfig', path.join(dir, 'kubeconfig')], {
      OPERATOR_ENVIRONMENT: 'test',
      OPERATOR_DEFAULTS_FILE: path.join(dir, 'defaults.json'),
      OPERATOR_STATUS_URL: 'http://127.0.0.1:1/{tenant}/status',
      OPERATOR_RESYNC_SECONDS: '30',
      OPERATOR_LEASE_SECONDS: '3',
    });
    await operator.port;
    await waitFor('the operator to lead', async () => s().find(type('coordination.k8s.io', 'v1', 'leases'), PLATFORM_NAMESPACE, LEASE_NAME));
  });

  afterAll(async () => {
    operator?.child.kill('SIGKILL');
    await operator?.exited;
    await api?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is Unknown until CloudNativePG reports the Cluster, False while it sets up, True once healthy', async () => {
    s().create(MI(), undefined, { apiVersion: 'marketindexer.dev/v1alpha1', kind: 'MarketIndexer', metadata: { name: 'zeta' }, spec: { tenant: 'zeta', source: { type: 'simulator' }, database: { cloudnativepg: { enabled: true, instances: 3 } }, quota: { limitsCpu: '32', limitsMemory: '32Gi', persistentVolumeClaims: 4 } } }, 'test');
    await waitFor('the namespace', async () => s().find(type('', 'v1', 'namespaces'), undefined, NS)).catch((e: Error) => {
      throw new Error(`${e.message}: ${JSON.stringify(getMi().status)}`);
    });
    // The tenant's own Secret (Redis); the database's is CloudNativePG's, which the operator does not wait for.
    s().create(type('', 'v1', 'secrets'), NS, { metadata: { name: 'market-indexer' }, stringData: { REDIS_URL: 'redis://r:6379' } }, 'test');
    await waitFor('the Cluster applied', async () => s().find(type('postgresql.cnpg.io', 'v1', 'clusters'), NS, DB));
    await waitFor('DatabaseReady Unknown', async () => database()?.reason === 'PhaseNotReported');
    expect(database()).toMatchObject({ status: 'Unknown', observedGeneration: 1, message: 'CloudNativePG has not reported the Cluster market-indexer-db yet: is its operator running?' });

    reportCluster(s(), NS, DB, 'Setting up primary');
    await waitFor('DatabaseReady False while the primary is set up', async () => database()?.reason === 'SettingUpPrimary');
    expect(database()).toMatchObject({ status: 'False', message: 'Cluster market-indexer-db: Setting up primary, 0/3 instances ready, primary market-indexer-db-1' });
    makeAppSecret(s(), NS, DB);
    reportCluster(s(), NS, DB, CNPG_HEALTHY);
    await waitFor('DatabaseReady True', async () => database()?.status === 'True');
    expect(database()).toMatchObject({ reason: 'ClusterHealthy', observedGeneration: 1, message: 'Cluster market-indexer-db: Cluster in healthy state, 3/3 instances ready, primary market-indexer-db-1' });
  });

  it('goes False with a Warning Event while CloudNativePG fails over, and True again with a Normal one', async () => {
    const since = events().length;
    reportCluster(s(), NS, DB, 'Failing over', { phaseReason: 'Failing over from market-indexer-db-1 to market-indexer-db-2', readyInstances: 2 });
    await waitFor('DatabaseReady False', async () => database()?.reason === 'FailingOver');
    const failing = database()!;
    expect(failing.message).toBe('Cluster market-indexer-db: Failing over (Failing over from market-indexer-db-1 to market-indexer-db-2), 2/3 instances ready, primary market-indexer-db-1');
    reportCluster(s(), NS, DB, CNPG_HEALTHY);
    await waitFor('DatabaseReady True again', async () => database()?.status === 'True');
    expect(Date.parse(database()!.lastTransitionTime)).toBeGreaterThanOrEqual(Date.parse(failing.lastTransitionTime));
    await waitFor('both Events', async () => events().length >= since + 2);
    const mine = events().slice(since).map((e) => [e.type, e.reason, e.message]);
    expect(mine).toEqual(
      expect.arrayContaining([
        ['Warning', 'FailingOver', `DatabaseReady=False: ${failing.message}`],
        ['Normal', 'ClusterHealthy', 'DatabaseReady=True: Cluster market-indexer-db: Cluster in healthy state, 3/3 instances ready, primary market-indexer-db-1'],
      ]),
    );
  });

  it("follows the resource's generation, and is not True while CloudNativePG has not observed the Cluster's new spec", async () => {
    s().patch(MI(), undefined, 'zeta', (live) => ({ ...live, spec: { ...(live.spec as Json), database: { cloudnativepg: { enabled: true, instances: 2 } } } }), 'test', 'main');
    await waitFor('the Cluster resized', async () => ((s().find(type('postgresql.cnpg.io', 'v1', 'clusters'), NS, DB)!.spec as Json).instances as number) === 2);
    // CloudNativePG's Ready condition still speaks of generation 1.
    await waitFor('DatabaseReady for generation 2', async () => database()?.observedGeneration === 2);
    expect(database()).toMatchObject({ status: 'False', reason: 'SpecNotObserved' });
    reportCluster(s(), NS, DB, CNPG_HEALTHY);
    await waitFor('DatabaseReady True for generation 2', async () => database()?.status === 'True' && database()?.observedGeneration === 2);
    expect(getMi().status?.observedGeneration).toBe(2);
  });
});
