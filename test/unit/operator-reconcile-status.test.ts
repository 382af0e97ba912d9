// The reconcile's last steps on plain objects: observe the Deployments and the indexer, derive
// the conditions, write the status only when it changed (operator/reconcile/observe.ts, status.ts).
import type { MarketIndexerStatus } from '../../cdk8s/lib/crd';
import { KubeError, type KubeObject } from '../../operator/kube/client';
import { lagCondition, observe, observedConditions, outcomeOf, problemConditions, type ImageTags, type Observed } from '../../operator/reconcile/observe';
import { createStatusWriter, MEMO_MS, statusOf } from '../../operator/reconcile/status';
import { testCommon } from '../support/common';
import { fakeCaches, fakeKube, marketIndexer, object } from '../support/operator-fakes';

const deployment = (name: string, spec: { replicas: number; generation: number }, status: Record<string, number>): KubeObject => ({
  ...object('apps/v1', 'Deployment', 'mi-demo', name, { generation: spec.generation }),
  spec: { replicas: spec.replicas },
  status,
});
const rolled = (name: string, replicas = 2) =>
  deployment(name, { replicas, generation: 3 }, { observedGeneration: 3, updatedReplicas: replicas, availableReplicas: replicas, readyReplicas: replicas });

describe('reconcile step: observe', () => {
  const lag = lagCondition({ slotLag: 3, lastProcessedSlot: '10', writer: null, indexerRunning: true }, 100);
  const types = (o: Observed, unserved: string[] = []) => observedConditions(o, unserved, lag).map((c) => `${c.type}=${c.status} ${c.reason}`);

  it('is Ready and converged once both Deployments rolled out', () => {
    const o = observe(fakeCaches({ objects: [rolled('market-indexer-api'), rolled('market-indexer-indexer', 1)] }), 'mi-demo');
    expect(o).toEqual({ apiAvailable: 2, indexerAvailable: 1, apiReadyReplicas: 2, rolledOut: true, rollout: { api: { updated: 2, replicas: 2 }, indexer: { updated: 1, replicas: 1 } } });
    expect(types(o)).toEqual(['Ready=True Available', 'Progressing=False RolloutComplete', 'Degraded=False AsExpected', 'IndexerLagging=False WithinThreshold']);
    expect(outcomeOf(o, [])).toEqual({ result: 'converged' });
  });

  it('is progressing, not Ready, with nothing there yet', () => {
    const o = observe(fakeCaches(), 'mi-demo');
    expect(o).toEqual({ apiAvailable: 0, indexerAvailable: 0, apiReadyReplicas: 0, rolledOut: false, rollout: { api: { updated: 0, replicas: 1 }, indexer: { updated: 0, replicas: 1 } } });
    const [ready] = observedConditions(o, [], lag);
    expect(ready).toEqual({ type: 'Ready', status: 'False', reason: 'NotAvailable', message: 'available replicas: API 0, indexer 0' });
    expect(types(o)[1]).toBe('Progressing=True RollingOut');
    expect(outcomeOf(o, [])).toEqual({ result: 'progressing' });
  });

  it('is Ready but still progressing while a rollout of a new generation runs', () => {
    const api = deployment('market-indexer-api', { replicas: 2, generation: 4 }, { observedGeneration: 3, updatedReplicas: 2, availableReplicas: 2, readyReplicas: 2 });
    const o = observe(fakeCaches({ objects: [api, rolled('market-indexer-indexer', 1)] }), 'mi-demo');
    expect(types(o).slice(0, 2)).toEqual(['Ready=True Available', 'Progressing=True RollingOut']);
    expect(outcomeOf(o, [])).toEqual({ result: 'progressing' });
    // Too few updated or available replicas count as not rolled out either.
    const short = deployment('market-indexer-api', { replicas: 3, generation: 3 }, { observedGeneration: 3, updatedReplicas: 3, availableReplicas: 2 });
    expect(observe(fakeCaches({ objects: [short, rolled('market-indexer-indexer')] }), 'mi-demo').rolledOut).toBe(false);
    // Every replica updated and available, and an old one still running (surge): not done either.
    const surged = deployment('market-indexer-api', { replicas: 2, generation: 3 }, { observedGeneration: 3, replicas: 3, updatedReplicas: 2, availableReplicas: 3 });
    expect(observe(fakeCaches({ objects: [surged, rolled('market-indexer-indexer')] }), 'mi-demo').rolledOut).toBe(false);
  });

  it('names the image tags a rollout goes from and to, and how far each Deployment is, until it completes', () => {
    const tags: ImageTags = { running: '1.0.0', wanted: '1.1.0' };
    const progressingOf = (o: Observed, t = tags) => observedConditions(o, [], lag, t)[1]!;
    const rolling = deployment('market-indexer-api', { replicas: 2, generation: 4 }, { observedGeneration: 4, replicas: 3, updatedReplicas: 1, availableReplicas: 2 });
    const indexerOld = deployment('market-indexer-indexer', { replicas: 1, generation: 2 }, { observedGeneration: 1, replicas: 1, updatedReplicas: 1, availableReplicas: 1 });
    const o = observe(fakeCaches({ objects: [rolling, indexerOld] }), 'mi-demo');
    expect(o.rollout).toEqual({ api: { updated: 1, replicas: 2 }, indexer: { updated: 0, replicas: 1 } });
    expect(progressingOf(o)).toEqual({ type: 'Progressing', status: 'True', reason: 'RollingOut', message: 'rolling out image tag 1.0.0 → 1.1.0: API 1/2 updated, indexer 0/1 updated' });
    // A change that keeps the tag (a setting), or the first rollout: no tag to leave.
    expect(progressingOf(o, { running: '1.1.0', wanted: '1.1.0' }).message).toBe('rolling out the latest spec (image tag 1.1.0): API 1/2 updated, indexer 0/1 updated');
    expect(progressingOf(o, { wanted: '1.1.0' }).message).toBe('rolling out the latest spec (image tag 1.1.0): API 1/2 updated, indexer 0/1 updated');
    const done = observe(fakeCaches({ objects: [rolled('market-indexer-api'), rolled('market-indexer-indexer', 1)] }), 'mi-demo');
    expect(progressingOf(done)).toEqual({ type: 'Progressing', status: 'False', reason: 'RolloutComplete', message: 'every Deployment runs the latest spec (image tag 1.1.0)' });
  });

  it('records the image tag in the status once a rollout completes, keeping the last one while it runs', () => {
    const mi = marketIndexer('demo', {}, { generation: 5 });
    expect(statusOf(mi, 'mi-demo', [], undefined, 1, '2025-01-01T00:00:00Z', '1.0.0').imageTag).toBe('1.0.0');
    expect(statusOf(mi, 'mi-demo', [], undefined, 1, '2025-01-01T00:00:00Z')).not.toHaveProperty('imageTag');
  });

  it('is Degraded KindNotServed, once per kind, retried in a minute, when the cluster lacks a kind', () => {
    const o = observe(fakeCaches({ objects: [rolled('market-indexer-api'), rolled('market-indexer-indexer')] }), 'mi-demo');
    expect(observedConditions(o, ['ServiceMonitor', 'PrometheusRule', 'ServiceMonitor'], lag)[2]).toEqual({
      type: 'Degraded',
      status: 'True',
      reason: 'KindNotServed',
      message: 'the cluster does not serve ServiceMonitor, PrometheusRule (install the prometheus-operator CRDs, or set monitoring.enabled to false)',
    });
    expect(outcomeOf(o, ['ServiceMonitor'])).toEqual({ result: 'degraded', reason: 'KindNotServed', retryAfterMs: 60_000 });
  });

  it('reads the slot lag against the threshold, Unknown while /status does not answer', () => {
    const seen = (slotLag: number) => ({ slotLag, lastProcessedSlot: '1', writer: null, indexerRunning: true });
    expect(lagCondition(undefined, 100)).toMatchObject({ status: 'Unknown', reason: 'StatusUnavailable' });
    expect(lagCondition(seen(100), 100)).toEqual({ type: 'IndexerLagging', status: 'False', reason: 'WithinThreshold', message: 'slot lag 100 is within 100' });
    expect(lagCondition(seen(101), 100)).toEqual({ type: 'IndexerLagging', status: 'True', reason: 'SlotLagHigh', message: 'slot lag 101 is above 100' });
  });

  it("turns a step's problem into not Ready, not progressing, Degraded with its reason", () => {
    expect(problemConditions({ reason: 'SecretMissing', message: 'lacks x/y' }, lag).map((c) => [c.type, c.status, c.reason, c.message])).toEqual([
      ['Ready', 'False', 'SecretMissing', 'lacks x/y'],
      ['Progressing', 'False', 'SecretMissing', 'waiting for the problem to be fixed'],
      ['Degraded', 'True', 'SecretMissing', 'lacks x/y'],
      ['IndexerLagging', 'False', 'WithinThreshold', 'slot lag 3 is within 100'],
    ]);
  });
});

