import fc from 'fast-check';
import WebSocket from 'ws';
import { MarketSimulator } from '../../simulator/simulation';
import type { RpcChain } from '../../simulator/chain/types';
import { createSimulatorRpcServer, type SimulatorRpcServer } from '../../simulator/rpc-server';
import { PROGRAM_ID } from '../support/indexer';
import { waitFor } from '../support/tables';

/**
 * The simulated chain's JSON-RPC under hostile input (D-271): whatever arrives over HTTP or
 * WebSocket is answered with a well-formed JSON-RPC 2.0 response (or a documented HTTP error),
 * and the server still answers `getSlot` afterwards. Then its connection cap and backpressure.
 */
const METHODS = ['getHealth', 'getSlot', 'getBlockHeight', 'getLatestBlockhash', 'sendTransaction', 'getSignaturesForAddress', 'getTransaction', 'getAccountInfo', 'getMultipleAccounts', 'logsSubscribe', 'logsUnsubscribe', 'nope', '', '__proto__', 'constructor', 'toString'];
const LEAK = /at \w+ \(|node_modules|TypeError|ReferenceError|\.ts:\d+/;

const scalar = fc.oneof(fc.string({ maxLength: 20 }), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.constantFrom(PROGRAM_ID, 'base64', 'base58', 'json', '2.0', 'AQ==', ''));
const value = fc.oneof(scalar, fc.jsonValue({ maxDepth: 3 }), fc.dictionary(fc.constantFrom('encoding', 'limit', 'before', 'until', 'mentions', 'maxSupportedTransactionVersion', 'toString', 'valueOf', '__proto__'), fc.oneof(scalar, fc.array(scalar, { maxLength: 3 }), fc.jsonValue({ maxDepth: 2 }))));
const call = fc.record(
  { jsonrpc: fc.oneof(fc.constant('2.0'), scalar), id: fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.constant(null), value), method: fc.oneof(fc.constantFrom(...METHODS), scalar), params: fc.oneof(fc.array(value, { maxLength: 3 }), value) },
  { requiredKeys: [] },
);
const body = fc.oneof(
  { weight: 5, arbitrary: call.map((c) => JSON.stringify(c)) },
  { weight: 2, arbitrary: fc.array(fc.oneof(call, value), { maxLength: 5 }).map((a) => JSON.stringify(a)) },
  { weight: 2, arbitrary: value.map((v) => JSON.stringify(v) ?? 'null') },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.constantFrom('null', '[null]', '{}', '[]', '[[]]', '{"method":"sendTransaction","params":5}', '{"__proto__":{"method":"getSlot"}}', '1e999', '"x"') },
);

/** A well-formed JSON-RPC 2.0 response object: an id, and a result or an error with a code and a message that leaks nothing. */
function assertResponse(r: unknown): void {
  expect(r).toEqual(expect.objectContaining({ jsonrpc: '2.0' }));
  const o = r as Record<string, unknown>;
  expect(o.id === null || typeof o.id === 'string' || typeof o.id === 'number').toBe(true);
  expect('result' in o !== 'error' in o).toBe(true);
  if ('error' in o) {
    const e = o.error as { code: unknown; message: unknown };
    expect(Number.isInteger(e.code)).toBe(true);
    expect(typeof e.message).toBe('string');
    expect(e.message).not.toMatch(LEAK);
  }
}

