import { createMemoryBus } from '../../core/redis/bus';
import type { Response } from 'express';
import { createHotCache } from '../../server/read/hot-cache';

/** Enough of a response for `sendCached`: what it was sent. */
function fakeResponse(ifNoneMatch?: string) {
  const sent: { status?: number; headers: Record<string, unknown>; body?: string } = { headers: {} };
  const res = {
    req: { headers: ifNoneMatch ? { 'if-none-match': ifNoneMatch } : {} },
    statusCode: 200,
    setHeader: (k: string, v: unknown) => void (sent.headers[k.toLowerCase()] = v),
    status(code: number) {
      this.statusCode = code;
      return this;
    },
    end(body?: Buffer) {
      sent.status = this.statusCode;
      sent.body = body?.toString();
    },
  };
  return { res: res as unknown as Response, sent };
}

describe('hot-read cache', () => {
  it('serializes once, shares one load between concurrent misses, and expires by TTL', async () => {
    let t = 0;
    let loads = 0;
    const cache = createHotCache({ ttlMs: 1_000, now: () => t });
    const load = async () => ({ status: 200, json: { n: ++loads } });
    const [a, b] = await Promise.all([cache.get('k', load), cache.get('k', load)]);
    expect(loads).toBe(1);
    expect(a).toBe(b);
    expect(a.body.toString()).toBe('{"n":1}');
    t = 999;
    expect((await cache.get('k', load)).body.toString()).toBe('{"n":1}');
    t = 1_000;
    expect((await cache.get('k', load)).body.toString()).toBe('{"n":2}');
  });

  it('sends a hit at once, without a promise, and a miss once loaded, with its tag and 304', async () => {
    let loads = 0;
    const cache = createHotCache({ ttlMs: 60_000 });
    const load = async () => ({ status: 200, json: { n: ++loads } });
    const miss = fakeResponse();
    const pending = cache.send(miss.res, 'k', load);
    expect(pending).toBeInstanceOf(Promise);
    expect(miss.sent.status).toBeUndefined();
    await pending;
    expect(miss.sent).toMatchObject({ status: 200, body: '{"n":1}', headers: { 'content-type': 'application/json; charset=utf-8', 'content-length': 7 } });
    const etag = miss.sent.headers.etag as string;
    const hit = fakeResponse();
    expect(cache.send(hit.res, 'k', load)).toBeUndefined();
    expect(hit.sent).toEqual(miss.sent);
    const conditional = fakeResponse(etag);
    expect(cache.send(conditional.res, 'k', load)).toBeUndefined();
    expect(conditional.sent).toEqual({ status: 304, headers: { etag }, body: undefined });
    expect(loads).toBe(1);
    // A failed load is the caller's failure.
    await expect(cache.send(fakeResponse().res, 'bad', async () => Promise.reject(new Error('down')))).rejects.toThrow('down');
  });

  it('drops everything on a bus message and never stores a read that began before it', async () => {
    const bus = createMemoryBus();
    const cache = createHotCache({ bus, ttlMs: 60_000 });
    await cache.get('a', async () => ({ status: 200, json: 1 }));
    let release!: () => void;
    const slow = cache.get('b', () => new Promise((r) => (release = () => r({ status: 200, json: 'old' }))));
    const invalidated = new Promise<void>((r) => void bus.subscribe('market:*', () => r()));
    await bus.publish('market:7', '{}');
    await invalidated;
    expect(cache.size()).toBe(0);
    release();
    expect((await slow).body.toString()).toBe('"old"');
    // The pre-invalidation read was returned to its caller but not kept.
    expect(cache.size()).toBe(0);
    expect((await cache.get('b', async () => ({ status: 200, json: 'new' }))).body.toString()).toBe('"new"');
    await cache.close();
  });

  it('holds at most maxEntries responses, dropping expired ones first and then the oldest', async () => {
    let t = 0;
    let loads = 0;
    const cache = createHotCache({ ttlMs: 1_000, now: () => t, maxEntries: 3 });
    const get = async (k: string) => (await cache.get(k, async () => ({ status: 200, json: `${k}${++loads}` }))).body.toString();
    for (const k of ['a', 'b', 'c', 'd', 'e']) await get(k);
    expect(cache.size()).toBe(3);
    // The newest three stayed; the oldest two were loaded again.
    expect([await get('c'), await get('d'), await get('e')]).toEqual(['"c3"', '"d4"', '"e5"']);
    expect(await get('a')).toBe('"a6"');
    expect(cache.size()).toBe(3);
    // Once expired, entries leave when the next response is stored, whatever the bound.
    t = 5_000;
    await get('f');
    expect(cache.size()).toBe(1);
  });

  it('does not cache failures', async () => {
    const cache = createHotCache({});
    await expect(cache.get('x', async () => Promise.reject(new Error('no')))).rejects.toThrow('no');
    expect((await cache.get('x', async () => ({ status: 200, json: 2 }))).body.toString()).toBe('2');
  });
});
