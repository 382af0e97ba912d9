import { CHAIN_ATTRIBUTES, CHAIN_SPANS } from '../../core/telemetry/trace-chain';
import { PROGRAM_ID } from '../support/indexer';
import { attr, exportedSpans, startCollector, type OtlpSpan } from '../support/otlp';
import { createTestDatabase, type TestDatabase } from '../support/pg';
import { spawnApi, spawnIndexer } from '../support/processes';
import { TEST_REDIS_URL, testTenant } from '../support/redis';
import { WsClient } from '../support/ws';

/**
 * One trace per change (D-86): a real indexer process commits a batch and publishes its
 * updates; a real API process fans one of them out to a /ws client. Both export to a local
 * OTLP/HTTP receiver; the spans must form one chain, commit → publish → fan-out.
 */
describe('trace of a change from commit to /ws delivery (real processes, OTLP/HTTP)', () => {
  let tdb: TestDatabase;
  beforeAll(async () => {
    tdb = await createTestDatabase();
  });
  afterAll(async () => {
    await tdb.drop();
  });

  it('connects the indexer commit, its publish and the fan-out that delivered the update', async () => {
    const collector = await startCollector();
    const env = { DATABASE_URL: tdb.url, REDIS_URL: TEST_REDIS_URL, TENANT_ID: testTenant(), PROGRAM_ID, OTEL_EXPORTER_OTLP_ENDPOINT: collector.url };
    const api = spawnApi(env);
    let client: WsClient | undefined;
    try {
      client = await WsClient.open(`ws://127.0.0.1:${await api.port}/ws`);
      await client.next((m) => m.type === 'connected');
      // The simulator's first market: marketId = floor(unix time / 60) from its fixed genesis.
      const channel = `market:${Math.floor(1_767_225_600 / 60)}`;
      expect(await client.request({ type: 'subscribe', channel })).toMatchObject({ type: 'subscribed' });
      const indexer = spawnIndexer(['--source', 'simulator', '--seed', '4242', '--until-slot', '200', '--batch-size', '50', '--feeds', '1'], env);
      // A clean exit flushes the indexer's spans.
      expect(await indexer.exited).toEqual({ code: 0, signal: null });
      const update = await client.next((m) => m.type === 'update' && m.channel === channel);
      api.child.kill('SIGTERM');
      expect((await api.exited).code).toBe(0);

      const { services, spans } = exportedSpans(collector);
      expect(services.sort()).toEqual(['market-indexer-api', 'market-indexer-indexer']);
      const byId = new Map(spans.map((s) => [s.spanId, s]));
      const fanout = spans.find((s) => s.name === CHAIN_SPANS.fanout && attr(s, CHAIN_ATTRIBUTES.channel) === channel && attr(s, CHAIN_ATTRIBUTES.seq) === update.seq);
      expect(fanout).toBeDefined();
      expect(fanout!.kind).toBe(5); // CONSUMER
      expect(attr(fanout!, CHAIN_ATTRIBUTES.sent)).toBe(1);
      expect(attr(fanout!, CHAIN_ATTRIBUTES.slot)).toBe(update.slot);
      const publish = byId.get(fanout!.parentSpanId ?? '') as OtlpSpan | undefined;
      expect(publish).toMatchObject({ name: CHAIN_SPANS.publish, kind: 4, traceId: fanout!.traceId }); // PRODUCER
      const commit = byId.get(publish!.parentSpanId ?? '') as OtlpSpan | undefined;
      expect(commit).toMatchObject({ name: CHAIN_SPANS.commit, traceId: fanout!.traceId });
      expect(commit!.parentSpanId ?? '').toBe('');
      // The batch whose commit started the trace is the one the update reflects.
      expect(attr(commit!, CHAIN_ATTRIBUTES.slot)).toBe(update.slot);
      expect(attr(publish!, CHAIN_ATTRIBUTES.updates)).toBeGreaterThan(0);
      // The commit's own database work is inside it.
      expect(spans.some((s) => s.parentSpanId === commit!.spanId && s.name.startsWith('pg.'))).toBe(true);
      // Each batch is a trace of its own: a commit span per batch, none a child of another.
      const commits = spans.filter((s) => s.name === CHAIN_SPANS.commit);
      expect(commits.length).toBeGreaterThan(1);
      expect(new Set(commits.map((s) => s.traceId)).size).toBe(commits.length);
      client.assertValid();
    } finally {
      client?.ws.terminate();
      api.child.kill('SIGKILL');
      collector.close();
    }
  }, 90_000);
});
