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

/** A key or signature OpenSSL refuses to decode is a failed verification, never an exception. */
export const verifyEd25519: SignatureVerifier = (message, signature, publicKey) => {
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  const id = bytes(publicKey).toString('latin1');
  try {
    const cached = keyCache.get(id);
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
