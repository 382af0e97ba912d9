import bs58 from 'bs58';
import nacl from 'tweetnacl';
import type { Common } from '../../core/common';
import { createDatabase, type Database } from '../../core/db';
import { MarketState, OrderType, Side, settlementPayout, type Outcome } from '../../core/domain';
import type { Redis } from '../../core/redis/client';
import { createKeys } from '../../core/redis/keys';
import { createRedisUpdateLog } from '../../core/redis/updates';
import { buildProgramTransaction, createRpcChain } from '../../core/tx';
import { createIndexer, type Indexer } from '../../indexer/indexer';
import { createRpcSource } from '../../indexer/sources/rpc';
import { createWalletClient, walletKeyFromBytes, type WalletClient } from '../../local/wallet/client';
import { startApiServer } from '../../server/run';
import { createLiveStores } from '../../server/stores';
import { MarketSimulator } from '../../simulator/simulation';
import { createSimulatorRpcServer, type SimulatorRpcServer } from '../../simulator/rpc-server';
import { call, HIGH_LIMITS, walletHeaders, type Json } from '../support/api';
import { testCommon } from '../support/common';
import { PROGRAM_ID } from '../support/indexer';
import { createTestDatabase, type TestDatabase } from '../support/pg';
import { connectRedis, testTenant } from '../support/redis';
import { waitFor } from '../support/tables';
import { signWireTransaction } from '../support/tx';
import { WsClient } from '../support/ws';

const HIGH = HIGH_LIMITS;

