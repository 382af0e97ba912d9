import type { KubeObject } from '../../operator/kube/client';
import { CNPG_HEALTHY_PHASE, databaseCondition } from '../../operator/reconcile/database';
import { observe, observedConditions } from '../../operator/reconcile/observe';
import { fakeCaches } from '../support/operator-fakes';

// DatabaseReady from the tenant's CloudNativePG Cluster (D-506): the phase strings and the Ready
// condition as CloudNativePG 1.27 writes them (api/v1/cluster_types.go).
const cnpg = { database: { cloudnativepg: { enabled: true } } } as Parameters<typeof databaseCondition>[2];
const cluster = (status: Record<string, unknown> | undefined, generation = 1): KubeObject =>
  ({ apiVersion: 'postgresql.cnpg.io/v1', kind: 'Cluster', metadata: { name: 'market-indexer-db', namespace: 'mi-demo', generation }, ...(status ? { status } : {}) }) as KubeObject;
const ready = (status: 'True' | 'False', observedGeneration?: number) => ({
  type: 'Ready',
  status,
  reason: status === 'True' ? 'ClusterIsReady' : 'ClusterIsNotReady',
  message: status === 'True' ? 'Cluster is Ready' : 'Cluster Is Not Ready',
  ...(observedGeneration === undefined ? {} : { observedGeneration }),
});
const of = (objects: KubeObject[], unserved: string[] = []) => databaseCondition(fakeCaches({ objects, unserved }), 'mi-demo', cnpg, unserved);

describe('DatabaseReady: the CloudNativePG Cluster as the operator reports it', () => {
  it('is absent for a tenant that brings its own PostgreSQL', () => {
    expect(databaseCondition(fakeCaches({ objects: [cluster({ phase: CNPG_HEALTHY_PHASE })] }), 'mi-demo', { database: { cloudnativepg: { enabled: false } } } as typeof cnpg, [])).toBeUndefined();
  });

  it('is True in the healthy phase with Ready True for the current generation, naming the instances and the primary', () => {
    expect(of([cluster({ phase: CNPG_HEALTHY_PHASE, instances: 3, readyInstances: 3, currentPrimary: 'market-indexer-db-1', conditions: [ready('True', 2)] }, 2)])).toEqual({
      type: 'DatabaseReady',
      status: 'True',
      reason: 'ClusterHealthy',
      message: 'Cluster market-indexer-db: Cluster in healthy state, 3/3 instances ready, primary market-indexer-db-1',
    });
  });

  it('is False with the phase as reason while CloudNativePG fails over, sets up or is stuck, its phaseReason in the message', () => {
    expect(of([cluster({ phase: 'Failing over', phaseReason: 'Failing over from market-indexer-db-1 to market-indexer-db-2', instances: 3, readyInstances: 2, conditions: [ready('False')] })])).toEqual({
      type: 'DatabaseReady',
      status: 'False',
      reason: 'FailingOver',
      message: 'Cluster market-indexer-db: Failing over (Failing over from market-indexer-db-1 to market-indexer-db-2), 2/3 instances ready',
    });
    expect(of([cluster({ phase: 'Setting up primary' })])).toMatchObject({ status: 'False', reason: 'SettingUpPrimary' });
    expect(of([cluster({ phase: 'Creating a new replica' })])).toMatchObject({ status: 'False', reason: 'CreatingReplica' });
    // A phase of a later release: not healthy, its text kept.
    expect(of([cluster({ phase: 'Some new phase' })])).toMatchObject({ status: 'False', reason: 'ClusterNotHealthy', message: 'Cluster market-indexer-db: Some new phase, 0/0 instances ready' });
  });

  it('is not True while Ready is False or reported for an older spec, even in the healthy phase', () => {
    expect(of([cluster({ phase: CNPG_HEALTHY_PHASE, conditions: [ready('False')] })])).toMatchObject({ status: 'False', reason: 'ClusterIsNotReady' });
    expect(of([cluster({ phase: CNPG_HEALTHY_PHASE, conditions: [ready('True', 1)] }, 2)])).toMatchObject({ status: 'False', reason: 'SpecNotObserved' });
  });

  it('is Unknown before CloudNativePG reports the Cluster, before it is applied, and when its kind is not served', () => {
    expect(of([cluster(undefined)])).toEqual({ type: 'DatabaseReady', status: 'Unknown', reason: 'PhaseNotReported', message: 'CloudNativePG has not reported the Cluster market-indexer-db yet: is its operator running?' });
    expect(of([])).toMatchObject({ status: 'Unknown', reason: 'ClusterNotFound' });
    expect(of([], ['Cluster'])).toMatchObject({ status: 'Unknown', reason: 'KindNotServed' });
  });

  it("names CloudNativePG, not the prometheus-operator, when a Cluster's kind is what the cluster lacks", () => {
    const o = observe(fakeCaches({ objects: [] }), 'mi-demo');
    const lag = { type: 'IndexerLagging' as const, status: 'Unknown' as const, reason: 'StatusUnavailable', message: '' };
    expect(observedConditions(o, ['Cluster', 'ServiceMonitor'], lag)[2]!.message).toBe(
      'the cluster does not serve Cluster, ServiceMonitor (install CloudNativePG, or set database.cloudnativepg.enabled to false; install the prometheus-operator CRDs, or set monitoring.enabled to false)',
    );
  });
});
