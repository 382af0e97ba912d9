import { keepBook } from './book';
import { createRestClient, ok, paginate, type ClientOptions } from './http';
import { createLiveClient, type LiveEvent, type SocketFactory } from './live';
import type { components } from './openapi';
import { createTxClient, type TxCheck } from './tx';

export * from './errors';
export { createKeypairSigner, createWebCryptoSigner, generateSigner, type Signer } from './signer';
export { encodeBase58, decodeBase58 } from './base58';
export { actionOf, signedMessage, walletHeaders } from './auth';
export { createClock, type Clock } from './clock';
export { closePolicy, upgradePolicy, type ClosePolicy } from './close-policy';
export { createRestClient, ok, paginate, retryDelay, DEFAULT_RETRY, type ClientOptions, type RestClient, type RetryPolicy } from './http';
export { createLiveClient, globalSocket, type LiveClient, type LiveEvent, type LiveItem, type LiveOptions, type SocketFactory, type SocketLike, type Update } from './live';
export { keepBook, type KeptBook, type TopOfBook } from './book';
export { createTxClient, signWireTransaction, type TxCheck, type TxName, type TxOptions } from './tx';
export { checkBuiltTransaction, expectedFor, marketProgramCheck, TransactionRefused, IDL_PROGRAM, MAX_PRIORITY_FEE_LAMPORTS, type CheckInput, type ExpectedInstruction } from './check';
export type { paths, components, operations } from './openapi';

export type MarketListItem = components['schemas']['MarketListItem'];

export interface MarketClientOptions extends ClientOptions {
  /** How `/ws` sockets are opened (Node 20: `createNodeSocket` from "@market-indexer/client/node"). */
  socket?: SocketFactory;
  onLiveEvent?: (e: LiveEvent) => void;
}

/**
 * The SDK in one object: typed REST (`rest`, `signed`), `markets()` as an async iterator, the
 * `/ws` client (`live`), a kept book, and `/tx` (`tx(...)`).
 */
export function createMarketClient(options: MarketClientOptions) {
  const http = createRestClient(options);
  const domain = options.domain ?? new URL(options.baseUrl).hostname;
  const wsUrl = `${options.baseUrl.replace(/^http/, 'ws').replace(/\/$/, '')}/ws`;
  const live = createLiveClient({ url: wsUrl, signer: options.signer, domain, chain: options.chain, clock: http.clock, socket: options.socket, onEvent: options.onLiveEvent });
  return {
    ...http,
    live,
    /** Every market, newest epoch first, a page at a time. */
    markets: (o: { pageSize?: number } = {}) =>
      paginate<MarketListItem>(async (offset, limit) => {
        const body = await ok(http.rest.GET('/api/v1/markets', { params: { query: { offset, limit } } }));
        return { items: body.data.markets, total: body.data.total };
      }, { limit: o.pageSize ?? 100 }),
    /** The top of a market's book (its numeric id and address), kept from the REST snapshot and `/ws`. */
    book: (market: { marketId: string | number; address: string }) =>
      keepBook(live, async () => ok(http.rest.GET('/api/v1/orderbook/top', { params: { query: { market: market.address } } })), market.marketId),
    /** `/tx/*`: build, check (the SDK's instruction check unless `check`), sign, send (`rpcUrl`: the chain's JSON-RPC; `program`: the tenant's). */
    tx: (o: { rpcUrl: string; program?: string; check?: TxCheck }) => {
      if (!options.signer) throw new TypeError('transactions need a signer');
      return createTxClient({ rest: http, signer: options.signer, rpcUrl: o.rpcUrl, program: o.program, check: o.check, fetch: options.fetch });
    },
    close: () => live.close(),
  };
}
export type MarketClient = ReturnType<typeof createMarketClient>;
