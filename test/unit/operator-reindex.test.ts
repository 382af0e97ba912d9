// A re-index as the operator shows it (D-436, D-437): the `Reindexing` condition and
// `status.projection` from fake readings of the indexer's /status, the figures recorded at most
// once a minute, and one `ProjectionSwitched` Event at a switch (operator/reconcile/reindex.ts,
// operator/reconcile/status.ts, through the whole reconcile on fakes of the client and the caches).
import type { Condition } from '../../cdk8s/lib/crd';
import type { BuildReading, IndexerObservation, IndexerReading } from '../../operator/reconcile/outcome';
import { buildMessage, projectionStatus, REINDEX_PROGRESS_MS, reindexCondition } from '../../operator/reconcile/reindex';
import { cachesOf, fakeKube, fakeReconciler, marketIndexer, rollOutDeployments, type FakeKube } from '../support/operator-fakes';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const at = (ms: number) => new Date(T0 + ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const reading = (live: string, build: BuildReading | null, lastProcessedSlot = '1000'): IndexerObservation => ({
  slotLag: 2,
  lastProcessedSlot,
  writer: 'indexer-0:7',
  indexerRunning: true,
  projection: { live, build },
});
const building = (slot: number, tip = 812_400, schema = 'p2'): BuildReading => ({ schema, lastProcessedSlot: String(slot), chainTipSlot: tip });

describe('Reindexing and status.projection from a reading', () => {
  it('is True while a build is reported, its message the slots done and the tip', () => {
    const p = projectionStatus(reading('public', building(812_345)), undefined, at(0));
    expect(p).toEqual({ liveSchema: 'public', build: { schema: 'p2', lastProcessedSlot: '812345', chainTipSlot: 812_400, slotLag: 55, observedAt: at(0) } });
    expect(reindexCondition(reading('public', building(812_345)), p)).toEqual({ type: 'Reindexing', status: 'True', reason: 'Building', message: 'p2 at slot 812,345 of 812,400 (55 behind)' });
    // A builder that has processed nothing, whose writer has not seen the tip yet.
    expect(buildMessage({ schema: 'p3', observedAt: at(0) })).toBe('p3 at slot 0 (its writer has not seen the tip yet)');
  });

  it(`keeps the recorded figures for ${REINDEX_PROGRESS_MS / 1000} s while the build moves, then takes the new ones; a new build at once`, () => {
    const first = projectionStatus(reading('public', building(100_000)), undefined, at(0));
    const soon = projectionStatus(reading('public', building(400_000)), first, at(REINDEX_PROGRESS_MS - 1_000));
    expect(soon).toEqual(first);
    const later = projectionStatus(reading('public', building(700_000)), soon, at(REINDEX_PROGRESS_MS));
    expect(later.build).toEqual({ schema: 'p2', lastProcessedSlot: '700000', chainTipSlot: 812_400, slotLag: 112_400, observedAt: at(REINDEX_PROGRESS_MS) });
    // Another schema is another build: its figures are taken at once.
    expect(projectionStatus(reading('public', building(5, 812_400, 'p3')), later, at(REINDEX_PROGRESS_MS + 1_000)).build).toMatchObject({ schema: 'p3', lastProcessedSlot: '5' });
    // The same figures read again, however late, change nothing (a restart reads what it recorded).
    expect(projectionStatus(reading('public', building(700_000)), later, at(10 * REINDEX_PROGRESS_MS))).toEqual(later);
  });

  it('is False Switched once the live schema changed from the recorded one, and stays so; NotReindexing otherwise', () => {
    const none = projectionStatus(reading('public', null), undefined, at(0));
    expect(none).toEqual({ liveSchema: 'public' });
    expect(reindexCondition(reading('public', null), none)).toEqual({ type: 'Reindexing', status: 'False', reason: 'NotReindexing', message: 'none: the API reads public' });
    const built = projectionStatus(reading('public', building(812_396)), none, at(1_000));
    const switched = projectionStatus(reading('p2', null), built, at(2_000));
    expect(switched).toEqual({ liveSchema: 'p2', switchedFrom: 'public' });
    expect(reindexCondition(reading('p2', null), switched)).toEqual({ type: 'Reindexing', status: 'False', reason: 'Switched', message: 'switched from public to p2' });
    expect(projectionStatus(reading('p2', null), switched, at(3_000))).toEqual(switched);
    // A tenant first read on p2 (nothing recorded): no switch was seen.
    expect(reindexCondition(reading('p2', null), projectionStatus(reading('p2', null), undefined, at(0))).reason).toBe('NotReindexing');
  });

  it('is Unknown while /status is not read (the live schema kept) or does not report the projection', () => {
    const recorded = { liveSchema: 'public', build: { schema: 'p2', lastProcessedSlot: '5', observedAt: at(0) } };
    const down: IndexerReading = { unavailable: "the indexer's /status answered HTTP 503" };
    expect(projectionStatus(down, recorded, at(1_000))).toEqual({ liveSchema: 'public' });
    expect(reindexCondition(down, { liveSchema: 'public' })).toMatchObject({ status: 'Unknown', reason: 'StatusUnavailable' });
    expect(reindexCondition(undefined, {})).toMatchObject({ status: 'Unknown', reason: 'StatusUnavailable' });
    const earlier: IndexerReading = { slotLag: 1, lastProcessedSlot: '9', writer: null, indexerRunning: true };
    expect(reindexCondition(earlier, projectionStatus(earlier, recorded, at(1_000)))).toEqual({
      type: 'Reindexing',
      status: 'Unknown',
      reason: 'NotReported',
      message: "not known: the indexer's /status does not report its projection",
    });
  });
});

describe('Reindexing through the reconcile: its writes and Events', () => {
  let clock = 0;
  const reconcilerOf = (kube: FakeKube, observation: () => IndexerReading | undefined) => fakeReconciler(kube, { observation, now: () => at(clock) }).reconciler;
  const rollOut = rollOutDeployments;
  const statusWrites = (kube: FakeKube, mark: number) => kube.calls.slice(mark).filter((c) => c.verb === 'mergePatch' && c.subresource === 'status').length;
  const events = (kube: FakeKube, mark: number) =>
    kube.calls.slice(mark).filter((c) => c.verb === 'create' && c.kind === 'Event').map((c) => { const b = c.body as { reason: string; type: string; message: string }; return `${b.type} ${b.reason}: ${b.message}`; });
  const reindexing = (kube: FakeKube) => (kube.find('MarketIndexer', undefined, 'demo')!.status as { conditions: Condition[] }).conditions.find((c) => c.type === 'Reindexing')!;

  it('writes at the start of a build and once a minute while it moves, one Event at the start and one at the switch, none after a restart', async () => {
    clock = 0;
    let now: IndexerReading = reading('public', null);
    const kube = fakeKube([marketIndexer('demo') as never]);
    const operator = reconcilerOf(kube, () => now);
    await operator.reconcile('demo');
    rollOut(kube);
    await operator.reconcile('demo');
    expect(reindexing(kube)).toMatchObject({ status: 'False', reason: 'NotReindexing', observedGeneration: 1 });

    // A build starts, and moves at every read (every 10 s here) while the live cursor stays.
    let mark = kube.calls.length;
    for (let i = 0; i <= 12; i++) {
      clock = 10_000 * (i + 1);
      now = reading('public', building(100_000 + 50_000 * i));
      await operator.reconcile('demo');
    }
    // 13 reads over 2 minutes: the start, then once a minute.
    expect(statusWrites(kube, mark)).toBe(3);
    expect(events(kube, mark)).toEqual(['Normal Building: Reindexing=True: p2 at slot 100,000 of 812,400 (712,400 behind)']);
    expect(reindexing(kube)).toMatchObject({ status: 'True', reason: 'Building', message: 'p2 at slot 700,000 of 812,400 (112,400 behind)', lastTransitionTime: at(10_000) });

    // A restarted operator before its first read: the status's own figures stand, nothing is written.
    mark = kube.calls.length;
    clock += 5 * REINDEX_PROGRESS_MS;
    await reconcilerOf(kube, () => undefined).reconcile('demo');
    expect(kube.calls.slice(mark).filter((c) => c.verb !== 'get' && c.verb !== 'list')).toEqual([]);

    // The switch: one Event naming both schemas, not a Reindexing transition beside it.
    mark = kube.calls.length;
    now = reading('p2', null);
    await operator.reconcile('demo');
    expect(statusWrites(kube, mark)).toBe(1);
    expect(events(kube, mark)).toEqual(['Normal ProjectionSwitched: the API reads p2, switched from public']);
    expect(reindexing(kube)).toMatchObject({ status: 'False', reason: 'Switched', message: 'switched from public to p2' });
    expect((kube.find('MarketIndexer', undefined, 'demo')!.status as { projection?: unknown }).projection).toEqual({ liveSchema: 'p2', switchedFrom: 'public' });

    // A restarted operator reading the same: no second Event, no write.
    mark = kube.calls.length;
    await reconcilerOf(kube, () => reading('p2', null)).reconcile('demo');
    expect([statusWrites(kube, mark), events(kube, mark)]).toEqual([0, []]);
  });

  it('records a moving live indexer once a minute, a new writer or a lag past the threshold at once, and nothing after a restart (D-443)', async () => {
    clock = 0;
    let slot = 1_000;
    let lag = 2;
    let writer = 'indexer-0:7';
    const now = (): IndexerReading => ({ ...reading('public', null, String(slot)), slotLag: lag, writer });
    const kube = fakeKube([marketIndexer('demo') as never]);
    const operator = reconcilerOf(kube, now);
    await operator.reconcile('demo');
    rollOut(kube);
    await operator.reconcile('demo');
    const indexer = () => (kube.find('MarketIndexer', undefined, 'demo')!.status as { indexer: Record<string, unknown> }).indexer;
    // Read every 10 s for two minutes, the chain moving: the first figures, then once a minute.
    let mark = kube.calls.length;
    for (let i = 1; i <= 12; i++) {
      clock = 10_000 * i;
      slot += 25;
      lag = 2 + (i % 3);
      await operator.reconcile('demo');
    }
    expect(statusWrites(kube, mark)).toBe(2);
    expect(indexer()).toEqual({ lastProcessedSlot: '1300', slotLag: 2, writer: 'indexer-0:7', observedAt: at(120_000) });
    // A writer hand-over is written at once, and so is a lag past the threshold, with its Event.
    mark = kube.calls.length;
    clock += 1_000;
    writer = 'indexer-1:9';
    await operator.reconcile('demo');
    clock += 1_000;
    slot += 1;
    lag = 500;
    await operator.reconcile('demo');
    expect(statusWrites(kube, mark)).toBe(2);
    expect(events(kube, mark)).toEqual(['Warning SlotLagHigh: IndexerLagging=True: slot lag 500 is above 100']);
    // A restarted operator reading what is recorded writes nothing, however old the figures.
    mark = kube.calls.length;
    clock += 10 * 60_000;
    await reconcilerOf(kube, () => undefined).reconcile('demo');
    await reconcilerOf(kube, now).reconcile('demo');
    expect(statusWrites(kube, mark)).toBe(0);
  });

  it('a new build replaces the recorded one whole: a figure it lacks is not left from the last', async () => {
    clock = 0;
    let now: IndexerReading = reading('public', building(812_345));
    const kube = fakeKube([marketIndexer('demo') as never]);
    const operator = reconcilerOf(kube, () => now);
    await operator.reconcile('demo');
    now = reading('public', { schema: 'p3', lastProcessedSlot: '0', chainTipSlot: null });
    clock = 1_000;
    await operator.reconcile('demo');
    expect((kube.find('MarketIndexer', undefined, 'demo')!.status as { projection?: unknown }).projection).toEqual({ liveSchema: 'public', build: { schema: 'p3', lastProcessedSlot: '0', observedAt: at(1_000) } });
    expect(reindexing(kube).message).toBe('p3 at slot 0 (its writer has not seen the tip yet)');
  });

  it('an upgraded operator over a tenant already on p2 records it without a switch Event; a switch while /status did not answer is one', async () => {
    clock = 0;
    let now: IndexerReading = { slotLag: 1, lastProcessedSlot: '9', writer: null, indexerRunning: true };
    const kube = fakeKube([marketIndexer('demo') as never]);
    const operator = reconcilerOf(kube, () => now);
    await operator.reconcile('demo');
    rollOut(kube);
    await operator.reconcile('demo');
    expect(reindexing(kube)).toMatchObject({ status: 'Unknown', reason: 'NotReported' });
    let mark = kube.calls.length;
    now = reading('p2', null);
    await operator.reconcile('demo');
    expect(events(kube, mark)).toEqual(['Normal NotReindexing: Reindexing=False: none: the API reads p2']);

    now = { unavailable: "the indexer's /status did not answer (fetch failed)" };
    await operator.reconcile('demo');
    expect(kube.find('MarketIndexer', undefined, 'demo')!.status).toMatchObject({ projection: { liveSchema: 'p2' } });
    mark = kube.calls.length;
    now = reading('p3', null);
    await operator.reconcile('demo');
    expect(events(kube, mark)).toEqual(expect.arrayContaining(['Normal ProjectionSwitched: the API reads p3, switched from p2']));
    expect(events(kube, mark).filter((e) => e.includes('Reindexing='))).toEqual([]);
  });
});
