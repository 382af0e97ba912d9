import { createPublicKey, randomBytes, verify } from 'node:crypto';
import bs58 from 'bs58';
import { loadConfig } from '../../core/config';
import { keyPairFromSeed, publicKeyProblem, signEd25519, verifyEd25519 } from '../../core/ed25519';

/** Public keys of small order and non-canonical encodings are refused, in verification and in configuration (D-452). */
const P = (1n << 255n) - 19n;
const Y8 = 0x05fc536d880238b13933c6d305acdfd5f098eff289f4c345b027b2c28f95e826n;
/** The 32-byte little-endian encoding of y, with the x sign bit. */
const encode = (y: bigint, xSign = false) => {
  const b = new Uint8Array(32);
  for (let i = 0; i < 32; i++) b[i] = Number((y >> BigInt(8 * i)) & 0xffn);
  if (xSign) b[31]! |= 0x80;
  return b;
};
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

/** The eight points of small order, canonically encoded (x = 0 for y = ±1, so one sign only). */
const SMALL_ORDER = [
  ['identity (order 1)', encode(1n)],
  ['order 2', encode(P - 1n)],
  ['order 4', encode(0n)],
  ['order 4, x negated', encode(0n, true)],
  ['order 8', encode(Y8)],
  ['order 8, x negated', encode(Y8, true)],
  ['order 8, y negated', encode(P - Y8)],
  ['order 8, both negated', encode(P - Y8, true)],
] as const;
/** Encodings no canonical encoder produces: y + p for y < 19, and x = 0 with its sign bit set. */
const NON_CANONICAL = [
  ['identity as y = p + 1', encode(P + 1n)],
  ['order 4 as y = p', encode(P)],
  ['identity with the sign bit', encode(1n, true)],
  ['order 2 with the sign bit', encode(P - 1n, true)],
  ['y = p + 18, sign bit', encode(P + 18n, true)],
  ['y = 2^255 - 1', encode((1n << 255n) - 1n)],
] as const;
/** R = the identity, S = 0: [S]B = R + [k]A holds whenever [k]A is the identity. */
const FIXED_SIGNATURE = new Uint8Array([...encode(1n), ...new Uint8Array(32)]);
const spki = (key: Uint8Array) => createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), key]), format: 'der', type: 'spki' });
const messages = Array.from({ length: 40 }, (_, i) => new TextEncoder().encode(`message ${i}`));

describe('Ed25519 public keys of small order', () => {
  it.each(SMALL_ORDER)('%s is refused: publicKeyProblem says so, and no signature verifies', (_name, key) => {
    expect(publicKeyProblem(key)).toBe('is a point of small order');
    for (const m of messages) expect(verifyEd25519(m, FIXED_SIGNATURE, key)).toBe(false);
  });

  it.each(NON_CANONICAL)('%s is refused as not canonical', (_name, key) => {
    expect(publicKeyProblem(key)).toBe('is not a canonical encoding of a point');
    for (const m of messages.slice(0, 4)) expect(verifyEd25519(m, FIXED_SIGNATURE, key)).toBe(false);
  });

  it("OpenSSL alone accepts the fixed signature for the identity (every message) and the all-zero key (some): what the check is for", () => {
    const identity = spki(encode(1n));
    expect(messages.every((m) => verify(null, m, identity, FIXED_SIGNATURE))).toBe(true);
    const zero = spki(bs58.decode('11111111111111111111111111111111'));
    expect(messages.filter((m) => verify(null, m, zero, FIXED_SIGNATURE)).length).toBeGreaterThan(0);
  });

  it('ordinary keys pass the check and verify their signatures', () => {
    for (let i = 0; i < 200; i++) {
      const { publicKey, secretKey } = keyPairFromSeed(randomBytes(32));
      expect(publicKeyProblem(publicKey)).toBeUndefined();
      if (i < 5) expect(verifyEd25519(messages[i]!, signEd25519(messages[i]!, secretKey), publicKey)).toBe(true);
    }
  });

  it('ADMIN_WALLETS refuses such a key, naming the setting and the address', () => {
    const good = bs58.encode(keyPairFromSeed(randomBytes(32)).publicKey);
    expect(loadConfig({ ADMIN_WALLETS: good }).adminWallets).toEqual([good]);
    expect(() => loadConfig({ ADMIN_WALLETS: `${good},11111111111111111111111111111111` })).toThrow(
      'Invalid configuration: ADMIN_WALLETS: 11111111111111111111111111111111 is a point of small order, not a wallet\'s key',
    );
    const identity = bs58.encode(encode(1n));
    expect(() => loadConfig({ ADMIN_WALLETS: identity })).toThrow(`ADMIN_WALLETS: ${identity} is a point of small order`);
    const nonCanonical = bs58.encode(encode(P + 1n));
    expect(() => loadConfig({ ADMIN_WALLETS: nonCanonical })).toThrow(`ADMIN_WALLETS: ${nonCanonical} is not a canonical encoding of a point`);
    // 32 to 44 base58 digits need not be 32 bytes.
    expect(() => loadConfig({ ADMIN_WALLETS: 'z'.repeat(44) })).toThrow('ADMIN_WALLETS: ' + 'z'.repeat(44) + ' is 33 bytes, not 32');
    expect(hex(bs58.decode('11111111111111111111111111111111'))).toBe('00'.repeat(32));
  });
});
