import { decodeBase58, encodeBase58 } from './base58';

// WebCrypto's types, named so that the same source compiles with the DOM library or Node's alone.
type Subtle = (typeof globalThis.crypto)['subtle'];
type Key = Awaited<ReturnType<Subtle['importKey']>>;

/**
 * Who signs (D-525): anything with a base58 public key and `signMessage(bytes)` (a browser
 * wallet adapter has exactly this shape), so the SDK never holds a key it was not given.
 */
export interface Signer {
  /** The wallet's address: its base58 Ed25519 public key. */
  readonly publicKey: string;
  /** The Ed25519 signature (64 bytes) over exactly these bytes. */
  signMessage(message: Uint8Array): Promise<Uint8Array>;
}

// PKCS#8 wrapping of a raw 32-byte Ed25519 seed (RFC 8410): WebCrypto imports private keys only so.
const PKCS8_PREFIX = Uint8Array.from([0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20]);

function subtle(): Subtle {
  const s = globalThis.crypto?.subtle;
  if (!s) throw new Error('WebCrypto (crypto.subtle) is not available: use a secure context (https or localhost) or pass your own signer');
  return s;
}

/**
 * A signer from a Solana secret key (64 bytes: seed then public key, as `solana-keygen` writes
 * it) or a 32-byte seed, with WebCrypto's Ed25519: the same code in Node 20 and browsers.
 */
export async function createKeypairSigner(secretKey: Uint8Array): Promise<Signer> {
  if (secretKey.length !== 64 && secretKey.length !== 32) throw new TypeError(`an Ed25519 secret key is 64 bytes (or a 32-byte seed), not ${secretKey.length}`);
  const seed = secretKey.slice(0, 32);
  const pkcs8 = new Uint8Array(PKCS8_PREFIX.length + 32);
  pkcs8.set(PKCS8_PREFIX);
  pkcs8.set(seed, PKCS8_PREFIX.length);
  const key = await subtle().importKey('pkcs8', pkcs8, { name: 'Ed25519' }, true, ['sign']);
  const jwk = await subtle().exportKey('jwk', key);
  const publicKey = encodeBase58(fromBase64Url(jwk.x!));
  if (secretKey.length === 64 && encodeBase58(secretKey.slice(32)) !== publicKey) throw new TypeError('the secret key\'s last 32 bytes are not the public key of its seed');
  return createWebCryptoSigner(key, publicKey);
}

/** A new random keypair (WebCrypto), e.g. for a test or a session key. */
export async function generateSigner(): Promise<Signer & { secretKey: Uint8Array }> {
  const seed = globalThis.crypto.getRandomValues(new Uint8Array(32));
  const signer = await createKeypairSigner(seed);
  const secretKey = new Uint8Array(64);
  secretKey.set(seed);
  secretKey.set(decodeBase58(signer.publicKey), 32);
  return Object.assign(signer, { secretKey });
}

/** A signer over a WebCrypto Ed25519 private key (one that need not be extractable). */
export function createWebCryptoSigner(privateKey: Key, publicKey: string): Signer {
  return {
    publicKey,
    signMessage: async (message) => new Uint8Array(await subtle().sign({ name: 'Ed25519' }, privateKey, message as Uint8Array<ArrayBuffer>)),
  };
}

function fromBase64Url(s: string): Uint8Array {
  const b64 = s.replace(/-/g, '+').replace(/_/g, '/');
  const bin = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}
