import { createPublicKey, verify, type KeyObject } from 'node:crypto';

/** Checks an Ed25519 signature over `message` by the raw 32-byte `publicKey`. */
export type SignatureVerifier = (message: Uint8Array, signature: Uint8Array, publicKey: Uint8Array) => boolean;

/**
 * The DER header of an Ed25519 SubjectPublicKeyInfo (RFC 8410): SEQUENCE { SEQUENCE { OID
 * 1.3.101.112 }, BIT STRING (33 bytes, no unused bits) }. Followed by the raw 32-byte key, it is
 * the SPKI form OpenSSL takes.
 */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/**
 * Key objects of wallets that signed correctly, most recently used last: building one costs
 * about as much as the verification itself. Only keys that verified a signature get in, so
 * made-up keys (bounded anyway by the pre-authentication budget) cannot churn it.
 */
const KEY_CACHE_SIZE = 10_000;
const keyCache = new Map<string, KeyObject>();

/**
 * Ed25519 verification by OpenSSL through `node:crypto` (decision D-77): about 0.1–0.3 ms a
 * call here, where tweetnacl's pure-JavaScript `sign.detached.verify` took 9–15 ms. A key or
 * signature OpenSSL refuses to decode is a failed verification, never an exception.
 */
export const verifyEd25519: SignatureVerifier = (message, signature, publicKey) => {
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  const id = Buffer.from(publicKey.buffer, publicKey.byteOffset, publicKey.length).toString('latin1');
  try {
    const cached = keyCache.get(id);
    const key = cached ?? createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, publicKey]), format: 'der', type: 'spki' });
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
