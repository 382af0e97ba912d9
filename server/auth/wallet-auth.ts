import bs58 from 'bs58';
import Joi from 'joi';
import type { NonceStore } from '../../core/redis/nonce-store';
import { boundedMessage } from '../http/validate';
import { verifyEd25519, type SignatureVerifier } from '../../core/ed25519';

export const MAX_PAST_SECONDS = 300;
export const MAX_FUTURE_SECONDS = 30;

export type AuthFailure =
  | 'missing'
  | 'invalid_public_key'
  | 'bad_signature'
  | 'invalid_message'
  | 'expired'
  | 'domain'
  | 'chain'
  | 'action'
  | 'nonce';

export type AuthResult = { ok: true; wallet: string } | { ok: false; reason: AuthFailure; message: string };

export interface AuthInput {
  publicKey: string | undefined;
  signature: string | undefined;
  message: string | undefined;
  /** `x-wallet-chain`, HTTP only. */
  chainHeader?: string | undefined;
  /**
   * The message came in an HTTP header: it must be printable ASCII (D-80). Node reads header
   * bytes as latin1, so the bytes a client signed cannot be known once it sends others.
   */
  fromHeader?: boolean;
}

/** What an HTTP header may carry of the auth message: printable ASCII and tab. */
const NOT_HEADER_ASCII = /[^\t\x20-\x7e]/;
export const NON_ASCII_MESSAGE = 'x-wallet-message must be printable ASCII: write other characters as JSON \\u escapes';

export interface AuthRules {
  publicHosts: string[];
  chainId: string;
  /** `METHOD /path?query` without `/api/v1`, or `WS_SUBSCRIBE <channel>`. */
  expectedAction: string;
  nonceStore: NonceStore;
  nowSeconds?: number;
  /** The Ed25519 check (node:crypto by default); tests count its calls. */
  verify?: SignatureVerifier;
}

const messageSchema = Joi.object({
  domain: Joi.string().max(253).required(),
  chain: Joi.string().max(64),
  timestamp: Joi.number().integer().strict().required(),
  action: Joi.string().max(2048).required(),
  nonce: Joi.string().min(8).max(128).pattern(/^[\x21-\x7e]+$/).required(),
}).unknown(true);

const fail = (reason: AuthFailure, message: string): AuthResult => ({ ok: false, reason, message });

function decode(value: string, bytes: number): Uint8Array | undefined {
  if (value.length > 128) return undefined;
  try {
    const b = bs58.decode(value);
    return b.length === bytes ? b : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Spec part 5, shared by HTTP and WebSocket: an Ed25519 signature over the exact bytes of the
 * message string, then the message rules, and the nonce last, so that a refused request does
 * not burn its nonce. The nonce is remembered per wallet across every replica.
 */
export async function verifyWalletAuth(input: AuthInput, rules: AuthRules): Promise<AuthResult> {
  const { publicKey, signature, message } = input;
  if (!publicKey || !signature || !message) return fail('missing', 'Missing wallet authentication headers');
  if (message.length > 4096) return fail('invalid_message', 'Auth message is too long');
  if (input.fromHeader && NOT_HEADER_ASCII.test(message)) return fail('invalid_message', NON_ASCII_MESSAGE);
  const key = decode(publicKey, 32);
  if (!key) return fail('invalid_public_key', 'Invalid wallet public key');
  const sig = decode(signature, 64);
  if (!sig || !(rules.verify ?? verifyEd25519)(Buffer.from(message, 'utf8'), sig, key)) {
    return fail('bad_signature', 'Invalid wallet signature');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(message);
  } catch {
    return fail('invalid_message', 'Auth message is not JSON');
  }
  const { value, error } = messageSchema.validate(parsed);
  if (error) return fail('invalid_message', `Invalid auth message: ${error.details[0] ? boundedMessage(error.details[0]) : 'invalid'}`);
  const m = value as { domain: string; chain?: string; timestamp: number; action: string; nonce: string };
  const now = rules.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (now - m.timestamp > MAX_PAST_SECONDS || m.timestamp - now > MAX_FUTURE_SECONDS) {
    return fail('expired', 'Authentication expired');
  }
  if (!rules.publicHosts.includes(m.domain.toLowerCase())) return fail('domain', 'Domain mismatch');
  // A legacy message without `chain` is the supported chain.
  const chain = m.chain ?? rules.chainId;
  if (chain !== rules.chainId || (input.chainHeader !== undefined && input.chainHeader !== chain)) {
    return fail('chain', 'Chain mismatch');
  }
  if (m.action !== rules.expectedAction) return fail('action', 'Action does not match request');
  if (!(await rules.nonceStore.claim(publicKey, m.nonce, m.timestamp))) return fail('nonce', 'Nonce already used');
  return { ok: true, wallet: publicKey };
}
