import type * as Sdk from '../../client/src';

/**
 * What a client author does with the SDK, run as is in Node and, bundled, in Chromium from a
 * page on another origin (client-sdk.test.ts): read the markets, make a signed request,
 * subscribe to the wallet's positions, and keep a market's book across a server close. It
 * imports the SDK's types only: each side hands it its own build of the SDK.
 */
export interface ScenarioHooks {
  baseUrl: string;
  /** The numeric id and address of the market the test indexed. */
  market: { marketId: string; address: string };
  /** Appends updates to the tenant's update log, as the indexer does. */
  publish(updates: { channel: string; data: Record<string, unknown> }[]): Promise<void>;
  /** Ends every connection to the API and refuses new ones until `restore`. */
  cut(): Promise<void>;
  restore(): Promise<void>;
}

export interface ScenarioResult {
  marketsSeen: string[];
  signedStatus: number;
  positionsUpdate: unknown;
  bookBefore: unknown;
  bookAfter: unknown;
  snapshots: number;
  connections: number;
  closes: number[];
  errorName: string;
}

export async function scenario(sdk: typeof Sdk, socket: Sdk.SocketFactory | undefined, h: ScenarioHooks): Promise<ScenarioResult> {
  const signer = await sdk.generateSigner();
  const closes: number[] = [];
  const subscribed = new Set<string>();
  let onSubscribed = () => undefined as void;
  const client = sdk.createMarketClient({
    baseUrl: h.baseUrl,
    signer,
    socket,
    onLiveEvent: (e) => {
      if (e.type === 'close') closes.push(e.code);
      if (e.type === 'subscribed') {
        subscribed.add(e.channel);
        onSubscribed();
      }
    },
  });
  try {
    const marketsSeen: string[] = [];
    for await (const m of client.markets({ pageSize: 1 })) marketsSeen.push(String(m.marketId));

    const signed = await client.signed.GET('/api/v1/positions', { params: { query: { owner: signer.publicKey } } });

    // A refused call is a typed error: an address that is not one.
    let errorName = '';
    try {
      await client.rest.GET('/api/v1/orderbook/top', { params: { query: { market: 'not-an-address' } } });
    } catch (err) {
      errorName = (err as Error).name;
    }

    const positions = client.live.subscribe(`positions:${signer.publicKey}`);
    const book = client.book(h.market);
    await book.ready;
    await new Promise<void>((resolve) => {
      onSubscribed = () => (subscribed.size === 2 ? resolve() : undefined);
      onSubscribed();
    });
    // Both subscriptions are in once the book's channel answers an update.
    await h.publish([{ channel: `orderbook:${h.market.marketId}`, data: { marketId: h.market.marketId, bestBid: 4100, bestAsk: 5900 } }]);
    const bookBefore = await book.until((b) => b.bestBid === 4100);
    await h.publish([{ channel: `positions:${signer.publicKey}`, data: { wallet: signer.publicKey, marketId: h.market.marketId, yesShares: '5', noShares: '0' } }]);
    const positionsUpdate = (await positions.next()).value;

    // The server's side goes away; an update published meanwhile arrives on the next socket (resumeFrom).
    await h.cut();
    await h.publish([{ channel: `orderbook:${h.market.marketId}`, data: { marketId: h.market.marketId, bestBid: 4200, bestAsk: 5800 } }]);
    await h.restore();
    const bookAfter = await book.until((b) => b.bestBid === 4200);
    const result = { marketsSeen, signedStatus: signed.response.status, positionsUpdate, bookBefore, bookAfter, snapshots: book.snapshots(), connections: client.live.connections(), closes, errorName };
    await book.close();
    return result;
  } finally {
    client.close();
  }
}
