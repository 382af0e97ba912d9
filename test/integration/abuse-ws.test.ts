import { WS_LIMITS } from '../../core/limits';
import { verifyEd25519, type SignatureVerifier } from '../../core/ed25519';
import { AUTH_FAILURES_REASON, UNKNOWN_MARKETS_REASON, WS_ERRORS } from '../../server/ws/protocol';
import { testWallet } from '../support/api';
import { apiSuite } from '../support/api-servers';
import { insertMarkets } from '../support/markets';
import { rawGet } from '../support/raw-http';
import { WsClient, wsAuth } from '../support/ws';

/** Issue 23 finding 1: failed `positions:` authentications on /ws (D-77, D-100). */
describe('/ws authentication abuse (real sockets, real Redis)', () => {
  const suite = apiSuite();
  const trader = testWallet();
  const channel = `positions:${trader.address}`;
  const bad = () => ({ type: 'subscribe', channel, auth: wsAuth(trader, `WS_SUBSCRIBE ${channel}`, { forge: true }) });
  const api = (env: Record<string, string>, verifySignature: SignatureVerifier) => suite.startProcess(env, suite.db, { verifySignature });

  it(`closes a connection with 1008 after ${WS_LIMITS.maxAuthFailures} failed authentications, budget refusals included`, async () => {
    let calls = 0;
    const s = await api({ RATE_LIMIT_MAX_REQUESTS: '1000' }, (m, sig, k) => (calls++, verifyEd25519(m, sig, k)));
    const client = await WsClient.open(`ws://127.0.0.1:${s.port}/ws`, { localAddress: '127.0.0.7' });
    try {
      await client.next((m) => m.type === 'connected');
      // Far more than the limit, sent at once, as the attack did (below the 64-message flood guard).
      for (let i = 0; i < 60; i++) client.send(bad());
      const closed = await client.closed;
      expect(closed).toEqual({ code: 1008, reason: AUTH_FAILURES_REASON });
      const errors = client.received.filter((m) => m.type === 'error');
      expect(errors).toHaveLength(WS_LIMITS.maxAuthFailures);
      expect(errors.every((m) => m.message === WS_ERRORS.badSignature)).toBe(true);
      // Nothing queued behind the closing failure was verified.
      expect(calls).toBe(WS_LIMITS.maxAuthFailures);
      client.assertValid();
      const refusals = (await s.common.metrics.wsRefusals.get()).values.find((v) => v.labels.reason === 'auth_failures');
      expect(refusals?.value).toBe(1);
      // The address may connect again and subscribe correctly (its budget is not spent).
      const again = await WsClient.open(`ws://127.0.0.1:${s.port}/ws`, { localAddress: '127.0.0.7' });
      await again.next((m) => m.type === 'connected');
      expect(await again.request({ type: 'subscribe', channel, auth: wsAuth(trader, `WS_SUBSCRIBE ${channel}`) })).toEqual({ type: 'subscribed', channel });
      await again.close();
    } finally {
      client.ws.terminate();
      await s.close();
    }
  });

  it('never verifies back to back: another client is answered while a burst of bad subscribes is still being verified', async () => {
    // Each verification holds the thread as tweetnacl's did (about 15 ms): what matters is that
    // the event loop turns between two of them.
    let calls = 0;
    let first!: () => void;
    const started = new Promise<void>((r) => (first = r));
    const slow: SignatureVerifier = (m, sig, k) => {
      if (++calls === 1) first();
      const until = performance.now() + 15;
      while (performance.now() < until);
      return verifyEd25519(m, sig, k);
    };
    const s = await api({ RATE_LIMIT_MAX_REQUESTS: '1000' }, slow);
    const attackers = await Promise.all([2, 3, 4, 5].map((n) => WsClient.open(`ws://127.0.0.1:${s.port}/ws`, { localAddress: `127.0.0.${n}` })));
    try {
      await Promise.all(attackers.map((a) => a.next((m) => m.type === 'connected')));
      const total = attackers.length * (WS_LIMITS.maxAuthFailures - 1);
      for (const a of attackers) for (let i = 0; i < WS_LIMITS.maxAuthFailures - 1; i++) a.send(bad());
      await started;
      const health = await rawGet(s.port, '/health', { localAddress: '127.0.0.9' });
      const seen = calls;
      expect(health.status).toBe(200);
      expect(seen).toBeLessThan(total);
      // The burst is still served in full, each failure answered.
      await Promise.all(attackers.map((a) => a.next((m) => m.type === 'error' && a.received.filter((x) => x.type === 'error').length === WS_LIMITS.maxAuthFailures - 1)));
      expect(calls).toBe(total);
    } finally {
      attackers.forEach((a) => a.ws.terminate());
      await s.close();
    }
  });

  it(`closes a connection with 1008 after ${WS_LIMITS.maxUnknownMarkets} subscriptions to unknown markets`, async () => {
    // A market above the ids below: those are then below the newest, and none of them exists.
    await insertMarkets(suite.db, [10_000_000]);
    const s = await api({ RATE_LIMIT_MAX_REQUESTS: '1000' }, verifyEd25519);
    const client = await WsClient.open(`ws://127.0.0.1:${s.port}/ws`, { localAddress: '127.0.0.8' });
    await client.next((m) => m.type === 'connected');
    // Distinct ids, so no answer comes from memory: each would be a lookup.
    for (let i = 0; i < 60; i++) client.send({ type: 'subscribe', channel: `orderbook:${900000 + i}` });
    expect(await client.closed).toEqual({ code: 1008, reason: UNKNOWN_MARKETS_REASON });
    const errors = client.received.filter((m) => m.type === 'error');
    expect(errors.map((m) => m.message)).toEqual(Array.from({ length: WS_LIMITS.maxUnknownMarkets }, (_, i) => WS_ERRORS.unknownMarket(String(900000 + i))));
    const refusals = await s.common.metrics.wsRefusals.get();
    expect(refusals.values.find((v) => v.labels.reason === 'unknown_markets')?.value).toBe(1);
  });
});
