import bs58 from 'bs58';
import {
  decodePythPriceAccount,
  emptyComponent,
  encodePythPriceAccount,
  formatScaled,
  OracleDecodeError,
  PYTH_PRICE_ACCOUNT_SIZE,
  PythStatus,
  ZERO_ADDRESS,
  type PythPriceAccount,
} from '../../core/oracle/pyth';

/**
 * A price account written byte by byte at the offsets of pyth-sdk-solana's `PriceAccount`
 * (not through the codec), so a field out of place in the codec fails here.
 */
function handBuilt(): { bytes: Uint8Array; prod: string; publisher: string } {
  const buf = Buffer.alloc(PYTH_PRICE_ACCOUNT_SIZE);
  const prod = Buffer.alloc(32, 7);
  const publisher = Buffer.alloc(32, 9);
  buf.writeUInt32LE(0xa1b2c3d4, 0);
  buf.writeUInt32LE(2, 4);
  buf.writeUInt32LE(3, 8);
  buf.writeUInt32LE(PYTH_PRICE_ACCOUNT_SIZE, 12);
  buf.writeUInt32LE(1, 16);
  buf.writeInt32LE(-8, 20);
  buf.writeUInt32LE(1, 24);
  buf.writeUInt32LE(1, 28);
  buf.writeBigUInt64LE(1_001n, 32); // last_slot
  buf.writeBigUInt64LE(1_000n, 40); // valid_slot
  buf.writeBigInt64LE(6_500_000_000_000n, 48); // ema_price.val
  buf.writeBigInt64LE(13n, 56);
  buf.writeBigInt64LE(17n, 64);
  buf.writeBigInt64LE(1_300_000_000n, 72); // ema_conf.val
  buf.writeBigInt64LE(1_767_225_600n, 96); // timestamp
  buf.writeUInt8(3, 104); // min_pub
  prod.copy(buf, 112);
  buf.writeBigUInt64LE(999n, 176); // prev_slot
  buf.writeBigInt64LE(-12n, 184); // prev_price (negative prices exist: spreads)
  buf.writeBigUInt64LE(4n, 192);
  buf.writeBigInt64LE(1_767_225_599n, 200);
  buf.writeBigInt64LE(6_543_210_987_654n, 208); // agg.price
  buf.writeBigUInt64LE(1_234_567n, 216); // agg.conf
  buf.writeUInt32LE(1, 224); // agg.status Trading
  buf.writeUInt32LE(0, 228);
  buf.writeBigUInt64LE(1_000n, 232); // agg.pub_slot
  publisher.copy(buf, 240); // comp[0].publisher
  buf.writeBigInt64LE(6_543_210_000_000n, 272); // comp[0].agg.price
  buf.writeBigUInt64LE(2_000_000n, 280);
  buf.writeUInt32LE(1, 288);
  buf.writeBigUInt64LE(1_000n, 296);
  buf.writeBigInt64LE(6_543_299_000_000n, 304); // comp[0].latest.price
  buf.writeBigUInt64LE(2_100_000n, 312);
  buf.writeUInt32LE(1, 320);
  buf.writeBigUInt64LE(1_001n, 328);
  buf.writeBigInt64LE(42n, 240 + 31 * 96 + 32); // comp[31].agg.price: the last component
  return { bytes: new Uint8Array(buf), prod: bs58.encode(prod), publisher: bs58.encode(publisher) };
}

describe('Pyth v2 price account codec', () => {
  it('is 3,312 bytes: a 240-byte header and 32 components of 96', () => {
    expect(PYTH_PRICE_ACCOUNT_SIZE).toBe(3312);
  });

  it('decodes every field of a hand-built account from its documented offset', () => {
    const { bytes, prod, publisher } = handBuilt();
    const a = decodePythPriceAccount(bytes);
    expect(a).toMatchObject({
      magic: 0xa1b2c3d4,
      ver: 2,
      atype: 3,
      size: 3312,
      ptype: 1,
      expo: -8,
      num: 1,
      numQt: 1,
      lastSlot: 1_001n,
      validSlot: 1_000n,
      emaPrice: { val: 6_500_000_000_000n, numer: 13n, denom: 17n },
      emaConf: { val: 1_300_000_000n, numer: 0n, denom: 0n },
      timestamp: 1_767_225_600n,
      minPub: 3,
      prod,
      next: ZERO_ADDRESS,
      prevSlot: 999n,
      prevPrice: -12n,
      prevConf: 4n,
      prevTimestamp: 1_767_225_599n,
      agg: { price: 6_543_210_987_654n, conf: 1_234_567n, status: PythStatus.Trading, corpAct: 0, pubSlot: 1_000n },
    });
    expect(a.comp).toHaveLength(32);
    expect(a.comp[0]).toEqual({
      publisher,
      agg: { price: 6_543_210_000_000n, conf: 2_000_000n, status: 1, corpAct: 0, pubSlot: 1_000n },
      latest: { price: 6_543_299_000_000n, conf: 2_100_000n, status: 1, corpAct: 0, pubSlot: 1_001n },
    });
    expect(a.comp[31]!.agg.price).toBe(42n);
  });

  it('encodes back to the same bytes', () => {
    const { bytes } = handBuilt();
    expect(Buffer.from(encodePythPriceAccount(decodePythPriceAccount(bytes)))).toEqual(Buffer.from(bytes));
  });

  it('round-trips an encoded account', () => {
    const account: PythPriceAccount = {
      ...decodePythPriceAccount(handBuilt().bytes),
      comp: Array.from({ length: 32 }, emptyComponent),
    };
    expect(decodePythPriceAccount(encodePythPriceAccount(account))).toEqual(account);
  });

  it('refuses what is not a v2 price account, naming why', () => {
    const { bytes } = handBuilt();
    const with32 = (offset: number, v: number) => {
      const b = Buffer.from(bytes);
      b.writeUInt32LE(v, offset);
      return new Uint8Array(b);
    };
    expect(() => decodePythPriceAccount(bytes.subarray(0, 3311))).toThrow(new OracleDecodeError('a Pyth price account is 3312 bytes, this one 3311'));
    expect(() => decodePythPriceAccount(with32(0, 0xdeadbeef))).toThrow(/magic 0xdeadbeef/);
    expect(() => decodePythPriceAccount(with32(4, 1))).toThrow(/version 1/);
    expect(() => decodePythPriceAccount(with32(8, 2))).toThrow(/type 2 is not a price account/);
  });

  it('ignores bytes past the struct (accounts allocated larger)', () => {
    const { bytes } = handBuilt();
    const larger = new Uint8Array(bytes.length + 64);
    larger.set(bytes);
    expect(decodePythPriceAccount(larger)).toEqual(decodePythPriceAccount(bytes));
  });
});

describe('formatScaled', () => {
  it.each([
    [6_543_210_987n, -8, '65.43210987'],
    [5n, -8, '0.00000005'],
    [-150n, -2, '-1.50'],
    [0n, -3, '0.000'],
    [12n, 2, '1200'],
  ])('%s × 10^%s is %s', (v, e, s) => {
    expect(formatScaled(v, e)).toBe(s);
  });
});
