import nacl from 'tweetnacl';
import { API_PREFIX } from './generated';

/**
 * Wallet signing of spec part 5, in k6 (tweetnacl is bundled in; k6 has no Ed25519). Keys come
 * from a seed of the run id, the VU and a label, so each VU signs as its own wallets and a
 * rerun with the same RUN_ID signs as the same ones; nonces are unique per process.
 */

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

export function base58(bytes: Uint8Array): string {
  const digits: number[] = [0];
  for (const byte of bytes) {
    let carry = byte;
    for (let i = 0; i < digits.length; i++) {
      carry += (digits[i] ?? 0) << 8;
      digits[i] = carry % 58;
      carry = Math.floor(carry / 58);
    }
    while (carry > 0) {
      digits.push(carry % 58);
      carry = Math.floor(carry / 58);
    }
  }
  let out = '';
  for (let i = 0; i < bytes.length && bytes[i] === 0; i++) out += '1';
  for (let i = digits.length - 1; i >= 0; i--) out += ALPHABET[digits[i] ?? 0];
  return out;
}

/** UTF-8 bytes of a string (k6 has no TextEncoder). */
export function utf8(s: string): Uint8Array {
  const out: number[] = [];
  for (const ch of s) {
    const c = ch.codePointAt(0) ?? 0;
    if (c < 0x80) out.push(c);
    else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
    else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
  }
  return new Uint8Array(out);
}

export interface AuthMessage {
  domain: string;
  chain: string;
  timestamp: number;
  action: string;
  nonce: string;
}

export interface Signed {
  publicKey: string;
  signature: string;
  message: string;
}

let nonces = 0;

/** A nonce no other request of this run signs: the VU, a counter and the time (spec 5: unique). */
export function nonce(): string {
  nonces += 1;
  return `k6-${__VU}-${nonces}-${Date.now().toString(36)}`;
}

export interface Wallet {
  address: string;
  /** Signs `fields` (defaults: now, a fresh nonce); returns the three values of part 5. */
  sign(fields: Partial<AuthMessage> & { action: string; domain: string; chain: string }): Signed;
}

export function wallet(runId: string, label: string): Wallet {
  const seed = nacl.hash(utf8(`market-indexer-k6:${runId}:${__VU}:${label}`)).slice(0, 32);
  const keys = nacl.sign.keyPair.fromSeed(seed);
  const address = base58(keys.publicKey);
  return {
    address,
    sign(fields) {
      const m: AuthMessage = { timestamp: Math.floor(Date.now() / 1000), nonce: nonce(), ...fields };
      const message = JSON.stringify({ domain: m.domain, chain: m.chain, timestamp: m.timestamp, action: m.action, nonce: m.nonce });
      return { publicKey: address, signature: base58(nacl.sign.detached(utf8(message), keys.secretKey)), message };
    },
  };
}

/** The HTTP headers of part 5 for a signed request of `method path` (path without /api/v1). */
export function authHeaders(s: Signed): Record<string, string> {
  return { 'x-wallet-pubkey': s.publicKey, 'x-wallet-signature': s.signature, 'x-wallet-message': s.message };
}

/** The `action` of an HTTP request: `METHOD /path?query` without the API prefix. */
export function httpAction(method: string, pathAndQuery: string): string {
  return `${method} ${pathAndQuery.startsWith(API_PREFIX) ? pathAndQuery.slice(API_PREFIX.length) : pathAndQuery}`;
}
