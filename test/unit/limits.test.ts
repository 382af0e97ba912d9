import { DEFAULT_RATE_LIMITS, RATE_LIMIT_TIERS, tierSpecs, WS_LIMITS } from '../../core/limits';
import { loadConfig } from '../../core/config';
import { RateLimiterMemory, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { coalescedConsume } from '../../core/redis/rate-limit';
import { windowPeak } from '../../server/limits/rate-limit';
import { DEFAULT_WS_OPTIONS } from '../../server/ws/server';

describe('documented limits (core/limits.ts)', () => {
  it('are the ones spec 8 documents, and the ones the processes enforce by default', () => {
    expect(WS_LIMITS).toMatchObject({ maxSubscriptions: 20, maxMessageBytes: 4096, maxBufferedBytes: 1024 * 1024, maxSkips: 50 });
    expect(DEFAULT_WS_OPTIONS).toMatchObject({ maxBufferedBytes: WS_LIMITS.maxBufferedBytes, maxSkips: WS_LIMITS.maxSkips });
    expect(DEFAULT_RATE_LIMITS).toEqual(loadConfig({}).rateLimit);
    const specs = tierSpecs(DEFAULT_RATE_LIMITS);
    expect(Object.keys(specs)).toEqual([...RATE_LIMIT_TIERS]);
    expect(Object.fromEntries(RATE_LIMIT_TIERS.map((t) => [t, specs[t].points]))).toEqual({
      public_read: 300,
      public: 100,
      authenticated: 200,
      write: 50,
      sensitive: 20,
      compliance: 5,
    });
  });
});

describe('rate-limit window peak', () => {
  it('keeps the most requests of a key seen in the current or previous window', () => {
    const p = windowPeak(1000);
    p.see(3, 0);
    p.see(7, 100);
    p.see(2, 900);
    expect(p.read(950)).toBe(7);
    // The next window starts: the previous one's peak still shows until a higher one comes.
    p.see(1, 1000);
    expect(p.read(1100)).toBe(7);
    p.see(9, 1200);
    expect(p.read(1300)).toBe(9);
    // A window after that forgets the first.
    p.see(4, 2100);
    expect(p.read(2200)).toBe(9);
    expect(p.read(3200)).toBe(4);
    // A quiet stretch longer than two windows reads 0.
    expect(p.read(6000)).toBe(0);
  });
});

describe('coalesced consumes (D-171)', () => {
  const settle = (p: Promise<RateLimiterRes>) =>
    p.then(
      (r) => ({ ok: true, consumed: r.consumedPoints, remaining: r.remainingPoints, first: r.isFirstInDuration }),
      (r: RateLimiterRes) => ({ ok: false, consumed: r.consumedPoints, remaining: r.remainingPoints, first: r.isFirstInDuration }),
    );

  it('answers each caller as one consume each would, with one consume of the count per key', async () => {
    const limiter = new RateLimiterMemory({ points: 3, duration: 60 });
    const spy = jest.spyOn(limiter, 'consume');
    const consume = coalescedConsume(limiter);
    const a = await Promise.all([1, 2, 3, 4, 5].map(() => settle(consume('a'))).concat([settle(consume('b'))]));
    expect(a).toEqual([
      { ok: true, consumed: 1, remaining: 2, first: true },
      { ok: true, consumed: 2, remaining: 1, first: false },
      { ok: true, consumed: 3, remaining: 0, first: false },
      { ok: false, consumed: 4, remaining: 0, first: false },
      { ok: false, consumed: 5, remaining: 0, first: false },
      { ok: true, consumed: 1, remaining: 2, first: true },
    ]);
    expect(spy.mock.calls).toEqual([
      ['a', 5],
      ['b', 1],
    ]);
    // The store counted every request: the next one alone is refused too.
    expect(await settle(consume('a'))).toEqual({ ok: false, consumed: 6, remaining: 0, first: false });
    // The window's end is the store's, the same for the whole batch.
    const ends = await Promise.all([consume('c'), consume('c')]);
    expect(ends[0]!.msBeforeNext).toBe(ends[1]!.msBeforeNext);
    expect(ends[0]!.msBeforeNext).toBeGreaterThan(59_000);
  });

  it('gathers the consumes made while a batch is at the store into the next one', async () => {
    const answers: ((r: RateLimiterRes) => void)[] = [];
    const calls: [string, number][] = [];
    const store = {
      points: 10,
      consume: (key: string, n: number) => {
        calls.push([key, n]);
        return new Promise<RateLimiterRes>((resolve) => answers.push(resolve));
      },
    } as unknown as RateLimiterAbstract;
    // No bound on the wait here: what waits for what, not when.
    const consume = coalescedConsume(store, 60_000);
    const first = consume('a');
    await new Promise((r) => setImmediate(r));
    expect(calls).toEqual([['a', 1]]);
    const later = [consume('a'), consume('b'), consume('a')];
    await new Promise((r) => setImmediate(r));
    // Nothing more is sent while the first batch is unanswered.
    expect(calls).toEqual([['a', 1]]);
    answers[0]!(new RateLimiterRes(9, 1000, 1, true));
    expect((await first).consumedPoints).toBe(1);
    await new Promise((r) => setImmediate(r));
    expect(calls).toEqual([
      ['a', 1],
      ['a', 2],
      ['b', 1],
    ]);
    answers[1]!(new RateLimiterRes(7, 900, 3, false));
    answers[2]!(new RateLimiterRes(9, 900, 1, true));
    expect((await Promise.all(later)).map((r) => [r.consumedPoints, r.remainingPoints])).toEqual([
      [2, 8],
      [1, 9],
      [3, 7],
    ]);
  });

  it('sends a batch without the previous answer once it has waited waitMs (a hung store)', async () => {
    const calls: [string, number][] = [];
    let second!: () => void;
    const secondSent = new Promise<void>((r) => (second = r));
    const store = {
      points: 10,
      consume: (key: string, n: number) => {
        calls.push([key, n]);
        if (calls.length === 2) second();
        // Never answered: Redis hung.
        return new Promise<RateLimiterRes>(() => {});
      },
    } as unknown as RateLimiterAbstract;
    const consume = coalescedConsume(store, 5);
    void consume('a');
    await new Promise((r) => setImmediate(r));
    void consume('a');
    void consume('a');
    await secondSent;
    expect(calls).toEqual([
      ['a', 1],
      ['a', 2],
    ]);
  });

  it('hands every caller of a batch the store failure', async () => {
    const failure = new Error('store down');
    const consume = coalescedConsume({ points: 5, consume: () => Promise.reject(failure) } as unknown as RateLimiterAbstract);
    const got = await Promise.all([consume('a'), consume('a')].map((p) => p.then(() => 'resolved', (e: unknown) => e)));
    expect(got).toEqual([failure, failure]);
    // The next batch still goes.
    await expect(consume('a')).rejects.toBe(failure);
  });
});
