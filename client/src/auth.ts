import { encodeBase58 } from './base58';
import type { Clock } from './clock';
import type { Signer } from './signer';

/**
 * The wallet-auth message of the API (its `walletMessage` security scheme): `domain` the API's
 * host (one of its `PUBLIC_HOSTS`, never the page's origin, D-521), `timestamp` the server's
 * clock in seconds, `action` the request exactly as sent (`GET /positions?owner=…`, without
 * `/api/v1`), and a nonce that is new for every attempt (the API refuses one it has seen).
 */
export interface AuthMessage {
  domain: string;
  timestamp: number;
  action: string;
  nonce: string;
  chain?: string;
}

export function newNonce(): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** `METHOD /path?query` as the API reads it: the request target without the `/api/v1` (or `/api`) prefix. */
export function actionOf(method: string, url: string): string {
  const u = new URL(url);
  const target = `${u.pathname}${u.search}`.replace(/^\/api\/v1(?=\/|\?|$)/, '').replace(/^\/api(?=\/|\?|$)/, '');
  return `${method.toUpperCase()} ${target || '/'}`;
}

export async function signedMessage(signer: Signer, action: string, o: { domain: string; clock: Clock; chain?: string }): Promise<{ message: string; signature: string; publicKey: string }> {
  const m: AuthMessage = { domain: o.domain, timestamp: Math.floor(o.clock.now() / 1000), action, nonce: newNonce(), ...(o.chain ? { chain: o.chain } : {}) };
  // JSON.stringify escapes no non-ASCII; the API accepts printable ASCII only (D-80), so escape the rest.
  const message = JSON.stringify(m).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const signature = encodeBase58(await signer.signMessage(new TextEncoder().encode(message)));
  return { message, signature, publicKey: signer.publicKey };
}

/** The three `x-wallet-*` headers of a signed request. */
export async function walletHeaders(signer: Signer, method: string, url: string, o: { domain: string; clock: Clock; chain?: string }): Promise<Record<string, string>> {
  const s = await signedMessage(signer, actionOf(method, url), o);
  return { 'x-wallet-pubkey': s.publicKey, 'x-wallet-signature': s.signature, 'x-wallet-message': s.message };
}
