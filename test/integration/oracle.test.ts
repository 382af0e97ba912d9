import { decodePythPriceAccount, observationOf, PythStatus, type OracleObservation } from '../../core/oracle/pyth';
import { createOracleIngest, storeObservations } from '../../indexer/oracle';
import { createRpcSource } from '../../indexer/sources/rpc';
import { createSimulatorSource } from '../../simulator/source';
import { CANDLE_INTERVALS, candles, latestObservation, type Candle, type CandleInterval } from '../../server/read/queries/oracle';
import { MarketSimulator } from '../../simulator/simulation';
import { createSimulatorRpcServer } from '../../simulator/rpc-server';
import { testCommon } from '../support/common';
import { PROGRAM_ID, projectionDb, type ProjectionDb } from '../support/indexer';

const SLOTS = 500; // 200 s of chain at 400 ms a slot: four one-minute candles per feed

/** The candles of `interval` computed the obvious way, from every stored trading observation. */
function naiveCandles(obs: { pubSlot: number; t: number; price: bigint; expo: number }[], width: number): Candle[] {
  const byBucket = new Map<number, typeof obs>();
  for (const o of obs) {
    const b = Math.floor(o.t / width) * width;
    byBucket.set(b, [...(byBucket.get(b) ?? []), o]);
  }
  return [...byBucket.entries()]
    .sort(([a], [b]) => a - b)
    .map(([timestamp, os]) => {
      const sorted = [...os].sort((a, b) => a.pubSlot - b.pubSlot);
      const prices = sorted.map((o) => o.price);
      return {
        timestamp,
        open: prices[0]!,
        high: prices.reduce((a, b) => (b > a ? b : a)),
        low: prices.reduce((a, b) => (b < a ? b : a)),
        close: prices[prices.length - 1]!,
        expo: sorted[sorted.length - 1]!.expo,
      };
    });
}

async function storedCandles(p: ProjectionDb) {
  return p.database.db.any('SELECT * FROM oracle_candles_1m ORDER BY feed, bucket');
}

describe('oracle prices: the simulated Pyth accounts, the poll, exactly-once observations and candles (real PostgreSQL)', () => {
  let p: ProjectionDb;
  const source = createSimulatorSource({ seed: 11, programId: PROGRAM_ID });
  const sim = source.simulator;
  /** Every aggregate the poll could have seen, keyed feed:pubSlot. */
  const published = new Map<string, OracleObservation>();
  let feeds: string[] = [];

  beforeAll(async () => {
    p = await projectionDb();
    const ingest = createOracleIngest({ db: p.database.db, source, logger: testCommon().logger });
    // The indexer's order: a batch of program transactions commits (markets appear), then the
    // poll reads their feeds' accounts. Here after every slot, so every aggregate is seen.
    for (let s = 0; s < SLOTS; s++) {
      const block = sim.nextBlock();
      if (block.transactions.length) await p.apply(block.transactions);
      await ingest.poll();
      for (const f of sim.oracleFeeds()) {
        const a = sim.oracleAccount(f);
        if (a) published.set(`${f}:${decodePythPriceAccount(a.data).agg.pubSlot}`, observationOf(f, decodePythPriceAccount(a.data)));
      }
    }
    feeds = (await p.database.db.any<{ f: string }>('SELECT DISTINCT oracle_feed AS f FROM markets WHERE oracle_feed IS NOT NULL')).map((r) => r.f).sort();
  }, 240_000); // about 15 s alone: a commit and a poll per slot
  afterAll(async () => {
    await p?.close();
  });

  it('the simulated accounts are real v2 price accounts on a moving, trading price path', () => {
    const path = [...published.values()].filter((o) => o.feed === feeds[0]).sort((a, b) => Number(a.pubSlot - b.pubSlot));
    expect(path.length).toBeGreaterThan(SLOTS * 0.8);
    // Some slots publish nothing (the aggregate keeps its slot): fewer aggregates than slots.
    expect(path.length).toBeLessThan(SLOTS);
    expect(new Set(path.map((o) => o.price)).size).toBeGreaterThan(path.length / 2);
    for (const o of path) {
      expect(o.status).toBe(PythStatus.Trading);
      expect(o.expo).toBe(-8);
      expect(o.conf > 0n && o.conf * 1000n < o.price).toBe(true); // under 0.1 %
    }
  });

  it('the same seed publishes the same accounts', () => {
    const again = new MarketSimulator({ seed: 11, programId: PROGRAM_ID });
    for (let s = 0; s < 50; s++) again.nextBlock();
    const first = new MarketSimulator({ seed: 11, programId: PROGRAM_ID });
    for (let s = 0; s < 50; s++) first.nextBlock();
    for (const f of first.oracleFeeds()) expect(Buffer.from(again.oracleAccount(f)!.data)).toEqual(Buffer.from(first.oracleAccount(f)!.data));
  });

  it('stores every aggregate of the indexed markets\u2019 feeds exactly once', async () => {
    expect(feeds.length).toBeGreaterThan(0);
    const rows = await p.database.db.any<{ feed: string; pub_slot: string; price: string }>('SELECT feed, pub_slot, price FROM oracle_observations');
    const expected = [...published.values()].filter((o) => feeds.includes(o.feed));
    expect(rows.map((r) => `${r.feed}:${r.pub_slot}:${r.price}`).sort()).toEqual(expected.map((o) => `${o.feed}:${o.pubSlot}:${o.price}`).sort());
  });

  it('a replay of every observation, in any order and batching, inserts nothing and changes no candle', async () => {
    const before = await storedCandles(p);
    const all = [...published.values()].filter((o) => feeds.includes(o.feed));
    expect(await storeObservations(p.database.db, all)).toBe(0);
    expect(await storeObservations(p.database.db, [...all].reverse().slice(0, 100))).toBe(0);
    expect(await storedCandles(p)).toEqual(before);
  });

  it('candles do not depend on the order observations arrive in', async () => {
    const q = await projectionDb();
    try {
      const all = [...published.values()].filter((o) => feeds.includes(o.feed));
      // Newest first, in uneven chunks, some repeated.
      const shuffled = [...all].reverse();
      for (let i = 0; i < shuffled.length; i += 37) await storeObservations(q.database.db, shuffled.slice(i, i + 53));
      expect(await storedCandles(q)).toEqual(await storedCandles(p));
    } finally {
      await q.close();
    }
  });

  it.each(Object.keys(CANDLE_INTERVALS) as CandleInterval[])('%s candles equal a naive computation over the stored observations', async (interval) => {
    for (const feed of feeds) {
      const obs = (
        await p.database.db.any<{ pub_slot: string; t: string; price: string; expo: number }>(
          `SELECT pub_slot, extract(epoch FROM publish_time)::bigint AS t, price, expo FROM oracle_observations WHERE feed = $1 AND status = 1`,
          [feed],
        )
      ).map((r) => ({ pubSlot: Number(r.pub_slot), t: Number(r.t), price: BigInt(r.price), expo: r.expo }));
      const from = Math.min(...obs.map((o) => o.t));
      const to = Math.max(...obs.map((o) => o.t)) + 1;
      const got = await candles(p.database.db, feed, interval, from, to);
      expect(got).toEqual(naiveCandles(obs, CANDLE_INTERVALS[interval]));
      expect(got.length).toBeGreaterThan(0);
      // And a window inside the range: only whole candles whose start falls in it.
      const width = CANDLE_INTERVALS[interval];
      const mid = from + 2 * width + 7;
      expect(await candles(p.database.db, feed, interval, mid, mid + width)).toEqual(
        naiveCandles(obs, width).filter((c) => c.timestamp >= Math.floor(mid / width) * width && c.timestamp < Math.ceil((mid + width) / width) * width),
      );
    }
  });

  it('the latest observation is the aggregate the account holds now', async () => {
    const feed = feeds[0]!;
    const now = observationOf(feed, decodePythPriceAccount(sim.oracleAccount(feed)!.data));
    expect(await latestObservation(p.database.db, feed)).toEqual({
      feed,
      pubSlot: Number(now.pubSlot),
      publishTime: Number(now.publishTime),
      price: now.price,
      conf: now.conf,
      expo: now.expo,
      status: now.status,
    });
    expect(await latestObservation(p.database.db, 'NoSuchFeed1111111111111111111111111111111111')).toBeNull();
  });
});

