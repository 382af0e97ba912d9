import { createKnownMarkets } from '../../server/ws/known-markets';

/** What a `/ws` subscription costs the store to tell a known market from an unknown one (D-352). */
describe('known markets', () => {
  function setup(indexed: string[], top: bigint | null = 100n) {
    const asked: string[] = [];
    let newestReads = 0;
    let now = 0;
    const known = createKnownMarkets({
      exists: async (id) => (asked.push(id), indexed.includes(id)),
      newest: async () => (newestReads++, top ?? undefined),
      missingTtlMs: 5_000,
      newestTtlMs: 1_000,
      maxEntries: 3,
      now: () => now,
    });
    return { known, asked, newestReads: () => newestReads, advance: (ms: number) => (now += ms) };
  }

  it('asks the store once for a market it has, and never again', async () => {
    const { known, asked } = setup(['7']);
    for (let i = 0; i < 5; i++) expect(await known('7')).toBe(true);
    expect(asked).toEqual(['7']);
  });

  it('answers an unknown id from memory until its time is up, then asks again', async () => {
    const { known, asked, advance } = setup([]);
    for (let i = 0; i < 5; i++) expect(await known('9')).toBe(false);
    expect(asked).toEqual(['9']);
    advance(5_001);
    expect(await known('9')).toBe(false);
    expect(asked).toEqual(['9', '9']);
  });

  it('lets an id above the newest market through without a lookup (a market not created yet), reading the newest once a second', async () => {
    const { known, asked, newestReads, advance } = setup([]);
    for (let i = 0; i < 50; i++) expect(await known(String(101 + i))).toBe(true);
    expect(asked).toEqual([]);
    expect(newestReads()).toBe(1);
    advance(1_001);
    expect(await known('18446744073709551615')).toBe(true);
    expect(newestReads()).toBe(2);
  });

  it('lets everything through while no market is indexed', async () => {
    const { known, asked } = setup([], null);
    expect(await known('0')).toBe(true);
    expect(asked).toEqual([]);
  });

  it('shares one lookup among concurrent questions about one id', async () => {
    const { known, asked, newestReads } = setup(['3']);
    expect(await Promise.all([known('3'), known('3'), known('3')])).toEqual([true, true, true]);
    expect(asked).toEqual(['3']);
    expect(newestReads()).toBe(1);
  });

  it('keeps at most maxEntries ids, dropping the oldest', async () => {
    const { known, asked } = setup(['1', '2', '3', '4']);
    for (const id of ['1', '2', '3', '4']) await known(id);
    await known('4');
    await known('1');
    expect(asked).toEqual(['1', '2', '3', '4', '1']);
  });

  it('remembers nothing from a failed lookup', async () => {
    let fail = true;
    const asked: string[] = [];
    const known = createKnownMarkets({ exists: async (id) => (asked.push(id), fail ? Promise.reject(new Error('down')) : true), newest: async () => 10n });
    await expect(known('5')).rejects.toThrow('down');
    fail = false;
    expect(await known('5')).toBe(true);
    expect(asked).toEqual(['5', '5']);
  });
});
