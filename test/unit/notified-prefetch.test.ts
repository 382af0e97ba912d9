import type { RawTransaction } from '../../core/events';
import { createNotifiedPrefetch } from '../../indexer/sources/notified-prefetch';

/** A fetch the test answers by hand: each call waits until the test settles it. */
function handFetch() {
  const asked: { signature: string; signal: AbortSignal; answer(tx: RawTransaction | null): void; fail(err: Error): void }[] = [];
  const fetch = (signature: string, signal: AbortSignal) =>
    new Promise<RawTransaction | null>((resolve, reject) => asked.push({ signature, signal, answer: resolve, fail: reject }));
  return { asked, fetch };
}

const body = (signature: string) => ({ slot: 1, transaction: { signatures: [signature] } }) as unknown as RawTransaction;

describe('notified prefetch: bodies fetched on notification, taken by the poll (D-250)', () => {
  it('fetches a notified signature once and hands its body to the poll once', async () => {
    const f = handFetch();
    const p = createNotifiedPrefetch({ fetch: f.fetch, maxInFlight: 8, maxHeld: 100 });
    p.notified('a', 10, null);
    p.notified('a', 10, null);
    expect(f.asked.map((a) => a.signature)).toEqual(['a']);
    const taken = p.take('a');
    f.asked[0]!.answer(body('a'));
    expect(await taken).toEqual(body('a'));
    expect(p.take('a')).toBeUndefined();
  });

  it('leaves failed transactions, slots the poll has listed and unknown signatures to the poll', () => {
    const f = handFetch();
    const p = createNotifiedPrefetch({ fetch: f.fetch, maxInFlight: 8, maxHeld: 100 });
    p.notified('failed', 10, { InstructionError: [0, 'Custom'] });
    p.listed(12);
    p.notified('listed', 12, null);
    p.notified('older', 11, null);
    p.notified('newer', 13, null);
    expect(f.asked.map((a) => a.signature)).toEqual(['newer']);
    expect(p.take('never-notified')).toBeUndefined();
  });

  it('answers null for a prefetch that failed, so the poll fetches it itself', async () => {
    const f = handFetch();
    const p = createNotifiedPrefetch({ fetch: f.fetch, maxInFlight: 8, maxHeld: 100 });
    p.notified('a', 1, null);
    f.asked[0]!.fail(new Error('HTTP 500'));
    expect(await p.take('a')).toBeNull();
  });

  it('runs at most maxInFlight at once and holds at most maxHeld bodies; past that, leaves them to the poll', async () => {
    const f = handFetch();
    const p = createNotifiedPrefetch({ fetch: f.fetch, maxInFlight: 2, maxHeld: 3 });
    p.notified('a', 1, null);
    p.notified('b', 1, null);
    p.notified('c', 1, null);
    expect(f.asked.map((a) => a.signature)).toEqual(['a', 'b']);
    f.asked[0]!.answer(body('a'));
    f.asked[1]!.answer(body('b'));
    await new Promise((r) => setImmediate(r));
    p.notified('c', 2, null);
    p.notified('d', 2, null);
    expect(f.asked.map((a) => a.signature)).toEqual(['a', 'b', 'c']);
    expect(await p.take('a')).toEqual(body('a'));
    p.notified('d', 2, null);
    expect(f.asked.map((a) => a.signature)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('forgets bodies of listed slots the poll did not take once it delivered all it listed', () => {
    const f = handFetch();
    const p = createNotifiedPrefetch({ fetch: f.fetch, maxInFlight: 8, maxHeld: 100 });
    p.notified('old', 5, null);
    p.notified('new', 9, null);
    p.listed(7);
    p.forgetListed();
    expect(p.take('old')).toBeUndefined();
    expect(p.take('new')).toBeDefined();
  });

  it("answers null at once when the taker's signal aborts (a shutdown does not wait for it)", async () => {
    const f = handFetch();
    const p = createNotifiedPrefetch({ fetch: f.fetch, maxInFlight: 8, maxHeld: 100 });
    p.notified('a', 1, null);
    const stop = new AbortController();
    const taken = p.take('a', stop.signal);
    stop.abort();
    expect(await taken).toBeNull();
  });

  it('aborts what is in flight on close and fetches nothing after', () => {
    const f = handFetch();
    const p = createNotifiedPrefetch({ fetch: f.fetch, maxInFlight: 8, maxHeld: 100 });
    p.notified('a', 1, null);
    p.close();
    expect(f.asked[0]!.signal.aborted).toBe(true);
    p.notified('b', 2, null);
    expect(f.asked).toHaveLength(1);
    expect(p.take('a')).toBeUndefined();
  });
});
