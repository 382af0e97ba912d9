/**
 * The live-channel contract (spec 6, decision D-21): the channel kinds, how a channel is named,
 * and what each kind's updates carry. The indexer builds its messages with these, `/ws` parses
 * subscriptions with them, and the hot-read cache listens to them; `asyncapi.yaml` documents them.
 */
export const CHANNEL_KINDS = ['market', 'orderbook', 'positions'] as const;
export type ChannelKind = (typeof CHANNEL_KINDS)[number];

/** `market:{marketId}`, `orderbook:{marketId}`, `positions:{wallet}`. */
export const channelName = (kind: ChannelKind, key: string): string => `${kind}:${key}`;

/** The bus pattern matching every channel of one kind (`market:*`). */
export const channelPattern = (kind: ChannelKind): string => `${kind}:*`;

/** A channel name's kind and key, or undefined when its prefix names no kind. */
export function splitChannel(name: string): { kind: ChannelKind; key: string } | undefined {
  const colon = name.indexOf(':');
  const kind = colon > 0 ? name.slice(0, colon) : '';
  return (CHANNEL_KINDS as readonly string[]).includes(kind) ? { kind: kind as ChannelKind, key: name.slice(colon + 1) } : undefined;
}

/** The market fields whose changes `market:{marketId}` carries, one update per field (D-21). */
export const PUBLISHED_MARKET_FIELDS = [
  'state',
  'outcome',
  'startPrice',
  'endPrice',
  'totalVolume',
  'totalTrades',
  'totalPositions',
  'totalYesShares',
  'totalNoShares',
  'bestBid',
  'bestAsk',
] as const;
export type PublishedMarketField = (typeof PUBLISHED_MARKET_FIELDS)[number];

/**
 * The `data` of each kind's updates; amounts as decimal strings, as on the REST side. (Type
 * aliases, not interfaces, so a payload is also a plain record for the update log.)
 */
export type LivePayloads = {
  market: { marketId: string; field: PublishedMarketField; value: unknown };
  orderbook: { marketId: string; bestBid: number | null; bestAsk: number | null };
  positions: { marketId: string; owner: string; yesShares: string; noShares: string };
};

/** One update of one channel, as the indexer hands it to the update log (core/redis/updates.ts). */
export interface LiveUpdate<K extends ChannelKind = ChannelKind> {
  channel: string;
  /** Highest slot the change reflects. */
  slot: number;
  data: LivePayloads[K];
}

/** An update of the channel of `kind` named by `key`, its payload checked against the kind. */
export const liveUpdate = <K extends ChannelKind>(kind: K, key: string, slot: number, data: LivePayloads[K]): LiveUpdate<K> => ({
  channel: channelName(kind, key),
  slot,
  data,
});
