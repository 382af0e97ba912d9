import { base58 } from '@scure/base';
import fc from 'fast-check';
import { decodeBase58 } from '../../core/events/base58';

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

describe('decodeBase58', () => {
  it('decodes what @scure/base encodes, leading zero bytes and every length up to 400 bytes included', () => {
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 400 }),
      fc.tuple(fc.integer({ min: 1, max: 5 }), fc.uint8Array({ maxLength: 40 })).map(([z, b]) => Uint8Array.from([...new Array<number>(z).fill(0), ...b])),
    );
    fc.assert(
      fc.property(bytes, (b) => {
        expect(decodeBase58(base58.encode(b))).toEqual(b);
      }),
      { numRuns: 2_000 },
    );
  });

  it('agrees with @scure/base on any string of the alphabet', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...ALPHABET), maxLength: 120 }), (s) => {
        expect(decodeBase58(s)).toEqual(base58.decode(s));
      }),
      { numRuns: 2_000 },
    );
  });

  it('refuses characters outside the alphabet (0, O, I, l, non-ASCII) where @scure/base throws', () => {
    for (const s of ['0', 'O', 'I', 'l', '11x0', 'abc é', '+', ' 2']) {
      expect(decodeBase58(s)).toBeUndefined();
      expect(() => base58.decode(s)).toThrow();
    }
  });

  it('decodes the empty string and all-ones as zero bytes', () => {
    expect(decodeBase58('')).toEqual(new Uint8Array());
    expect(decodeBase58('111')).toEqual(new Uint8Array(3));
  });
});
