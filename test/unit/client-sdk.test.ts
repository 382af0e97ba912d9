import { createPublicKey, verify } from 'node:crypto';
import bs58 from 'bs58';
import {
  closePolicy,
  createClock,
  createLiveClient,
  createRestClient,
  decodeBase58,
  encodeBase58,
  errorOf,
  generateSigner,
  paginate,
  RateLimitedError,
  retryDelay,
  UnavailableForLegalReasonsError,
  upgradePolicy,
  ValidationError,
  DEFAULT_RETRY,
  type SocketLike,
} from '../../client/src';

/** The SDK's parts without a server (D-523..D-527); the e2e suite runs them against the API, in Node and Chromium. */

const verifyEd25519 = (publicKey: string, message: string, signature: string) =>
  verify(null, Buffer.from(message), createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(decodeBase58(publicKey)).toString('base64url') }, format: 'jwk' }), Buffer.from(decodeBase58(signature)));

describe('client SDK', () => {
  it('writes base58 as bs58 does, leading zeros included', () => {
    for (const bytes of [new Uint8Array([0, 0, 1, 2, 255]), new Uint8Array(32).fill(7), new Uint8Array([0]), crypto.getRandomValues(new Uint8Array(64))]) {
      expect(encodeBase58(bytes)).toBe(bs58.encode(bytes));
      expect([...decodeBase58(bs58.encode(bytes))]).toEqual([...bytes]);
    }
  });

  it('maps every error to its class by the spec code, 451s included, with Retry-After on a 429', () => {
    const h = (o: Record<string, string>) => new Headers(o);
    const geo = errorOf(451, { error: 'blocked', code: 'GEO_BLOCKED' }, h({ 'x-request-id': 'r1' }));
    expect(geo).toBeInstanceOf(UnavailableForLegalReasonsError);
    expect([geo.code, geo.status, geo.requestId]).toEqual(['GEO_BLOCKED', 451, 'r1']);
    expect(errorOf(451, { error: 'attest', code: 'ATTESTATION_REQUIRED' }, h({})).code).toBe('ATTESTATION_REQUIRED');
    const limited = errorOf(429, { error: 'slow down', code: 'RATE_LIMITED' }, h({ 'retry-after': '7' }));
    expect(limited).toBeInstanceOf(RateLimitedError);
    expect((limited as RateLimitedError).retryAfter).toBe(7);
    expect(errorOf(400, { error: 'bad', code: 'INVALID_PARAMETER', details: [{ field: 'limit', message: 'too big' }] }, h({}))).toBeInstanceOf(ValidationError);
    // A body that is not the envelope (a proxy's page) still gets a class by status.
    expect(errorOf(429, '<html>', h({}))).toBeInstanceOf(RateLimitedError);
  });

  it('waits at least Retry-After, with jitter, and gives up on a wait over the policy\'s ceiling', () => {
    const r = (status: number, headers: Record<string, string> = {}) => new Response(null, { status, headers });
    expect(retryDelay(r(429, { 'retry-after': '2' }), 0, DEFAULT_RETRY, () => 0)).toBe(2000);
    const high = retryDelay(r(429, { 'retry-after': '2' }), 0, DEFAULT_RETRY, () => 0.999)!;
    expect(high).toBeGreaterThan(2000);
    expect(high).toBeLessThan(3000);
    expect(retryDelay(r(503), 3, DEFAULT_RETRY, () => 1)).toBe(2000);
    expect(retryDelay(r(429, { 'retry-after': '120' }), 0, DEFAULT_RETRY, () => 0)).toBeUndefined();
    expect(retryDelay(r(500), 0, DEFAULT_RETRY, () => 0)).toBeUndefined();
  });

  it('retries a signed GET with a fresh nonce each attempt, never a POST, and corrects its clock from Date', async () => {
    const signer = await generateSigner();
    const seen: { method: string; message: string | null; signature: string | null }[] = [];
    const serverNow = Date.now() + 120_000;
    const answers = [429, 503, 200];
    const rest = createRestClient({
      baseUrl: 'http://api.test',
      signer,
      sleep: async () => undefined,
      fetch: async (req) => {
        seen.push({ method: req.method, message: req.headers.get('x-wallet-message'), signature: req.headers.get('x-wallet-signature') });
        const status = req.method === 'POST' ? 429 : answers.shift()!;
        return new Response(JSON.stringify(status === 200 ? { data: { positions: [] } } : { error: 'x', code: status === 429 ? 'RATE_LIMITED' : 'SERVICE_UNAVAILABLE' }), {
          status,
          headers: { 'content-type': 'application/json', date: new Date(serverNow).toUTCString(), ...(status === 429 ? { 'retry-after': '1' } : {}) },
        });
      },
    });
    const got = await rest.signed.GET('/api/v1/positions', { params: { query: { owner: signer.publicKey } } });
    expect(got.data).toEqual({ data: { positions: [] } });
    expect(seen).toHaveLength(3);
    const messages = seen.map((s) => JSON.parse(s.message!));
    expect(new Set(messages.map((m) => m.nonce)).size).toBe(3);
    expect(messages[0]).toMatchObject({ domain: 'api.test', action: `GET /positions?owner=${signer.publicKey}` });
    seen.forEach((s) => expect(verifyEd25519(signer.publicKey, s.message!, s.signature!)).toBe(true));
    // The second attempt is signed on the server's clock, two minutes ahead of this one.
    expect(Math.abs(messages[1].timestamp * 1000 - serverNow)).toBeLessThan(2000);
    expect(Math.abs(rest.clock.offsetMs - 120_000)).toBeLessThan(2000);
    seen.length = 0;
    await expect(rest.signed.POST('/api/v1/tx/cancel-order', { body: { market: signer.publicKey, orderId: '1' } as never })).rejects.toBeInstanceOf(RateLimitedError);
    expect(seen).toHaveLength(1);
  });

  it('corrects the clock only past a second: Date is whole seconds', () => {
    const clock = createClock(() => 1_000_000_400);
    clock.observe(new Date(1_000_000_000).toUTCString(), 1_000_000_300, 1_000_000_500);
    expect(clock.offsetMs).toBe(0);
    clock.observe(new Date(1_000_010_000).toUTCString(), 1_000_000_300, 1_000_000_500);
    expect(clock.offsetMs).toBe(10_100);
  });

  it('pages through a list with for await, asking for each page only when the loop needs it', async () => {
    const asked: number[] = [];
    const all = Array.from({ length: 25 }, (_, i) => i);
    const seen: number[] = [];
    for await (const x of paginate(async (offset, limit) => (asked.push(offset), { items: all.slice(offset, offset + limit), total: all.length }), { limit: 10 })) {
      seen.push(x);
      if (x === 12) break;
    }
    expect(seen).toEqual(all.slice(0, 13));
    expect(asked).toEqual([0, 10]);
  });

  it('has a policy for every close code and refused upgrade the stream document names', () => {
    expect(closePolicy(4010, 'Projection switched: reconnect, fetch a fresh REST snapshot and subscribe again')).toBe('start-over');
    expect(closePolicy(1001, '')).toBe('resume');
    expect(closePolicy(1006, '')).toBe('resume');
    expect(closePolicy(1008, 'Backpressure')).toBe('resume');
    expect(closePolicy(1008, 'Too many failed authentications')).toBe('fatal');
    expect(closePolicy(1008, 'Too many subscriptions to unknown markets')).toBe('fatal');
    expect(closePolicy(1009, '')).toBe('fatal');
    expect([upgradePolicy(429), upgradePolicy(503), upgradePolicy(404)]).toEqual(['resume', 'resume', 'fatal']);
  });

  it('drops a duplicate seq, reports a gap as a reset, and resumes from the last seq after a close', async () => {
    const sockets: FakeSocket[] = [];
    const events: string[] = [];
    const live = createLiveClient({
      url: 'ws://api.test/ws',
      domain: 'api.test',
      clock: createClock(),
      backoff: { baseMs: 1, maxMs: 1 },
      socket: (url) => {
        const s = new FakeSocket(url);
        sockets.push(s);
        return s;
      },
      onEvent: (e) => events.push(e.type),
    });
    const feed = live.subscribe('orderbook:7');
    const next = async () => (await feed.next()).value;
    await until(() => sockets[0]?.readyState === 1);
    sockets[0]!.serve({ type: 'connected', message: 'hi', timestamp: 0 });
    expect(JSON.parse(await sockets[0]!.sent())).toEqual({ type: 'subscribe', channel: 'orderbook:7' });
    sockets[0]!.serve({ type: 'subscribed', channel: 'orderbook:7', latestSeq: 3 });
    const up = (seq: number) => ({ type: 'update', channel: 'orderbook:7', seq, slot: seq, timestamp: 0, data: { marketId: '7', bestBid: seq, bestAsk: null } });
    sockets[0]!.serve(up(4));
    sockets[0]!.serve(up(4));
    sockets[0]!.serve(up(6));
    expect(await next()).toMatchObject({ type: 'update', seq: 4 });
    expect(await next()).toEqual({ type: 'reset', channel: 'orderbook:7', reason: 'gap' });
    expect(await next()).toMatchObject({ type: 'update', seq: 6 });
    expect(events).toEqual(expect.arrayContaining(['duplicate', 'gap']));
    sockets[0]!.end(1001, 'Server shutting down');
    await until(() => sockets[1]?.readyState === 1);
    sockets[1]!.serve({ type: 'connected', message: 'hi', timestamp: 0 });
    expect(JSON.parse(await sockets[1]!.sent())).toEqual({ type: 'subscribe', channel: 'orderbook:7', resumeFrom: 6 });
    sockets[1]!.serve({ type: 'subscribed', channel: 'orderbook:7', resumed: true, replayed: 0, latestSeq: 6 });
    // 4010: sequences start over; the subscription says reset and subscribes afresh.
    sockets[1]!.end(4010, 'Projection switched');
    expect(await next()).toEqual({ type: 'reset', channel: 'orderbook:7', reason: 'projection-switched' });
    await until(() => sockets[2]?.readyState === 1);
    sockets[2]!.serve({ type: 'connected', message: 'hi', timestamp: 0 });
    expect(JSON.parse(await sockets[2]!.sent())).toEqual({ type: 'subscribe', channel: 'orderbook:7' });
    sockets[2]!.serve({ type: 'subscribed', channel: 'orderbook:7', latestSeq: 0 });
    sockets[2]!.serve(up(1));
    expect(await next()).toMatchObject({ type: 'update', seq: 1 });
    // A fatal close ends the subscription with the reason.
    sockets[2]!.end(1008, 'Too many failed authentications');
    await expect(feed.next()).rejects.toThrow(/1008 Too many failed authentications/);
    expect(sockets).toHaveLength(3);
    live.close();
  });
});