describe('reconcile step: write the status', () => {
  const T0 = '2025-01-01T00:00:00Z';
  const T1 = '2025-01-01T00:01:00Z';
  const lag = lagCondition(undefined, 100);
  const rollout = { api: { updated: 1, replicas: 1 }, indexer: { updated: 1, replicas: 1 } };
  const ready = observedConditions({ apiAvailable: 1, indexerAvailable: 1, apiReadyReplicas: 1, rolledOut: true, rollout }, [], lag);
  const notReady = observedConditions({ apiAvailable: 0, indexerAvailable: 1, apiReadyReplicas: 0, rolledOut: true, rollout }, [], lag);

  it('keeps lastTransitionTime while a condition keeps its status, and states the generation and the indexer', () => {
    const mi = marketIndexer('demo', {}, { generation: 4 });
    const first = statusOf(mi, 'mi-demo', ready, { slotLag: 2, lastProcessedSlot: '99', writer: null, indexerRunning: true }, 1, T0);
    expect(first).toMatchObject({ observedGeneration: 4, namespace: 'mi-demo', indexer: { lastProcessedSlot: '99', slotLag: 2 }, api: { readyReplicas: 1 } });
    expect(first.indexer).not.toHaveProperty('writer');
    mi.status = first;
    const next = statusOf(mi, 'mi-demo', notReady, { slotLag: 2, lastProcessedSlot: '99', writer: 'pod:1', indexerRunning: true }, undefined, T1);
    expect(next.conditions!.map((c) => [c.type, c.lastTransitionTime, c.observedGeneration])).toEqual([
      ['Ready', T1, 4],
      ['Progressing', T0, 4],
      ['Degraded', T0, 4],
      ['IndexerLagging', T0, 4],
    ]);
    expect(next.indexer!.writer).toBe('pod:1');
    expect(next.api).toEqual({ readyReplicas: 0 });
  });

  function setup(status?: MarketIndexerStatus) {
    const mi = marketIndexer('demo', {}, status ? { resourceVersion: '7' } : {});
    if (status) mi.status = status;
    const kube = fakeKube([mi as never]);
    let clock = 1_000_000;
    const writer = createStatusWriter({ kube, logger: testCommon().logger, platformNamespace: 'market-indexer-system', now: () => T1, clock: () => clock });
    return { mi, kube, writer, tick: (ms: number) => (clock += ms) };
  }

  it('writes nothing when the status is what the resource has (absent and null fields aside)', async () => {
    const current = statusOf(marketIndexer('demo'), 'mi-demo', ready, undefined, 1, T0);
    const { mi, kube, writer } = setup({ ...current, indexer: { lastProcessedSlot: null, slotLag: null } as never });
    await writer.write(mi, statusOf(mi, 'mi-demo', ready, undefined, 1, T1));
    expect(kube.calls).toEqual([]);
  });

  it('patches the whole status (null for what is no longer known) and records an Event per condition that changed status', async () => {
    const { mi, kube, writer } = setup(statusOf(marketIndexer('demo'), 'mi-demo', ready, { slotLag: 1, lastProcessedSlot: '5', writer: 'w', indexerRunning: true }, 1, T0));
    const next = statusOf(mi, 'mi-demo', notReady, undefined, 0, T1);
    await writer.write(mi, next);
    const [patch, ...events] = kube.writes();
    expect(patch).toMatchObject({ verb: 'mergePatch', kind: 'MarketIndexer', name: 'demo', subresource: 'status' });
    expect(patch!.body).toEqual({ status: { ...next, indexer: { lastProcessedSlot: null, slotLag: null, writer: null, observedAt: null }, projection: { liveSchema: null, switchedFrom: null, build: null } } });
    expect(events.map((e) => [e.verb, e.kind, e.namespace])).toEqual([['create', 'Event', 'market-indexer-system']]);
    expect(events[0]!.body).toMatchObject({
      involvedObject: { kind: 'MarketIndexer', name: 'demo', uid: 'mi-uid' },
      reason: 'NotAvailable',
      message: 'Ready=False: available replicas: API 0, indexer 1',
      type: 'Warning',
      source: { component: 'market-indexer-operator' },
      firstTimestamp: T1,
    });
  });

  it('compares with what it wrote until the cache shows that write, then with the cache (for at most MEMO_MS)', async () => {
    const { mi, kube, writer, tick } = setup(statusOf(marketIndexer('demo'), 'mi-demo', ready, undefined, 1, T0));
    const next = statusOf(mi, 'mi-demo', notReady, undefined, 0, T1);
    await writer.write(mi, next);
    expect(kube.writes()).toHaveLength(2);
    // The watch has not delivered it: the cached resource still has the old status.
    await writer.write(mi, next);
    expect(kube.writes()).toHaveLength(2);
    // Past the memo's lifetime the cache is believed again (someone may have written since).
    tick(MEMO_MS);
    await writer.write(mi, next);
    expect(kube.writes()).toHaveLength(4);
    // Once the cache shows the write, it is compared with the cache.
    const seen = { ...mi, metadata: { ...mi.metadata, resourceVersion: kube.find('MarketIndexer', undefined, 'demo')!.metadata.resourceVersion }, status: next };
    await writer.write(seen, next);
    expect(kube.writes()).toHaveLength(4);
  });

  it('logs an Event it could not record and goes on', async () => {
    const { mi } = setup(statusOf(marketIndexer('demo'), 'mi-demo', ready, undefined, 1, T0));
    const kube = fakeKube([mi as never], { refuse: (c) => (c.kind === 'Event' ? new KubeError(403, 'Forbidden', 'events are forbidden') : undefined) });
    const common = testCommon();
    const warn = jest.spyOn(common.logger, 'warn');
    const writer = createStatusWriter({ kube, logger: common.logger, platformNamespace: 'market-indexer-system', now: () => T1 });
    await writer.write(mi, statusOf(mi, 'mi-demo', notReady, undefined, 0, T1));
    expect(kube.writes().map((c) => c.verb)).toEqual(['mergePatch', 'create']);
    expect(warn).toHaveBeenCalledWith({ err: 'events are forbidden', marketIndexer: 'demo' }, 'event not recorded');
  });
});
