import { createHash } from 'node:crypto';
import bs58 from 'bs58';
import fc from 'fast-check';
import {
  anchorEventDiscriminator,
  decodeEvent,
  decodeEventWithCodecs,
  encodeEvent,
  EventDecodeError,
  EVENT_IX_TAG,
  EVENT_KINDS,
  IDL,
  type EventKind,
  type ProgramEvent,
} from '../../core/events';
import { eventArbitraries } from '../support/event-arbitraries';

describe('program IDL', () => {
  it('declares every event kind once, with a struct type of the same name', () => {
    expect(IDL.events.map((e) => e.name).sort()).toEqual([...EVENT_KINDS].sort());
    for (const e of IDL.events) expect(IDL.types.filter((t) => t.name === e.name)).toHaveLength(1);
  });

  it("uses Anchor's discriminator rule sha256('event:<Name>')[0..8]", () => {
    for (const e of IDL.events) {
      expect(Buffer.from(e.discriminator).toString('hex')).toBe(Buffer.from(anchorEventDiscriminator(e.name)).toString('hex'));
    }
  });

  it("uses Anchor's emit_cpi tag: the u64 sha256('anchor:event')[0..8] written little-endian", () => {
    const hash = createHash('sha256').update('anchor:event').digest().subarray(0, 8);
    expect(hash.readBigUInt64BE(0)).toBe(0x1d9acb512ea545e4n);
    expect(Buffer.from(EVENT_IX_TAG)).toEqual(Buffer.from(hash).reverse());
  });

  it('names a 32-byte base58 program id', () => {
    expect(IDL.address).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
  });
});

