import { createDatabase } from '../../core/db';
import { HIGH_LIMITS, type Json } from '../support/api';
import { createTestDatabase } from '../support/pg';
import { spawnApi, spawnIndexer, tenantEnv } from '../support/processes';
import { waitFor } from '../support/tables';
import { startRoundRobinProxy } from '../support/tcp-proxy';
import { resumingWsClient } from '../support/resuming-ws';
import { bookChannels, lostOn } from './live';
import { get, report, startLoad, until } from './support';

/** The reconnecting /ws client, the SDK's (test/support/resuming-ws.ts), read by the updates it yielded. */
function resumingClient(url: string, channels: string[]) {
  const received = new Map<string, Json[]>(channels.map((c) => [c, []]));
  const client = resumingWsClient(url, channels, { onUpdate: (u) => received.get(u.channel)!.push(u as unknown as Json) });
  return { ...client, updates: (channel: string): Json[] => received.get(channel)! };
}

it('SIGTERM to one of two API replicas behind a round-robin balancer: no failed request at the client, /ws clients get 1001, resume on the other replica and miss nothing', async () => {
  const tdb = await createTestDatabase();
  const env = tenantEnv(tdb.url, HIGH_LIMITS);
  const indexer = spawnIndexer(['--source', 'simulator', '--seed', '33', '--realtime', '--feeds', '1', '--batch-size', '20'], env);
  const replicas = [spawnApi(env), spawnApi(env)];
  const database = createDatabase({ url: tdb.url, poolMax: 2 });
  const ports = await Promise.all(replicas.map((r) => r.port));
  const lb = await startRoundRobinProxy(ports);
  const channels = bookChannels(2);
  const clients = Array.from({ length: 4 }, () => resumingClient(`ws://127.0.0.1:${lb.port}/ws`, channels));
  try {
    await indexer.port;
    for (const c of clients) await c.connect();
    await waitFor('updates flowing', async () => clients.every((c) => c.updates(channels[0]!).length > 0), 60_000);
    const reads = startLoad(4, () => get(lb.port, '/api/v1/markets?limit=5'));
    await until(1_000);
    const termAt = Date.now();
    // As Kubernetes does: the endpoint leaves the balancer while the pod pauses in preStop; the
    // connections it holds stay until SIGTERM drains them (HTTP) and closes them (/ws, 1001).
    lb.remove(ports[1]!);
    await until(500);
    replicas[1]!.child.kill('SIGTERM');
    expect(await replicas[1]!.exited).toEqual({ code: 0, signal: null });
    const moved = clients.filter((c) => c.closes.length > 0);
    await waitFor('moved clients resumed', async () => moved.every((c) => c.resumes() > 0), 30_000);
    const recoveredAt = Date.now();
    // Updates keep arriving on the survivor after the move.
    const seqNow = Math.max(...clients.flatMap((c) => c.updates(channels[0]!).map((m) => m.seq as number)));
    await waitFor('updates after the move', async () => clients.every((c) => c.updates(channels[0]!).some((m) => m.seq > seqNow)), 60_000);
    const outcomes = await reads.stop();
    indexer.child.kill('SIGTERM');
    expect((await indexer.exited).code).toBe(0);

    let lost = 0;
    for (const c of clients) for (const channel of channels) lost += await lostOn(`ws://127.0.0.1:${ports[0]}/ws`, database.db, channel, () => c.updates(channel));
    // Replayed and live updates may overlap by design (the client asked from its last seq); none may be missing.
    const failed = outcomes.filter((o) => o.status !== 200);
    report({
      scenario: 'SIGTERM 1 of 2 API replicas: 0 failed requests, /ws 1001 + resume',
      requests: outcomes.length,
      errors: failed.length,
      dataLost: lost,
      recoveryMs: recoveredAt - termAt,
      note: `${moved.length} of ${clients.length} /ws clients moved (close codes ${[...new Set(moved.map((c) => c.closes[0]))].join(',')}), failed reconnects ${clients.reduce((n, c) => n + c.failedConnects(), 0)}`,
    });
    expect(failed.map((o) => `${o.status} ${o.body}`)).toEqual([]);
    expect(moved.length).toBeGreaterThan(0);
    for (const c of moved) expect(c.closes[0]).toBe(1001);
    // Every subscribe, first or resumed, was answered `subscribed` (and `resumed: true`).
    expect(clients.flatMap((c) => c.errors)).toEqual([]);
    expect(lost).toBe(0);
  } finally {
    clients.forEach((c) => c.stop());
    for (const p of [indexer, ...replicas]) p.child.kill('SIGKILL');
    await Promise.all([indexer, ...replicas].map((p) => p.exited));
    await lb.close();
    await database.close();
    await tdb.drop();
  }
});
