import { MarketState } from '../../core/domain';
import type { SlotContext } from '../chain/chain';
import { addressOf } from '../ids';
import type { Market } from '../program/state';
import { PRICE_EXPO } from './prices';
import { sender, type Crowd, type Send } from './wallet';

const MAX_CONF_RATIO_BPS = 100;

/**
 * Markets through their lives, as the people around them act each slot: the keeper (each
 * market's creator, cranking it) opens a market per feed per epoch, starts it, settles it at
 * its end and resolves it on the end price; then the simulated holders redeem a few positions
 * per slot, the creator may claim its fees, and the market is closed. Every step is a
 * transaction of the program's instructions.
 */
export function createLifecycle(crowd: Crowd, epochSeconds: number): (slot: SlotContext) => void {
  const { rng, wallets, feeds, program } = crowd;
  /** `${feed}:${epoch}` of every market opened. */
  const opened = new Set<string>();
  /** Holders still to redeem, per resolved market; absent once done. */
  const redeemQueues = new Map<string, string[]>();

  function open(send: Send, t: number): void {
    const E = epochSeconds;
    feeds.forEach((feed, f) => {
      const epoch = Math.floor(t / E);
      for (const e of [epoch, epoch + 1]) {
        const key = `${f}:${e}`;
        if (opened.has(key) || (e + 1) * E <= t) continue;
        opened.add(key);
        const market = addressOf(`market:${crowd.programId}:${f}:${e}`);
        const creator = wallets[f % wallets.length]!;
        crowd.marketFeed.set(market, f);
        send('initialize_market', creator, { creator, market, settlement_mint: crowd.mints[f % crowd.mints.length]! }, {
          marketId: BigInt(e),
          oracleFeed: f % 3 === 2 ? null : feed.address,
          oracleFeedId: feed.feedId,
          durationSeconds: BigInt(E),
          tStart: BigInt(e * E),
          tEnd: BigInt((e + 1) * E),
          maxConfidenceRatioBps: MAX_CONF_RATIO_BPS,
        });
      }
    });
  }

  const accountsOf = (m: Readonly<Market>) => ({ creator: m.creator, market: m.address });
  const feedOf = (m: Readonly<Market>) => feeds[crowd.marketFeed.get(m.address)!]!;

  /** Moves a market one step along its life when its time has come. */
  function advance(send: Send, m: Readonly<Market>, t: number): void {
    switch (m.state) {
      case MarketState.Pending:
      case MarketState.Closed:
        return;
      case MarketState.Created:
        if (t >= m.tStart) {
          const { price } = feedOf(m);
          send('start_trading', m.creator, accountsOf(m), { startPrice: price, startPriceConf: price / 5000n, startPriceExpo: PRICE_EXPO, publishTime: BigInt(t) });
        }
        return;
      case MarketState.Trading:
        if (t >= m.tEnd) send('settle_market', m.creator, accountsOf(m), {});
        return;
      case MarketState.Settling:
        if (t >= m.tEnd + 2) {
          const { price } = feedOf(m);
          // Now and then the oracle's confidence at the end is too wide: the market is void.
          const conf = rng.chance(0.04) ? price / 20n : price / 5000n;
          redeemQueues.set(m.address, [...m.positions.keys()].filter((w) => crowd.walletSet.has(w)));
          send('resolve_market', m.creator, accountsOf(m), { endPrice: price, endPriceConf: conf, endPriceExpo: PRICE_EXPO, publishTime: BigInt(t) });
        }
        return;
      case MarketState.Resolved:
        if (redeemQueues.has(m.address)) redeemSome(send, m);
        return;
      default: {
        const never: never = m.state;
        throw new Error(`unknown market state ${String(never)}`);
      }
    }
  }

  /** Holders redeem up to four positions per slot; then the creator may claim, and the market closes. */
  function redeemSome(send: Send, m: Readonly<Market>): void {
    // Holders who already claimed on their own (their claim_payout over RPC) are done.
    const queue = redeemQueues.get(m.address)!.filter((w) => !m.positions.get(w)!.settled);
    for (let i = 0; i < 4 && queue.length; i++) {
      const owner = queue.shift()!;
      send('claim_payout', owner, { owner, market: m.address, settlement_mint: m.mint }, {});
    }
    redeemQueues.set(m.address, queue);
    if (queue.length) return;
    redeemQueues.delete(m.address);
    if (m.creatorFees > 0n && rng.chance(0.7)) {
      send('claim_creator_fees', m.creator, { caller: m.creator, market: m.address, creator: m.creator, settlement_mint: m.mint }, {});
    }
    if (rng.chance(0.8)) send('close_market', m.creator, { creator: m.creator, market: m.address }, {});
  }

  return (slot) => {
    const send = sender(crowd, slot);
    open(send, slot.blockTime);
    for (const m of program.markets.values()) advance(send, m, slot.blockTime);
  };
}