describe('the simulated chain JSON-RPC under hostile input', () => {
  let sim: MarketSimulator;
  let rpc: SimulatorRpcServer;
  let url: string;
  let wsUrl: string;
  beforeAll(async () => {
    sim = new MarketSimulator({ seed: 4141, programId: PROGRAM_ID });
    rpc = createSimulatorRpcServer({ simulator: sim });
    rpc.advance(200);
    ({ url, wsUrl } = await rpc.listen(0));
  });
  afterAll(() => rpc.close());
  const slot = async () => ((await (await fetch(url, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'getSlot' }) })).json()) as { result: number }).result;

  it('answers every HTTP body with JSON-RPC 2.0 responses, and still serves getSlot (1,500 cases)', async () => {
    await fc.assert(
      fc.asyncProperty(body, async (text) => {
        const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: text });
        expect(res.status).toBe(200);
        const out = (await res.json()) as unknown;
        if (Array.isArray(out)) {
          expect(out.length).toBeGreaterThan(0);
          out.forEach(assertResponse);
        } else assertResponse(out);
      }),
      { numRuns: 1_500 },
    );
    expect(await slot()).toBe(sim.slot);
  }, 300_000);

  it('answers every WebSocket message with a JSON-RPC 2.0 response on the same socket, and still serves getSlot (800 cases)', async () => {
    const ws = new WebSocket(wsUrl);
    await new Promise((r) => ws.once('open', r));
    // The next message on the socket, or an error naming what was sent if none comes in 10 s.
    const answerTo = (text: string) =>
      new Promise<unknown>((resolve, reject) => {
        const timer = setTimeout(() => (ws.off('message', take), reject(new Error(`no answer in 10 s to ${text}`))), 10_000);
        const take = (d: WebSocket.RawData) => (clearTimeout(timer), resolve(JSON.parse(d.toString())));
        ws.once('message', take);
        ws.send(text);
      });
    try {
      await fc.assert(
        fc.asyncProperty(body, async (text) => {
          const answer = (await answerTo(text)) as { method?: string };
          // A logsSubscribe that took may bring notifications; none arrive while the chain stands still.
          expect(answer.method).toBeUndefined();
          assertResponse(answer);
        }),
        { numRuns: 800 },
      );
    } finally {
      ws.close();
    }
    expect(await slot()).toBe(sim.slot);
  }, 300_000);

  it('a handler that throws answers -32603 without its details, and the server goes on', async () => {
    // A chain whose blockhash read fails as a bug would: the dispatch guard answers for it.
    const failing: RpcChain = {
      programId: PROGRAM_ID,
      slot: 9,
      latestBlockhash: () => {
        throw new TypeError('secret internals at latestBlockhash (simulator/chain/chain.ts:1:1)');
      },
      submit: () => 'x',
      account: () => null,
      nextBlock: () => ({ slot: 10, transactions: [] }) as never,
    };
    const broken = createSimulatorRpcServer({ simulator: failing });
    const { url: u } = await broken.listen(0);
    try {
      const ask = async (method: string) => (await fetch(u, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 3, method }) })).json();
      expect(await ask('getLatestBlockhash')).toEqual({ jsonrpc: '2.0', id: 3, error: { code: -32603, message: 'Internal error' } });
      expect(await ask('getSlot')).toEqual({ jsonrpc: '2.0', id: 3, result: 9 });
    } finally {
      await broken.close();
    }
  });
});

describe('the simulated chain WebSocket bounds', () => {
  const open = (u: string) =>
    new Promise<WebSocket>((resolve, reject) => {
      const ws = new WebSocket(u);
      ws.once('open', () => resolve(ws));
      ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
      ws.once('error', reject);
    });

  it('refuses an upgrade past the connection cap with HTTP 503, and admits one again after a close', async () => {
    const sim = new MarketSimulator({ seed: 4142, programId: PROGRAM_ID });
    const rpc = createSimulatorRpcServer({ simulator: sim, limits: { maxConnections: 2 } });
    const { wsUrl } = await rpc.listen(0);
    try {
      const a = await open(wsUrl);
      const b = await open(wsUrl);
      await expect(open(wsUrl)).rejects.toThrow('HTTP 503');
      a.close();
      const c = await waitFor('a place to free up', async () => open(wsUrl).catch(() => undefined));
      c.close();
      b.close();
    } finally {
      await rpc.close();
    }
  });

  it('skips notifications to a subscriber that stops reading and closes it after the run of skips; a reading one keeps receiving', async () => {
    const sim = new MarketSimulator({ seed: 4143, programId: PROGRAM_ID });
    const rpc = createSimulatorRpcServer({ simulator: sim, limits: { maxBufferedBytes: 0, maxSkips: 3 } });
    const { wsUrl } = await rpc.listen(0);
    const subscribe = async () => {
      const ws = await open(wsUrl);
      const got: string[] = [];
      ws.on('message', (d) => got.push(d.toString()));
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'logsSubscribe', params: [{ mentions: [PROGRAM_ID] }] }));
      await waitFor('the subscription', async () => got.length > 0);
      return { ws, got };
    };
    try {
      const reader = await subscribe();
      const stalled = await subscribe();
      const closed = new Promise<number>((r) => stalled.ws.once('close', (code) => r(code)));
      stalled.ws.pause();
      await waitFor('the stalled subscriber to be closed', async () => {
        rpc.advance(20);
        await new Promise((r) => setImmediate(r));
        return rpc.backpressureCloses() === 1;
      }, 120_000);
      expect(rpc.subscriberCount()).toBe(1);
      stalled.ws.resume();
      expect(await closed).toBe(1008);
      const before = reader.got.length;
      rpc.advance(5);
      await waitFor('the reader to receive more', async () => reader.got.length > before);
      reader.ws.close();
    } finally {
      await rpc.close();
    }
  }, 180_000);
});
