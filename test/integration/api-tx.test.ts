import bs58 from 'bs58';
import { createDatabase, type Database } from '../../core/db';
import { MarketState } from '../../core/domain';
import { createRpcChain, decodeInstructionData, decodeWireTransaction, instructionDef } from '../../core/tx';
import { createIndexer, type Indexer } from '../../indexer/indexer';
import { createRpcSource } from '../../indexer/sources/rpc';
import { MarketSimulator } from '../../simulator/simulation';
import { createSimulatorRpcServer, type SimulatorRpcServer } from '../../simulator/rpc-server';
import { call, HIGH_LIMITS, testWallet, walletHeaders, type Json } from '../support/api';
import { createApiServers } from '../support/api-servers';
import { testCommon } from '../support/common';
import { PROGRAM_ID } from '../support/indexer';
import { createTestDatabase, type TestDatabase } from '../support/pg';
import { testTenant } from '../support/redis';
import { waitFor } from '../support/tables';
import { signWireTransaction } from '../support/tx';

const HIGH = HIGH_LIMITS;
const wallet = testWallet;

describe('POST /tx/* (real signatures, PostgreSQL, Redis, the simulated chain over JSON-RPC)', () => {
  // Epochs of 120 s (300 slots): a resting order can outlive a cancel's 150 slots.
  const sim = new MarketSimulator({ seed: 2202, programId: PROGRAM_ID, epochSeconds: 120, wallets: 8, ordersPerSlot: 1 });
  let chain: SimulatorRpcServer;
  let rpcUrl: string;
  let tdb: TestDatabase;
  let database: Database;
  let indexer: Indexer;
  let indexerRun: Promise<void>;
  let source: ReturnType<typeof createRpcSource>;
  const apis = createApiServers();
  let api: string;
  let tenant: string;
  const trader = wallet();

  async function startApi(env: Record<string, string>, withChain = true) {
    return apis.start(testCommon({ PROGRAM_ID, TENANT_ID: tenant, ...HIGH, ...env }), database.db, { chain: withChain ? createRpcChain({ url: rpcUrl }) : undefined });
  }
  const indexedSlot = async () => Number((await database.db.one('SELECT last_processed_slot FROM indexer_cursor')).last_processed_slot);
  const caughtUp = (ms?: number) => waitFor('indexer at the chain tip', async () => (await indexedSlot()) >= sim.slot - 1 && chain.transactions().length > 0, ms);

  beforeAll(async () => {
    chain = createSimulatorRpcServer({ simulator: sim });
    const endpoints = await chain.listen();
    rpcUrl = endpoints.url;
    while (!sim.marketAccounts().some((m) => m.state === MarketState.Resolved) || !sim.marketAccounts().some((m) => m.state === MarketState.Trading)) chain.advance(1);
    tenant = testTenant();
    tdb = await createTestDatabase();
    database = createDatabase({ url: tdb.url, poolMax: 4 });
    const icommon = testCommon({ PROGRAM_ID, TENANT_ID: tenant });
    source = createRpcSource({ common: icommon, rpcUrl: endpoints.url, wsUrl: endpoints.wsUrl, programId: PROGRAM_ID, pollIntervalMs: 200 });
    indexer = createIndexer({ common: icommon, db: database.db, pgp: database.pgp, databaseUrl: tdb.url, source, heartbeatMs: 200, updates: undefined });
    indexerRun = indexer.run();
    api = await startApi({});
    await caughtUp(150_000);
    // A backfill of the chain's first markets through JSON-RPC: seconds idle, more on a loaded runner.
  }, 3 * 60_000);
  afterAll(async () => {
    await apis.closeAll();
    await indexer.stop();
    await indexerRun;
    await source.close();
    await chain.close();
    await database.close();
    await tdb.drop();
  });

  const trading = () => sim.marketAccounts().filter((m) => m.state === MarketState.Trading).at(-1)!;
  const post = (base: string, name: string, body: unknown, key = trader, o: Parameters<typeof walletHeaders>[2] = {}, action = `POST /tx/${name}`) =>
    call(`${base}/api/v1/tx/${name}`, { method: 'POST', headers: { ...walletHeaders(key, action, o), 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const orders = async () => (await call(`${api}/api/v1/orders`, { headers: walletHeaders(trader, 'GET /orders') })).body as Json;

  it('builds place_order from the indexed market; the wallet signs and sends it; the order is indexed', async () => {
    const m = trading();
    const price = sim.tickSizeBps * 2;
    const r = await post(api, 'place-order', { market: m.address, side: 'buy_no', priceBps: price, quantity: '1500000' });
    expect(r.status).toBe(200);
    const tx = decodeWireTransaction(r.body.data.transaction);
    expect(tx.feePayer).toBe(trader.address);
    expect(tx.signatures).toEqual([null]);
    expect(tx.blockhash).toBe(r.body.data.blockhash);
    const ix = tx.instructions.at(-1)!;
    expect(decodeInstructionData(ix.data)).toEqual({ name: 'place_order', args: { side: 2, priceBps: price, quantity: 1_500_000n, orderType: 0 } });
    expect(ix.accounts).toEqual(instructionDef('place_order').accounts.map((a) => r.body.data.accounts[a.name]));
    expect(r.body.data.accounts).toMatchObject({ owner: trader.address, market: m.address, settlement_mint: m.mint });

    const signature = await source.rpc.call<string>('sendTransaction', [signWireTransaction(r.body.data.transaction, trader.secretKey), { encoding: 'base64' }]);
    chain.advance(1);
    const order = await waitFor('the order in /orders', async () => (await orders()).data.orders.find((o: Json) => o.marketAddress === m.address));
    expect(order).toMatchObject({ owner: trader.address, sideCode: 2, quantity: '1500000' });
    expect(signature).toMatch(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
  });

  it('refuses bodies and states with 400 VALIDATION_ERROR and one detail per problem', async () => {
    const m = trading();
    const tick = sim.tickSizeBps;
    const bad = async (name: string, body: unknown) => {
      const r = await post(api, name, body);
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('VALIDATION_ERROR');
      return (r.body.details as { field: string }[]).map((d) => d.field).sort();
    };
    expect(await bad('place-order', { market: m.address, priceBps: 5000 })).toEqual(['body.quantity', 'body.side']);
    expect(await bad('place-order', { market: m.address, side: 'buy_yes', priceBps: '5000', quantity: '1' })).toEqual(['body.priceBps']);
    expect(await bad('place-order', { market: m.address, side: 'buy_yes', priceBps: 5000, quantity: '1', extra: 1 })).toEqual(['body.extra']);
    expect(await bad('place-order', { market: m.address, side: 'buy_yes', priceBps: 10_000, quantity: '0' })).toEqual(['body.priceBps', 'body.quantity']);
    if (tick > 1) expect(await bad('place-order', { market: m.address, side: 'buy_yes', priceBps: tick + 1, quantity: '5' })).toEqual(['body.priceBps']);
    expect(await bad('place-order', { market: bs58.encode(Buffer.alloc(32, 9)), side: 'buy_yes', priceBps: tick, quantity: '5' })).toEqual(['body.market']);
    const resolved = sim.marketAccounts().find((x) => x.state === MarketState.Resolved || x.state === MarketState.Closed)!;
    expect(await bad('place-order', { market: resolved.address, side: 'buy_yes', priceBps: tick, quantity: '5' })).toEqual(['body.market']);
    expect(await bad('claim-payout', { market: m.address })).toEqual(['body.market']);
    expect(await bad('claim-payout', { market: resolved.address })).toEqual(['body.market']); // no position
    expect(await bad('claim-referral', { settlementMint: m.mint })).toEqual(['body.settlementMint']);
    expect(await bad('claim-creator-fees', { market: m.address })).toEqual(['body.market']);
    expect(await bad('cancel-order', { market: m.address, orderId: '999999999' })).toEqual(['body.orderId']);
    // Not JSON at all: 400 INVALID_REQUEST_BODY.
    const raw = await call(`${api}/api/v1/tx/place-order`, { method: 'POST', headers: { ...walletHeaders(trader, 'POST /tx/place-order'), 'content-type': 'application/json' }, body: '{"market":' });
    expect([raw.status, raw.body.code]).toEqual([400, 'INVALID_REQUEST_BODY']);
  });

  it("refuses another wallet's order as absent, and every authentication failure as 401", async () => {
    const mine = (await orders()).data.orders[0];
    const stranger = wallet();
    const r = await post(api, 'cancel-order', { market: mine.marketAddress, orderId: mine.orderId }, stranger);
    expect([r.status, r.body.code, r.body.details[0].field]).toEqual([400, 'VALIDATION_ERROR', 'body.orderId']);
    const body = { market: mine.marketAddress, orderId: mine.orderId };
    const unsigned = await call(`${api}/api/v1/tx/cancel-order`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect([unsigned.status, unsigned.body.code]).toEqual([401, 'MISSING_AUTH_HEADERS']);
    expect((await post(api, 'cancel-order', body, trader, { forge: true })).body.code).toBe('INVALID_SIGNATURE');
    expect((await post(api, 'cancel-order', body, trader, {}, 'POST /tx/place-order')).body).toMatchObject({ code: 'UNAUTHORIZED', error: 'Action does not match request' });
    const nonce = `replay-${Date.now()}`;
    expect((await post(api, 'claim-referral', { settlementMint: mine.settlementMint }, trader, { nonce })).status).toBe(400);
    expect((await post(api, 'claim-referral', { settlementMint: mine.settlementMint }, trader, { nonce })).body).toMatchObject({ code: 'UNAUTHORIZED', error: 'Nonce already used' });
  });

  it('records pending_cancel when it builds a cancel, cancel_failed once 150 slots pass without the cancel event, then cancelled (D-8)', async () => {
    // A market with more than 200 slots (80 s) of trading left.
    while (trading().tEnd - sim.blockTimeOf(sim.slot) < 80) chain.advance(10);
    await caughtUp();
    const m = trading();
    const placed = await post(api, 'place-order', { market: m.address, side: 'buy_yes', priceBps: sim.tickSizeBps, quantity: '700000' });
    await source.rpc.call('sendTransaction', [signWireTransaction(placed.body.data.transaction, trader.secretKey), { encoding: 'base64' }]);
    chain.advance(1);
    const mine = await waitFor('the order indexed', async () => (await orders()).data.orders.find((o: Json) => o.marketAddress === m.address && o.quantity === '700000'));
    const status = async () => (await orders()).data.orders.find((o: Json) => o.orderId === mine.orderId && o.marketAddress === m.address);
    expect(mine.status).toBe('open');

    const r = await post(api, 'cancel-order', { market: m.address, orderId: mine.orderId });
    expect(r.status).toBe(200);
    expect(decodeInstructionData(decodeWireTransaction(r.body.data.transaction).instructions.at(-1)!.data)).toEqual({ name: 'cancel_order', args: { orderId: BigInt(mine.orderId) } });
    expect(await status()).toMatchObject({ status: 'pending_cancel', statusCode: 4 });
    // The wallet never sends it: once its blockhash's 150 slots are indexed, it failed.
    chain.advance(140);
    await caughtUp();
    expect(await status()).toMatchObject({ status: 'pending_cancel' });
    chain.advance(12);
    await caughtUp();
    expect(sim.marketAccounts().find((x) => x.address === m.address)!.state).toBe(MarketState.Trading);
    expect(await status()).toMatchObject({ status: 'cancel_failed', statusCode: 5 });
    // A cancel_failed order rests: it can be cancelled again, and the cancel event wins.
    const again = await post(api, 'cancel-order', { market: m.address, orderId: mine.orderId });
    await source.rpc.call('sendTransaction', [signWireTransaction(again.body.data.transaction, trader.secretKey), { encoding: 'base64' }]);
    chain.advance(1);
    await waitFor('the cancel indexed', async () => (await status()).status === 'cancelled');
  });

  it('answers 503 without a chain to read a blockhash from, and 429 once the sensitive tier is spent', async () => {
    const m = trading();
    const body = { market: m.address, side: 'buy_yes', priceBps: sim.tickSizeBps, quantity: '10' };
    const noChain = await startApi({}, false);
    expect((await post(noChain, 'place-order', body)).body.code).toBe('SERVICE_UNAVAILABLE');
    // Per wallet (D-43), shared by the tenant's replicas: a wallet that has not spent any yet. The
    // address's bucket (D-187, abuse-signed) holds this suite's earlier requests: left wide here.
    const tight = await startApi({ RATE_LIMIT_SENSITIVE_MAX: '2', RATE_LIMIT_WALLETS_PER_IP: '1000' });
    const fresh = wallet();
    expect((await post(tight, 'place-order', body, fresh)).status).toBe(200);
    expect((await post(tight, 'place-order', body, fresh)).status).toBe(200);
    const limited = await post(tight, 'place-order', body, fresh);
    expect([limited.status, limited.body.code]).toEqual([429, 'RATE_LIMITED']);
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
  });
});
