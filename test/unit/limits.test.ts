import { DEFAULT_RATE_LIMITS, RATE_LIMIT_TIERS, tierSpecs, WS_LIMITS } from '../../core/limits';
import { loadConfig } from '../../core/config';
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
