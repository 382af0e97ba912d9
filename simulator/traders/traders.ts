import { BPS_SCALE, isBuySide, MarketState, OrderType, Side } from '../../core/domain';
import type { SlotContext } from '../chain/chain';
import type { Market } from '../program/state';
import { sender, type Crowd, type Send } from './wallet';

/**
 * The simulated traders: in every trading market each slot, a few wallets place orders around
 * a fair price that follows the feed since the market started (buying, or selling what they
 * hold; limit, IOC or post-only) and now and then one cancels a resting order.
 */
export function createTraders(crowd: Crowd, ordersPerSlot: number): (slot: SlotContext) => void {
  const { rng, program } = crowd;

  const roundToTick = (p: number) => {
    const tick = program.tickSize;
    return Math.min(BPS_SCALE - tick, Math.max(tick, Math.round(p / tick) * tick));
  };

  function placeRandomOrder(send: Send, m: Readonly<Market>): void {
    const owner = rng.pick(crowd.wallets);
    const p = m.positions.get(owner);
    const feed = crowd.feeds[crowd.marketFeed.get(m.address)!]!;
    const retBps = Number(((feed.price - m.startPrice!) * 10_000n) / m.startPrice!);
    const fairYes = Math.min(9_800, Math.max(200, 5_000 + retBps * 40));
    const availYes = p ? p.yes - p.lockedYes : 0n;
    const availNo = p ? p.no - p.lockedNo : 0n;
    let side: Side;
    if (availYes > 0n && rng.chance(0.3)) side = Side.SellYes;
    else if (availNo > 0n && rng.chance(0.3)) side = Side.SellNo;
    else side = rng.chance(0.5) ? Side.BuyYes : Side.BuyNo;
    const fairOwn = side === Side.BuyYes || side === Side.SellYes ? fairYes : BPS_SCALE - fairYes;
    const aggressive = isBuySide(side) ? rng.int(-400, 250) : rng.int(-250, 400);
    const priceBps = roundToTick(fairOwn + (isBuySide(side) ? aggressive : -aggressive));
    let quantity = BigInt(rng.int(1, 50)) * 100_000n;
    if (side === Side.SellYes) quantity = quantity < availYes ? quantity : availYes;
    if (side === Side.SellNo) quantity = quantity < availNo ? quantity : availNo;
    if (quantity <= 0n) return;
    const roll = rng.int(0, 99);
    const orderType = roll < 85 ? OrderType.Limit : roll < 95 ? OrderType.ImmediateOrCancel : OrderType.PostOnly;
    send('place_order', owner, { owner, market: m.address, settlement_mint: m.mint }, { side, priceBps, quantity, orderType });
  }

  return (slot) => {
    const send = sender(crowd, slot);
    for (const m of program.markets.values()) {
      if (m.state !== MarketState.Trading) continue;
      const n = rng.int(0, Math.max(0, Math.round(ordersPerSlot * 2)));
      for (let i = 0; i < n; i++) placeRandomOrder(send, m);
      if (rng.chance(0.25)) {
        // Only simulated traders cancel at random; outside wallets send their own cancel_order.
        const resting = [...m.bids, ...m.asks].filter((o) => crowd.walletSet.has(o.owner));
        if (resting.length) {
          const o = rng.pick(resting);
          send('cancel_order', o.owner, { owner: o.owner, market: m.address }, { orderId: o.orderId });
        }
      }
    }
  };
}

/**
 * The rest of the crowd, now and then: the admin changes the fee configuration (sometimes to a
 * split that does not add up, which the program reports and ignores) or the tick size, a
 * wallet locks a referrer, a referrer claims its earnings.
 */
export function createHousekeeping(crowd: Crowd): (slot: SlotContext) => void {
  const { rng, wallets, program } = crowd;
  return (slot) => {
    const send = sender(crowd, slot);
    const admin = wallets[0]!;
    if (rng.chance(0.004)) {
      const invalid = rng.chance(0.1);
      const creator = rng.int(0, 3000);
      const referral = rng.int(0, 2000);
      const curve = { feeCapBps: rng.int(50, 300), decayRateBps: rng.int(100, 1000) };
      const split = { protocolShareBps: BPS_SCALE - creator - referral - (invalid ? 7 : 0), creatorShareBps: creator, referralShareBps: referral };
      send('set_fee_config', admin, { admin }, { ...curve, ...split });
    }
    if (rng.chance(0.003)) send('set_tick_size', admin, { admin }, { tickSizeBps: rng.pick([1, 5, 10, 25, 50, 100]) });
    if (rng.chance(0.03)) {
      const wallet = rng.pick(wallets);
      const referrer = rng.pick(wallets);
      if (wallet !== referrer) {
        const expiresAt = slot.blockTime + (rng.chance(0.1) ? 30 : 30 * 86_400);
        send('lock_referral', wallet, { owner: wallet }, { referrer, expiresAt: BigInt(expiresAt) });
      }
    }
    if (rng.chance(0.01)) {
      const withBalance = [...program.earnings.values()].filter((e) => e.accumulated > 0n);
      if (withBalance.length) {
        const e = rng.pick(withBalance);
        send('claim_referral', e.wallet, { referrer: e.wallet, settlement_mint: e.mint }, {});
      }
    }
  };
}