describe("oracle accounts through the RPC source's getMultipleAccounts", () => {
  it('reads the same bytes the chain holds, null for an unknown account, in the order asked', async () => {
    const sim = new MarketSimulator({ seed: 5, programId: PROGRAM_ID });
    const chain = createSimulatorRpcServer({ simulator: sim });
    const endpoints = await chain.listen();
    const source = createRpcSource({ common: testCommon(), rpcUrl: endpoints.url, wsUrl: endpoints.wsUrl, programId: PROGRAM_ID, subscribe: false });
    try {
      chain.advance(20);
      const [f0, f1] = sim.oracleFeeds();
      const unknown = 'So11111111111111111111111111111111111111112';
      // 150 addresses: two getMultipleAccounts calls of at most 100.
      const asked = [f1!, unknown, f0!, ...Array.from({ length: 147 }, () => f0!)];
      const got = await source.readAccounts!(asked);
      expect(got).toHaveLength(150);
      expect(got[1]).toBeNull();
      expect(Buffer.from(got[0]!.data)).toEqual(Buffer.from(sim.oracleAccount(f1!)!.data));
      expect(Buffer.from(got[149]!.data)).toEqual(Buffer.from(sim.oracleAccount(f0!)!.data));
      expect(got[0]!.slot).toBe(20);
      expect(decodePythPriceAccount(got[2]!.data).agg.status).toBe(PythStatus.Trading);
      expect(chain.callCount('getMultipleAccounts')).toBe(2);
    } finally {
      await source.close();
      await chain.close();
    }
  });

  it('answers getAccountInfo in the RPC shape', async () => {
    const sim = new MarketSimulator({ seed: 5, programId: PROGRAM_ID });
    const chain = createSimulatorRpcServer({ simulator: sim });
    const endpoints = await chain.listen();
    try {
      chain.advance(3);
      const feed = sim.oracleFeeds()[0]!;
      const res = await fetch(endpoints.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getAccountInfo', params: [feed, { encoding: 'base64' }] }),
      });
      const body = (await res.json()) as { result: { context: { slot: number }; value: { data: [string, string]; owner: string; space: number } } };
      expect(body.result.context.slot).toBe(3);
      expect(body.result.value.data[1]).toBe('base64');
      expect(body.result.value.space).toBe(3312);
      expect(body.result.value.owner).toBe('FsJ3A3u2vn5cTVofAjvy6y5kwABJAqYWpe4975bi2epH');
      expect(Buffer.from(body.result.value.data[0], 'base64')).toEqual(Buffer.from(sim.oracleAccount(feed)!.data));
    } finally {
      await chain.close();
    }
  });
});
