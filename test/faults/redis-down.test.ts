import { randomBytes } from 'node:crypto';
import { createDatabase } from '../../core/db';
import { INDEXER_STATUS_PATH } from '../../core/constants';
import { HIGH_LIMITS, testWallet, walletHeaders } from '../support/api';
import { createTestDatabase } from '../support/pg';
import { spawnApi, spawnIndexer, tenantEnv } from '../support/processes';
import { startRedisServer } from '../support/redis-server';
import { waitFor } from '../support/tables';
import { WsClient } from '../support/ws';
import { bookChannels, lostOn, updatesOf } from './live';
import { get, OUTAGE_MS, report, startLoad, until } from './support';

it('Redis stopped under read load: public reads stay 200, signed requests 503 (no replay accepted), /ws sockets stay open, the indexer keeps committing, and every channel continues in seq order with nothing lost', async () => {
  const redis = await startRedisServer({ persist: true });
  const tdb = await createTestDatabase();
  const env = tenantEnv(tdb.url, { REDIS_URL: redis.url, ...HIGH_LIMITS });
  const indexer = spawnIndexer(['--source', 'simulator', '--seed', '31', '--realtime', '--feeds', '1', '--batch-size', '20'], env);
  const api = spawnApi(env);
  const database = createDatabase({ url: tdb.url, poolMax: 2 });
  const clients: WsClient[] = [];
  try {
    const [port, indexerPort] = await Promise.all([api.port, indexer.port]);
    const slot = async () => Number(((await (await fetch(`http://127.0.0.1:${indexerPort}${INDEXER_STATUS_PATH}`)).json()) as { lastProcessedSlot: number | string }).lastProcessedSlot);
    const channels = bookChannels(3);
    for (let i = 0; i < 2; i++) {
      const c = await WsClient.open(`ws://127.0.0.1:${port}/ws`);
      clients.push(c);
      await c.next((m) => m.type === 'connected');
      for (const channel of channels) await c.request({ type: 'subscribe', channel });
    }
    await waitFor('a first update', async () => updatesOf(clients, channels[0]!).length > 0, 60_000);

    const wallet = testWallet();
    const signed = () => get(port, '/api/v1/positions', walletHeaders(wallet, 'GET /positions', { nonce: randomBytes(12).toString('hex') }));
    const used = walletHeaders(wallet, 'GET /positions', { nonce: 'used-before-the-outage' });
    expect((await get(port, '/api/v1/positions', used)).status).toBe(200);

    const reads = startLoad(4, () => get(port, '/api/v1/markets/current'));
    const auth = startLoad(1, signed);
    await until(1_000);
    const slotBefore = await slot();
    const stoppedAt = Date.now();
    await redis.stop();
    // While it is down: the replayed nonce is refused (503: nothing can tell it is fresh).
    await waitFor('signed requests refused', async () => auth.after(Date.now() - 200).some((o) => o.status === 503));
    const replayDuring = await get(port, '/api/v1/positions', used);
    await until(OUTAGE_MS);
    const slotDuring = await slot();
    const startedAt = Date.now();
    await redis.start();
    const recovered = await waitFor('a signed request answered 200', async () => auth.after(startedAt).find((o) => o.status === 200), 60_000);
    const replayAfter = await get(port, '/api/v1/positions', used);
    // Updates flow again on every channel the clients hold.
    const seqAtReturn = Math.max(0, ...updatesOf(clients, channels[0]!).map((m) => m.seq as number));
    await waitFor('updates after Redis returned', async () => updatesOf(clients, channels[0]!).some((m) => m.seq > seqAtReturn), 60_000);
    await until(1_000);
    const [readOutcomes, authOutcomes] = [await reads.stop(), await auth.stop()];
    indexer.child.kill('SIGTERM');
    expect((await indexer.exited).code).toBe(0);

    let lost = 0;
    for (const channel of channels) lost += await lostOn(`ws://127.0.0.1:${port}/ws`, database.db, channel, () => updatesOf(clients.slice(0, 1), channel));
    const readErrors = readOutcomes.filter((o) => o.status !== 200);
    const outage = authOutcomes.filter((o) => o.at > stoppedAt && o.at < startedAt);
    report({
      scenario: 'Redis down: reads 200, signed 503, /ws kept, seq continues',
      requests: readOutcomes.length + authOutcomes.length,
      errors: readErrors.length,
      dataLost: lost,
      recoveryMs: recovered.at - startedAt,
      note: `${OUTAGE_MS / 1000}s down; signed: ${outage.filter((o) => o.status === 503).length} 503 while down; indexer slot ${slotBefore}→${slotDuring}`,
    });
    expect(readErrors.map((o) => o.status)).toEqual([]);
    // Signed requests: 200 or 503, nothing else, and 503 while Redis was away.
    expect(authOutcomes.filter((o) => o.status !== 200 && o.status !== 503).map((o) => `${o.status} ${o.body}`)).toEqual([]);
    expect(JSON.parse(outage.find((o) => o.status === 503)!.body)).toEqual({ error: expect.any(String), code: 'SERVICE_UNAVAILABLE' });
    expect(replayDuring.status).toBe(503);
    expect(replayAfter.status).toBe(401);
    expect(slotDuring).toBeGreaterThan(slotBefore);
    for (const c of clients) expect(c.ws.readyState).toBe(c.ws.OPEN);
    expect(lost).toBe(0);
  } finally {
    clients.forEach((c) => c.ws.terminate());
    indexer.child.kill('SIGKILL');
    api.child.kill('SIGKILL');
    await Promise.all([indexer.exited, api.exited]);
    await database.close();
    await tdb.drop();
    await redis.close();
  }
});
