import { creditsOf } from '../../core/rpc-credits';
import { createRpcLimiter } from '../../indexer/sources/rpc-limiter';
import { createRpcProvider } from '../../simulator/rpc-provider';

const call = (method: string) => ({ jsonrpc: '2.0', id: 1, method, params: [] });

describe('the simulated RPC provider (D-240)', () => {
  it('is off unless set: every request served at once', () => {
    const p = createRpcProvider();
    for (let i = 0; i < 1_000; i++) expect(p.admit(call('getTransaction'))).toEqual({ kind: 'serve', delayMs: 0 });
    expect(p.admit([call('getSlot'), call('getSlot')])).toEqual({ kind: 'serve', delayMs: 0 });
  });

  it('charges credits per method and answers 429 past the bucket, without Retry-After as providers do unless told (D-474)', () => {
    // 10 credits a second, a second's worth in the bucket: five getTransactions, then 429.
    const p = createRpcProvider({ requestsPerSecond: 10 });
    const verdicts = Array.from({ length: 6 }, () => p.admit(call('getTransaction')));
    expect(verdicts.slice(0, 5).every((v) => v.kind === 'serve')).toBe(true);
    expect(verdicts[5]).toMatchObject({ kind: 'refuse', status: 429 });
    expect((verdicts[5] as { headers: Record<string, string> }).headers['retry-after']).toBeUndefined();
    const told = createRpcProvider({ requestsPerSecond: 10, retryAfter: true });
    expect(Array.from({ length: 6 }, () => told.admit(call('getTransaction')))[5]).toMatchObject({ kind: 'refuse', status: 429, headers: { 'retry-after': '1' } });
    expect(p.stats()).toMatchObject({ requests: 6, calls: 5, credits: 10, rateLimited: 1 });
    expect(creditsOf('getSlot')).toBeLessThan(creditsOf('getTransaction'));
    expect(creditsOf('someMethodNotInTheTable')).toBe(1);
  });

  it('charges a batch the sum of its calls, and refuses batches when switched off', () => {
    const p = createRpcProvider({ requestsPerSecond: 100 });
    expect(p.admit(Array.from({ length: 10 }, () => call('getTransaction'))).kind).toBe('serve');
    expect(p.stats()).toMatchObject({ requests: 1, calls: 10, credits: 20 });
    p.configure({ batches: false });
    const refused = p.admit([call('getSlot')]);
    expect(refused).toMatchObject({ kind: 'refuse', status: 400 });
    expect(JSON.parse((refused as { body: string }).body)).toMatchObject({ error: { code: -32600 } });
    expect(p.admit(call('getSlot')).kind).toBe('serve');
  });

  it('answers a share of requests with 429s, 5xxs and silence when the fault switch is on', () => {
    const p = createRpcProvider({ faultRate: 0.5 });
    const kinds = new Map<string, number>();
    for (let i = 0; i < 600; i++) {
      const v = p.admit(call('getSlot'));
      const k = v.kind === 'refuse' ? String(v.status) : v.kind;
      kinds.set(k, (kinds.get(k) ?? 0) + 1);
    }
    expect([...kinds.keys()].sort()).toEqual(['429', '502', '503', 'hang', 'serve']);
    const { faults } = p.stats();
    expect(faults.rateLimited + faults.serverError + faults.timeout).toBe(600 - kinds.get('serve')!);
  });

  it('counts bodies served twice for one signature', () => {
    const p = createRpcProvider({ latencyMs: 1 });
    p.servedTransaction('a');
    p.servedTransaction('b');
    p.servedTransaction('a');
    expect(p.stats().refetched).toBe(1);
  });
});

describe('the rpc source limiter (D-241)', () => {
  it('never has more requests in flight than its concurrency', async () => {
    const limiter = createRpcLimiter({ concurrency: 3 });
    let inFlight = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        const release = await limiter.acquire(1);
        most = Math.max(most, ++inFlight);
        await new Promise((r) => setImmediate(r));
        inFlight--;
        release();
      }),
    );
    expect(most).toBe(3);
  });

  it('slows its pace on a 429 and reports it', () => {
    const limiter = createRpcLimiter({ requestsPerSecond: 100 });
    expect(limiter.stats()).toEqual({ rateLimited: 0, rate: 100, pausedMs: 0, lastPauseMs: 0 });
    limiter.rateLimited(1_000);
    expect(limiter.stats()).toMatchObject({ rateLimited: 1, rate: 80 });
    // The 429s of requests already in flight are the same signal: one cut a second.
    limiter.rateLimited(1_000);
    expect(limiter.stats()).toMatchObject({ rateLimited: 2, rate: 80 });
  });

  it('without Retry-After pauses a jittered second, doubled for each 429 right after a pause, and back to a second after a quiet while (D-474)', () => {
    let now = 0;
    let draw = 0.5;
    const limiter = createRpcLimiter({ now: () => now, random: () => draw });
    limiter.rateLimited(undefined);
    expect(limiter.stats().lastPauseMs).toBe(750);
    // Another request in flight meets a 429 within the pause: the same pause, not a longer one.
    now = 100;
    limiter.rateLimited(undefined);
    expect(limiter.stats().lastPauseMs).toBe(650);
    const pauses = [];
    for (let i = 0; i < 6; i++) {
      now += limiter.stats().lastPauseMs + 10;
      draw = i % 2;
      limiter.rateLimited(undefined);
      pauses.push(limiter.stats().lastPauseMs);
    }
    // Half fixed, half drawn: 1 s, 2 s, 4 s … up to 16 s.
    expect(pauses).toEqual([1_000, 4_000, 4_000, 16_000, 8_000, 16_000]);
    now += limiter.stats().lastPauseMs + 10_000;
    draw = 0;
    limiter.rateLimited(undefined);
    expect(limiter.stats().lastPauseMs).toBe(500);
    // A Retry-After is taken as it is.
    now += 10_000;
    limiter.rateLimited(3_000);
    expect(limiter.stats().lastPauseMs).toBe(3_000);
  });

  it('holds every caller until a Retry-After has passed, and lets an aborted one go', async () => {
    const limiter = createRpcLimiter({});
    limiter.rateLimited(60_000);
    const shutdown = new AbortController();
    let got = false;
    const waiting = limiter.acquire(1, shutdown.signal).then(() => (got = true));
    await new Promise((r) => setImmediate(r));
    expect(got).toBe(false);
    shutdown.abort();
    await waiting;
    expect(limiter.stats().pausedMs).toBeGreaterThan(0);
  });
});
