import { hexOf, addressOf } from '../ids';
import { SimulatedPythFeed } from './pyth';
import type { Random } from './random';

const FEED_BASE_PRICES = [10_000_000_000_000n, 300_000_000_000n, 15_000_000_000n];
export const PRICE_EXPO = -8;

/** An asset's price as the world moves it, and the Pyth price account its publishers keep on the chain. */
export interface PriceFeed {
  address: string;
  feedId: string;
  price: bigint;
  oracle: SimulatedPythFeed;
}

export function createPriceFeeds(seed: number, count: number): PriceFeed[] {
  return Array.from({ length: count }, (_, f) => {
    const address = addressOf(`feed:${f}`);
    return {
      address,
      feedId: hexOf(`feed-id:${f}`),
      price: FEED_BASE_PRICES[f % FEED_BASE_PRICES.length]!,
      oracle: new SimulatedPythFeed(address, (seed ^ 0x5eed) + f * 7919, PRICE_EXPO),
    };
  });
}

/** Each slot: every price takes a random step (±300 ppm) and the publishers put it on chain. */
export function walkPrices(feeds: readonly PriceFeed[], rng: Random, slot: number, blockTime: number): void {
  for (const feed of feeds) {
    const r = BigInt(rng.int(-300, 300));
    feed.price += (feed.price * r) / 1_000_000n;
    feed.oracle.publish(slot, blockTime, feed.price);
  }
}