describe('event codec', () => {
  it.each(EVENT_KINDS as EventKind[])('round-trips %s over its whole value range', (kind) => {
    fc.assert(
      fc.property(eventArbitraries[kind] as fc.Arbitrary<unknown>, (data) => {
        const event = { kind, data } as ProgramEvent;
        const bytes = encodeEvent(event);
        expect(Buffer.from(bytes.subarray(0, 8))).toEqual(Buffer.from(anchorEventDiscriminator(kind)));
        expect(decodeEvent(bytes)).toEqual(event);
      }),
      { numRuns: 200 },
    );
  });

  it.each(EVENT_KINDS as EventKind[])('decodes %s exactly as the @solana/codecs decoder does', (kind) => {
    fc.assert(
      fc.property(eventArbitraries[kind] as fc.Arbitrary<unknown>, (data) => {
        const bytes = encodeEvent({ kind, data } as ProgramEvent);
        // A payload inside a larger buffer (as parsed transactions hand it over) reads the same.
        const padded = Buffer.concat([Buffer.from([7, 7, 7]), bytes, Buffer.from([9])]).subarray(3, 3 + bytes.length);
        expect(decodeEvent(padded)).toEqual(decodeEventWithCodecs(bytes));
      }),
      { numRuns: 200 },
    );
  });

  it('rejects an Option tag other than 0 or 1, as Borsh does', () => {
    const fill = encodeEvent({
      kind: 'OrderFilled',
      data: {
        market: '11111111111111111111111111111111', makerOrderId: 1n, takerOrderId: 2n,
        maker: '11111111111111111111111111111111', taker: '11111111111111111111111111111111',
        makerPosition: '11111111111111111111111111111111', takerPosition: '11111111111111111111111111111111',
        makerSide: 0, takerSide: 2, priceBps: 6000, quantity: 3n,
        takerFee: 10n, feeProtocol: 5n, feeCreator: 3n, feeReferral: 2n, protocolTreasuryIndex: 7, referrer: null,
      },
    });
    expect(decodeEvent(fill).kind).toBe('OrderFilled');
    for (const bad of [2, 255]) {
      const b = Buffer.from(fill);
      b[b.length - 1] = bad;
      expect(() => decodeEvent(b)).toThrow(new RegExp(`referrer: Option tag ${bad} is neither 0 nor 1`));
    }
  });

  it('lays out Borsh exactly: little-endian integers, Option tag byte', () => {
    const bytes = encodeEvent({
      kind: 'ReferralLocked',
      data: { wallet: '11111111111111111111111111111111', referrer: '11111111111111111111111111111112', expiresAt: -2n },
    });
    const body = Buffer.from(bytes.subarray(8));
    expect(body.length).toBe(32 + 32 + 8);
    expect(body.subarray(0, 32).equals(Buffer.alloc(32))).toBe(true);
    expect(body[63]).toBe(1);
    expect(body.readBigInt64LE(64)).toBe(-2n);

    const fill = (referrer: string | null) =>
      encodeEvent({
        kind: 'OrderFilled',
        data: {
          market: '11111111111111111111111111111111', makerOrderId: 1n, takerOrderId: 2n,
          maker: '11111111111111111111111111111111', taker: '11111111111111111111111111111111',
          makerPosition: '11111111111111111111111111111111', takerPosition: '11111111111111111111111111111111',
          makerSide: 0, takerSide: 2, priceBps: 6000, quantity: 2n ** 64n - 1n,
          takerFee: 10n, feeProtocol: 5n, feeCreator: 3n, feeReferral: 2n, protocolTreasuryIndex: 7, referrer,
        },
      });
    const none = fill(null);
    const some = fill('11111111111111111111111111111112');
    expect(none[none.length - 1]).toBe(0);
    expect(some.length).toBe(none.length + 32);
    expect(some[none.length - 1]).toBe(1);
  });

  it('decodes addresses that share their first bytes each as itself (the decoded-address memo)', () => {
    // The memo keys addresses by their first 31 bits: these collide there and differ after.
    const bytesOf = (last: number) => Uint8Array.from({ length: 32 }, (_, i) => (i < 4 ? 0xab : i === 31 ? last : i));
    const [a, b] = [bs58.encode(bytesOf(1)), bs58.encode(bytesOf(2))];
    const placed = (owner: string): ProgramEvent => ({
      kind: 'OrderPlaced',
      data: { market: IDL.address, orderId: 1n, owner, side: 0, priceBps: 5000, quantity: 1n, orderType: 0 },
    });
    for (const owner of [a, b, a, b]) expect(decodeEvent(encodeEvent(placed(owner)))).toEqual(placed(owner));
  });

  it('rejects an unknown discriminator with its own reason', () => {
    const bytes = Buffer.concat([Buffer.from('0102030405060708', 'hex'), Buffer.alloc(40)]);
    expect(() => decodeEvent(bytes)).toThrow(EventDecodeError);
    try {
      decodeEvent(bytes);
    } catch (err) {
      expect((err as EventDecodeError).reason).toBe('unknown_discriminator');
    }
  });

  it('rejects short payloads and trailing bytes as undecodable', () => {
    fc.assert(
      fc.property(fc.constantFrom(...(EVENT_KINDS as EventKind[])), fc.nat(), (kind, cut) => {
        const sample = fc.sample(eventArbitraries[kind] as fc.Arbitrary<unknown>, { numRuns: 1, seed: cut })[0];
        const bytes = encodeEvent({ kind, data: sample } as ProgramEvent);
        const short = bytes.subarray(0, 8 + (cut % (bytes.length - 8)));
        const expectUndecodable = (b: Uint8Array) => {
          try {
            decodeEvent(b);
            return false;
          } catch (err) {
            return err instanceof EventDecodeError && err.reason === 'undecodable';
          }
        };
        // A cut payload sends the decoder down the same path as the whole one, so it runs out of bytes.
        if (short.length < bytes.length) expect(expectUndecodable(short)).toBe(true);
        expect(expectUndecodable(Buffer.concat([bytes, Buffer.from([0])]))).toBe(true);
      }),
      { numRuns: 100 },
    );
    expect(() => decodeEvent(new Uint8Array(3))).toThrow('shorter than a discriminator');
  });
});
