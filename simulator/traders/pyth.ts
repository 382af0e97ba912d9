import prand from 'pure-rand';
import {
  emptyComponent,
  encodePythPriceAccount,
  PYTH_ACCOUNT_TYPE_PRICE,
  PYTH_COMPONENTS,
  PYTH_MAGIC,
  PYTH_PRICE_ACCOUNT_SIZE,
  PYTH_VERSION,
  PythStatus,
  ZERO_ADDRESS,
  type PythPriceAccount,
} from '../../core/oracle/pyth';
import type { AccountSnapshot } from '../chain/types';
import { addressOf } from '../ids';

/** The Pyth oracle program on mainnet: the owner of every price account it publishes. */
export const PYTH_PROGRAM_ID = 'FsJ3A3u2vn5cTVofAjvy6y5kwABJAqYWpe4975bi2epH';

const PUBLISHERS = 3;
/** Pyth's EMA window, about an hour of slots. */
const EMA_SLOTS = 5921n;

/**
 * One feed's Pyth v2 price account as the oracle program would keep it. Each slot the
 * publishers quote around the simulator's price path (`prices.ts`: a random walk) and
 * the aggregate is their median with a confidence that widens and narrows; now and then no
 * publisher lands in a slot and the aggregate stays as it was (same `pub_slot`), as on the
 * real network. The randomness here is its own generator, so the chain's events do not depend
 * on whether anyone reads the accounts.
 */
export class SimulatedPythFeed {
  private readonly rng: prand.RandomGenerator;
  private readonly publishers: string[];
  private account: PythPriceAccount;
  private encoded: { slot: number; data: Uint8Array } | undefined;
  private writtenAt = 0;
  /** Confidence in parts per million of the price: drifts between 20 and 200. */
  private confPpm = 60;

  constructor(
    readonly address: string,
    seed: number,
    expo: number,
  ) {
    this.rng = prand.xoroshiro128plus(seed);
    this.publishers = Array.from({ length: PUBLISHERS }, (_, i) => addressOf(`pyth-publisher:${address}:${i}`));
    const comp = Array.from({ length: PYTH_COMPONENTS }, emptyComponent);
    this.publishers.forEach((p, i) => (comp[i]!.publisher = p));
    this.account = {
      magic: PYTH_MAGIC,
      ver: PYTH_VERSION,
      atype: PYTH_ACCOUNT_TYPE_PRICE,
      size: PYTH_PRICE_ACCOUNT_SIZE,
      ptype: 1,
      expo,
      num: PUBLISHERS,
      numQt: 0,
      lastSlot: 0n,
      validSlot: 0n,
      emaPrice: { val: 0n, numer: 0n, denom: 1n },
      emaConf: { val: 0n, numer: 0n, denom: 1n },
      timestamp: 0n,
      minPub: 1,
      drv2: 0,
      drv3: 0,
      drv4: 0,
      prod: addressOf(`pyth-product:${address}`),
      next: ZERO_ADDRESS,
      prevSlot: 0n,
      prevPrice: 0n,
      prevConf: 0n,
      prevTimestamp: 0n,
      agg: { price: 0n, conf: 0n, status: PythStatus.Unknown, corpAct: 0, pubSlot: 0n },
      comp,
    };
  }

  private int(min: number, max: number): number {
    return prand.unsafeUniformIntDistribution(min, max, this.rng);
  }

  /** The publishers' quotes for `slot` around `price`, aggregated; skipped now and then. */
  publish(slot: number, unixTime: number, price: bigint): void {
    const a = this.account;
    a.lastSlot = BigInt(slot);
    this.writtenAt = slot;
    this.encoded = undefined;
    if (a.agg.pubSlot > 0n && this.int(0, 99) < 8) return; // no publisher landed this slot
    this.confPpm = Math.min(200, Math.max(20, this.confPpm + this.int(-4, 4)));
    const conf = (price * BigInt(this.confPpm)) / 1_000_000n;
    const quotes: bigint[] = [];
    this.publishers.forEach((_, i) => {
      const q = price + (conf * BigInt(this.int(-1000, 1000))) / 1000n;
      const info = { price: q, conf, status: PythStatus.Trading, corpAct: 0, pubSlot: BigInt(slot) };
      a.comp[i]!.latest = info;
      a.comp[i]!.agg = { ...info };
      quotes.push(q);
    });
    quotes.sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
    const median = quotes[Math.floor(quotes.length / 2)]!;
    if (a.agg.pubSlot > 0n) {
      a.prevSlot = a.agg.pubSlot;
      a.prevPrice = a.agg.price;
      a.prevConf = a.agg.conf;
      a.prevTimestamp = a.timestamp;
    }
    a.agg = { price: median, conf, status: PythStatus.Trading, corpAct: 0, pubSlot: BigInt(slot) };
    a.validSlot = BigInt(slot);
    a.numQt = PUBLISHERS;
    a.timestamp = BigInt(unixTime);
    const ema = a.emaPrice.val === 0n ? median : a.emaPrice.val + ((median - a.emaPrice.val) * 2n) / (EMA_SLOTS + 1n);
    const emaConf = a.emaConf.val === 0n ? conf : a.emaConf.val + ((conf - a.emaConf.val) * 2n) / (EMA_SLOTS + 1n);
    a.emaPrice = { val: ema, numer: ema, denom: 1n };
    a.emaConf = { val: emaConf, numer: emaConf, denom: 1n };
  }

  /** The account as `getAccountInfo` would return it now; null before its first publish. */
  snapshot(): AccountSnapshot | null {
    if (this.account.agg.pubSlot === 0n) return null;
    this.encoded ??= { slot: this.writtenAt, data: encodePythPriceAccount(this.account) };
    // Rent-exempt minimum for 3,312 bytes.
    return { data: this.encoded.data, owner: PYTH_PROGRAM_ID, lamports: 23_942_400, slot: this.writtenAt };
  }
}