async function until(cond: () => boolean) {
  while (!cond()) await new Promise((r) => setImmediate(r));
}

/** A socket that opens on the next turn, records what the client sends, and delivers what the test serves. */
class FakeSocket implements SocketLike {
  readyState = 0;
  onopen: SocketLike['onopen'] = null;
  onmessage: SocketLike['onmessage'] = null;
  onclose: SocketLike['onclose'] = null;
  onerror: SocketLike['onerror'] = null;
  private outbox: string[] = [];
  private waiter: ((s: string) => void) | undefined;
  constructor(readonly url: string) {
    setImmediate(() => {
      this.readyState = 1;
      this.onopen?.({});
    });
  }
  send(data: string) {
    if (this.waiter) {
      this.waiter(data);
      this.waiter = undefined;
    } else this.outbox.push(data);
  }
  sent(): Promise<string> {
    const s = this.outbox.shift();
    return s !== undefined ? Promise.resolve(s) : new Promise((r) => (this.waiter = r));
  }
  serve(m: unknown) {
    this.onmessage?.({ data: JSON.stringify(m) });
  }
  end(code: number, reason: string) {
    this.readyState = 3;
    this.onclose?.({ code, reason });
  }
  close(code = 1000, reason = '') {
    this.end(code, reason);
  }
}
