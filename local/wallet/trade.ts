import { WalletRequestError, type WalletClient } from './client';

interface Market {
  address: string;
  marketId: string;
  state: number;
  tEnd: string;
}
interface Order {
  orderId: string;
  marketAddress: string;
  sideLabel: string;
  priceBps: number;
  status: string;
}

const TRADING = 2;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Polls `check` every second until it returns a value; gives up after `ms` with `what` in the
 * message. Signed reads spend the wallet's sensitive tier (20 a minute): the client waits out a
 * 429 as it asks.
 */
export async function until<T>(what: string, check: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what} after ${ms / 1000} s`);
    await sleep(1_000);
  }
}

/** The current market once it is trading with at least `minSeconds` left (the next one if not). */
export async function tradingMarket(wallet: WalletClient, minSeconds = 10, ms = 120_000): Promise<Market> {
  return until(
    'a trading market',
    async () => {
      // 404 while the tenant's index has no market yet (a fresh chain): wait for one.
      const body = (await wallet.read('/markets/current').catch((err: unknown) => {
        if (err instanceof WalletRequestError && err.status === 404) return {};
        throw err;
      })) as { data?: { market?: Market } };
      if (!body.data) return undefined;
      const m = body.data?.market;
      if (!m) throw new Error('the API did not answer the v1 shape of /markets/current (the wallet speaks the v1 API)');
      return m.state === TRADING && Date.parse(m.tEnd) - Date.now() > minSeconds * 1000 ? m : undefined;
    },
    ms,
  );
}

export interface TradeResult {
  market: Market;
  placed: string;
  order: Order;
  cancelled: string;
}

/**
 * A wallet's round trip: a resting buy_yes at the lowest price on the current market, sent
 * through /tx and the chain, seen in /orders; then cancelled the same way. Each step is logged.
 */
export async function runTrade(wallet: WalletClient, log: (line: string) => void): Promise<TradeResult> {
  log(`wallet ${wallet.address}`);
  const { tickSizeBps } = (await wallet.read('/config')) as { tickSizeBps: number };
  const market = await tradingMarket(wallet);
  log(`market ${market.marketId} (${market.address}) is trading until ${market.tEnd}`);
  // The lowest price the book takes: nobody sells that low, so the order rests until cancelled.
  const priceBps = tickSizeBps;
  const placed = await wallet.send('place-order', { market: market.address, side: 'buy_yes', priceBps, quantity: '1000000' });
  log(`place_order sent: ${placed}`);
  const mine = async () => ((await wallet.signedRead('/orders')) as { data: { orders: Order[] } }).data.orders.filter((o) => o.marketAddress === market.address && o.priceBps === priceBps);
  const order = await until('the order in /orders', async () => (await mine()).find((o) => o.status === 'open'));
  log(`indexed: order ${order.orderId} ${order.sideLabel} at ${order.priceBps} bps is ${order.status}`);
  const cancelled = await wallet.send('cancel-order', { market: market.address, orderId: order.orderId });
  log(`cancel_order sent: ${cancelled}`);
  const after = await until('the order cancelled in /orders', async () => (await mine()).find((o) => o.orderId === order.orderId && o.status === 'cancelled'));
  log(`indexed: order ${after.orderId} is ${after.status}`);
  return { market, placed, order, cancelled };
}
