import { createPrivateKey, createPublicKey, sign } from 'node:crypto';
import fc from 'fast-check';
import nacl from 'tweetnacl';
import { keyPairFromSeed, signEd25519, verifyEd25519 } from '../../core/ed25519';

/** A key pair from a 32-byte seed (node:crypto signs fast; tweetnacl is the reference verifier). */
function keyPair(seed: Uint8Array) {
  const privateKey = createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]), format: 'der', type: 'pkcs8' });
  const publicKey = Buffer.from(createPublicKey(privateKey).export({ format: 'jwk' }).x!, 'base64url');
  return { publicKey, sign: (m: Uint8Array) => sign(null, m, privateKey) };
}

describe('Ed25519 through node:crypto (D-77, D-446)', () => {
  it('accepts valid signatures and, like tweetnacl, refuses any altered message, signature or key', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.uint8Array({ maxLength: 300 }),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        fc.constantFrom('message', 'signature', 'key'),
        (seed, message, at, flip, what) => {
          const kp = keyPair(seed);
          const sig = kp.sign(message);
          expect(verifyEd25519(message, sig, kp.publicKey)).toBe(true);
          const m = Buffer.from(message);
          const s = Buffer.from(sig);
          const k = Buffer.from(kp.publicKey);
          const target = what === 'message' ? m : what === 'signature' ? s : k;
          if (target.length === 0) return;
          target[at % target.length]! ^= flip;
          expect(nacl.sign.detached.verify(m, s, k)).toBe(false);
          expect(verifyEd25519(m, s, k)).toBe(false);
        },
      ),
      // tweetnacl takes 10-100 ms a verification on this machine: a few dozen cases.
      { numRuns: 30 },
    );
  });

  it('accepts what tweetnacl signs (what wallets and the test clients use)', () => {
    const kp = nacl.sign.keyPair.fromSeed(new Uint8Array(32).fill(7));
    for (const text of ['', '{"domain":"localhost","action":"GET /stats","nonce":"0123456789"}', 'x'.repeat(4096)]) {
      const m = Buffer.from(text);
      expect(verifyEd25519(m, nacl.sign.detached(m, kp.secretKey), kp.publicKey)).toBe(true);
    }
  });

  it('answers false, never throws, for keys and signatures that do not decode', () => {
    const kp = nacl.sign.keyPair();
    const msg = Buffer.from('{"a":1}');
    const sig = nacl.sign.detached(msg, kp.secretKey);
    for (const key of [new Uint8Array(32), new Uint8Array(32).fill(0xff), new Uint8Array(31), new Uint8Array(33)]) {
      expect(verifyEd25519(msg, sig, key)).toBe(false);
    }
    expect(verifyEd25519(msg, sig.subarray(0, 63), kp.publicKey)).toBe(false);
    expect(verifyEd25519(msg, new Uint8Array(64).fill(0xff), kp.publicKey)).toBe(false);
  });

  it('derives the key pair and signs exactly as tweetnacl does (Ed25519 is deterministic)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.uint8Array({ maxLength: 300 }), (seed, message) => {
        const ours = keyPairFromSeed(seed);
        const reference = nacl.sign.keyPair.fromSeed(seed);
        expect(Buffer.from(ours.publicKey).toString('hex')).toBe(Buffer.from(reference.publicKey).toString('hex'));
        expect(Buffer.from(ours.secretKey).toString('hex')).toBe(Buffer.from(reference.secretKey).toString('hex'));
        // From the 64-byte secret key and from the seed alone alike.
        const expected = Buffer.from(nacl.sign.detached(message, reference.secretKey)).toString('hex');
        expect(Buffer.from(signEd25519(message, reference.secretKey)).toString('hex')).toBe(expected);
        expect(Buffer.from(signEd25519(message, seed)).toString('hex')).toBe(expected);
      }),
      { numRuns: 30 },
    );
  });

  it('refuses a secret key that is neither a seed nor a secret key, naming its length', () => {
    expect(() => signEd25519(Buffer.from('x'), new Uint8Array(31))).toThrow('an Ed25519 secret key is 32 or 64 bytes, not 31');
  });
});
