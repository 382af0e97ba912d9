import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';

/**
 * Ed25519 by OpenSSL through `node:crypto` (D-77, D-446): about 0.1 ms a signature or a
 * verification, where tweetnacl's pure JavaScript takes 10–25 ms of the event loop. Keys are raw
 * bytes, as Solana and the wallet headers carry them: a 32-byte public key, and the 64-byte
 * secret key (seed then public key) that wallets and tweetnacl use.
 */

/** Checks an Ed25519 signature over `message` by the raw 32-byte `publicKey`. */
export type SignatureVerifier = (message: Uint8Array, signature: Uint8Array, publicKey: Uint8Array) => boolean;

/**
 * The DER headers OpenSSL takes raw keys under (RFC 8410): a SubjectPublicKeyInfo (SEQUENCE {
 * SEQUENCE { OID 1.3.101.112 }, BIT STRING of 33 bytes }) before a 32-byte public key, and a
 * PKCS #8 PrivateKeyInfo (version 0, the same OID, an OCTET STRING holding the 32-byte seed).
 */
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

const bytes = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.length);

/**
 * Key objects of public keys that verified a signature, most recently used last: building one
 * costs about as much as the verification itself. Only keys that verified get in, so made-up
 * keys (bounded anyway by the pre-authentication budget) cannot churn it.
 */
const KEY_CACHE_SIZE = 10_000;
const keyCache = new Map<string, KeyObject>();

/** The field's prime, 2^255 − 19: an encoded y-coordinate at or above it is not canonical. */
const FIELD_P = (1n << 255n) - 19n;
/** The y-coordinate of the order-8 points (with its negation, p − Y8, the other pair). */
const Y8 = 0x05fc536d880238b13933c6d305acdfd5f098eff289f4c345b027b2c28f95e826n;
/**
 * The y-coordinates of the eight points of small order (RFC 8032's cofactor 8): the identity
 * (y = 1), the point of order 2 (y = p − 1, x = 0), the two of order 4 (y = 0) and the four of
 * order 8 (y = ±Y8). Each x sign gives one point, so the set of y covers all eight.
 */
const SMALL_ORDER_Y = new Set([0n, 1n, FIELD_P - 1n, Y8, FIELD_P - Y8]);

/**
 * Why a 32-byte Ed25519 public key is not one to trust (D-452), or undefined: a non-canonical
 * encoding (y ≥ p, or x = 0 with its sign bit set) or a point of small order, for which a fixed
 * signature verifies many or all messages (the identity with R = identity, S = 0 verifies every
 * one). OpenSSL's verification (RFC 8032's, cofactorless) accepts both, so they are refused
 * here, before it; a key not on the curve at all OpenSSL refuses itself.
 */
export function publicKeyProblem(publicKey: Uint8Array): string | undefined {
  if (publicKey.length !== 32) return `is ${publicKey.length} bytes, not 32`;
  let y = 0n;
  for (let i = 31; i >= 0; i--) y = (y << 8n) | BigInt(i === 31 ? publicKey[i]! & 0x7f : publicKey[i]!);
  const xSign = (publicKey[31]! & 0x80) !== 0;
  if (y >= FIELD_P || (xSign && (y === 1n || y === FIELD_P - 1n))) return 'is not a canonical encoding of a point';
  if (SMALL_ORDER_Y.has(y)) return 'is a point of small order';
  return undefined;
}

/** A key or signature OpenSSL refuses to decode, or a key `publicKeyProblem` refuses, is a failed verification, never an exception. */
export const verifyEd25519: SignatureVerifier = (message, signature, publicKey) => {
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  const id = bytes(publicKey).toString('latin1');
  try {
    const cached = keyCache.get(id);
    // Only keys that verified are cached, so a cached one has passed this check.
    if (!cached && publicKeyProblem(publicKey)) return false;
    const key = cached ?? createPublicKey({ key: Buffer.concat([SPKI_PREFIX, publicKey]), format: 'der', type: 'spki' });
    const ok = verify(null, message, key, signature);
    if (ok) {
      keyCache.delete(id);
      keyCache.set(id, key);
      if (!cached && keyCache.size > KEY_CACHE_SIZE) keyCache.delete(keyCache.keys().next().value!);
    }
    return ok;
  } catch {
    return false;
  }
};

/** Signers' private key objects by their 64-byte secret key (a few wallets sign many times). */
const signers = new WeakMap<Uint8Array, KeyObject>();

/** The private key of a 32-byte seed, or of a 64-byte secret key (its first 32 bytes). */
const privateKeyOf = (secret: Uint8Array): KeyObject => {
  if (secret.length !== 32 && secret.length !== 64) throw new RangeError(`an Ed25519 secret key is 32 or 64 bytes, not ${secret.length}`);
  let key = signers.get(secret);
  if (!key) {
    key = createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, bytes(secret).subarray(0, 32)]), format: 'der', type: 'pkcs8' });
    signers.set(secret, key);
  }
  return key;
};

/** The 64-byte Ed25519 signature of `message` by a 64-byte secret key (or its 32-byte seed). */
export const signEd25519 = (message: Uint8Array, secretKey: Uint8Array): Uint8Array => new Uint8Array(sign(null, message, privateKeyOf(secretKey)));

/** The key pair of a 32-byte seed: its raw public key, and the 64-byte secret key (seed, public key). */
export function keyPairFromSeed(seed: Uint8Array): { publicKey: Uint8Array; secretKey: Uint8Array } {
  const spki = createPublicKey(privateKeyOf(seed)).export({ format: 'der', type: 'spki' });
  const publicKey = new Uint8Array(spki.subarray(SPKI_PREFIX.length));
  const secretKey = new Uint8Array(64);
  secretKey.set(seed.subarray(0, 32));
  secretKey.set(publicKey, 32);
  return { publicKey, secretKey };
}