describe('build → sign → send to the simulated chain → indexed → /orders and /ws', () => {
  // No random orders: the order book holds only what this test sends.
  const sim = new MarketSimulator({ seed: 2201, programId: PROGRAM_ID, epochSeconds: 30, wallets: 6, ordersPerSlot: 0 });
  let chain: SimulatorRpcServer;
  let tdb: TestDatabase;
  let database: Database;
  let indexer: Indexer;
  let indexerRun: Promise<void>;
  let source: ReturnType<typeof createRpcSource>;
  let api: { url: string; wsUrl: string; common: Common };
  const redisClients: Redis[] = [];
  const kp = nacl.sign.keyPair();
  const trader = { address: bs58.encode(kp.publicKey), secretKey: kp.secretKey };
  let market: ReturnType<MarketSimulator['marketAccounts']>[number];
  /** The trader as `npm run wallet` runs it: builds through /tx/*, checks what it got (D-281), signs, sends. */
  let wallet: WalletClient;

  beforeAll(async () => {
    chain = createSimulatorRpcServer({ simulator: sim });
    const endpoints = await chain.listen();
    while (!sim.marketAccounts().some((m) => m.state === MarketState.Trading)) chain.advance(1);
    market = sim.marketAccounts().find((m) => m.state === MarketState.Trading)!;
    const tenant = testTenant();
    tdb = await createTestDatabase();
    database = createDatabase({ url: tdb.url, poolMax: 4 });
    const icommon = testCommon({ PROGRAM_ID, TENANT_ID: tenant });
    const pub = connectRedis();
    redisClients.push(pub);
    source = createRpcSource({ common: icommon, rpcUrl: endpoints.url, wsUrl: endpoints.wsUrl, programId: PROGRAM_ID, pollIntervalMs: 200 });
    indexer = createIndexer({
      common: icommon, db: database.db, pgp: database.pgp, databaseUrl: tdb.url, source, heartbeatMs: 200,
      updates: createRedisUpdateLog({ redis: pub, keys: createKeys(tenant) }),
    });
    indexerRun = indexer.run();
    const common = testCommon({ PROGRAM_ID, TENANT_ID: tenant, API_PORT: '0', API_HOST: '127.0.0.1', ...HIGH });
    const redis = connectRedis();
    redisClients.push(redis);
    const live = createLiveStores(common, redis);
    common.shutdown.add('live', () => live.close());
    const { port } = await startApiServer({ common, db: database.db, redis, live, busCarriesIndexer: true, chain: createRpcChain({ url: endpoints.url }) });
    api = { url: `http://127.0.0.1:${port}`, wsUrl: `ws://127.0.0.1:${port}/ws`, common };
    wallet = createWalletClient({ api: api.url, rpc: endpoints.url, key: await walletKeyFromBytes(kp.secretKey), domain: 'localhost', program: PROGRAM_ID });
    await waitFor('the trading market indexed', async () => (await call(`${api.url}/api/v1/markets/${market.address}`)).body?.data?.market?.state === MarketState.Trading);
  });
  afterAll(async () => {
    await api.common.shutdown.run('test over');
    await indexer.stop();
    await indexerRun;
    await source.close();
    await chain.close();
    redisClients.forEach((r) => r.disconnect());
    await database.close();
    await tdb.drop();
  });

  const orders = async () => (await call(`${api.url}/api/v1/orders`, { headers: walletHeaders(trader, 'GET /orders') })).body as Json;

  /** What a wallet app does: fetch a blockhash, build, sign, send through JSON-RPC. */
  async function send(name: 'place_order' | 'cancel_order', accounts: Record<string, string>, args: never, wallet = trader): Promise<string> {
    const { value } = await source.rpc.call<{ value: { blockhash: string; lastValidBlockHeight: number } }>('getLatestBlockhash', [{ commitment: 'confirmed' }]);
    const built = await buildProgramTransaction({
      programId: PROGRAM_ID, name, signer: wallet.address, accounts, args,
      recent: { blockhash: value.blockhash, lastValidBlockHeight: BigInt(value.lastValidBlockHeight) },
    });
    const wire = signWireTransaction(built.transaction, wallet.secretKey);
    return source.rpc.call<string>('sendTransaction', [wire, { encoding: 'base64' }]);
  }

  it('places an order the indexer projects into /orders and the orderbook stream, then cancels it', async () => {
    const ws = await WsClient.open(api.wsUrl);
    try {
      const channel = `orderbook:${market.marketId}`;
      await ws.next((m) => m.type === 'connected');
      expect(await ws.request({ type: 'subscribe', channel })).toMatchObject({ type: 'subscribed', channel });
      const price = sim.tickSizeBps * 20;
      // Through the API's /tx/place-order and the wallet's check.
      const placed = await wallet.send('place-order', { market: market.address, side: 'buy_yes', priceBps: price, quantity: '3000000' });
      chain.advance(1);
      const bid = await ws.next((m) => m.type === 'update' && m.channel === channel && m.data.bestBid === price);
      expect(bid.data).toMatchObject({ marketId: market.marketId.toString(), bestBid: price, bestAsk: null });
      await waitFor('the order in /orders', async () => (await orders()).data.orders.length === 1);
      const [order] = (await orders()).data.orders;
      expect(order).toMatchObject({ marketAddress: market.address, owner: trader.address, sideCode: Side.BuyYes, priceBps: price, quantity: '3000000', status: 'open', statusCode: 0 });
      expect(placed).toMatch(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/);

      await send('cancel_order', { owner: trader.address, market: market.address }, { orderId: BigInt(order.orderId) } as never);
      chain.advance(1);
      await ws.next((m) => m.type === 'update' && m.channel === channel && m.data.bestBid === null);
      await waitFor('the order cancelled in /orders', async () => (await orders()).data.orders[0]?.status === 'cancelled');
    } finally {
      await ws.close();
    }
  });

  it('claims the payout of a settled, unclaimed position: built by /tx/claim-payout, signed, sent, indexed', async () => {
    const kp2 = nacl.sign.keyPair();
    const counterparty = { address: bs58.encode(kp2.publicKey), secretKey: kp2.secretKey };
    const positions = async () => (await call(`${api.url}/api/v1/positions`, { headers: walletHeaders(trader, 'GET /positions') })).body.data.positions as Json[];
    // YES for the trader, NO for the counterparty at the complementary price: they cross.
    const yes = sim.tickSizeBps * 20;
    const quantity = 2_000_000n;
    await send('place_order', { owner: trader.address, market: market.address, settlement_mint: market.mint }, { side: Side.BuyYes, priceBps: yes, quantity, orderType: OrderType.Limit } as never);
    await send('place_order', { owner: counterparty.address, market: market.address, settlement_mint: market.mint }, { side: Side.BuyNo, priceBps: 10_000 - yes, quantity, orderType: OrderType.Limit } as never, counterparty);
    chain.advance(1);
    await waitFor('the trader\'s position', async () => (await positions()).find((p) => p.marketAddress === market.address && p.yesShares === quantity.toString()));

    // The chain runs on until the market is resolved; the simulator never claims for outside wallets.
    const state = () => sim.marketAccounts().find((m) => m.address === market.address)!.state;
    for (let i = 0; i < 5_000 && state() !== MarketState.Resolved && state() !== MarketState.Closed; i++) chain.advance(1);
    await waitFor('the market resolved in the API', async () => [MarketState.Resolved, MarketState.Closed].includes((await call(`${api.url}/api/v1/markets/${market.address}`)).body?.data?.market?.state));
    const before = (await positions()).find((p) => p.marketAddress === market.address)!;
    expect(before.settled).toBe(false);

    const path = '/tx/claim-payout';
    // Built by the API, checked by the wallet (only the market program's claim_payout, its PDAs), signed, sent.
    const signature = await wallet.send('claim-payout', { market: market.address });
    chain.advance(1);
    const after = await waitFor('the payout claimed', async () => (await positions()).find((p) => p.marketAddress === market.address && p.settled));
    const outcome = (await call(`${api.url}/api/v1/markets/${market.address}`)).body.data.market.outcome as Outcome;
    expect(after.payout).toBe(String(settlementPayout(outcome, quantity, 0n)));
    const settled = await database.db.one('SELECT kind FROM raw_events WHERE signature = $1', [signature]);
    expect(settled.kind).toBe('PositionSettled');
    // Claimed once: building it again is refused.
    const again = await call(`${api.url}/api/v1${path}`, {
      method: 'POST', headers: { ...walletHeaders(trader, `POST ${path}`), 'content-type': 'application/json' }, body: JSON.stringify({ market: market.address }),
    });
    expect([again.status, again.body.code, again.body.details]).toEqual([400, 'VALIDATION_ERROR', [{ field: 'body.market', message: 'position already claimed' }]]);
  });
});
