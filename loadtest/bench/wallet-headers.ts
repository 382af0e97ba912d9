import { randomBytes } from 'node:crypto';
import bs58 from 'bs58';
import { signEd25519 } from '../../core/ed25519';

/**
 * The wallet-auth headers a client of the signed routes sends (spec part 5), signed with a raw
 * Ed25519 key: the benches' load and abuse clients use it, and so do the tests.
 */

export interface SignOptions {
  domain?: string;
  chain?: string | null;
  timestamp?: number;
  nonce?: string;
  chainHeader?: string;
  /** Replaces the signed bytes' signature with one over other bytes. */
  forge?: boolean;
  rawMessage?: string;
}

/** The three wallet-auth headers of spec part 5, signed with a real Ed25519 key. */
export function walletHeaders(key: { address: string; secretKey: Uint8Array }, action: string, o: SignOptions = {}): Record<string, string> {
  const msg: Record<string, unknown> = {
    domain: o.domain ?? 'localhost',
    timestamp: o.timestamp ?? Math.floor(Date.now() / 1000),
    action,
    nonce: o.nonce ?? randomBytes(12).toString('hex'),
  };
  if (o.chain !== null) msg.chain = o.chain ?? 'solana-mainnet';
  const message = o.rawMessage ?? JSON.stringify(msg);
  const signed = o.forge ? `${message} ` : message;
  const signature = bs58.encode(signEd25519(Buffer.from(signed, 'utf8'), key.secretKey));
  const h: Record<string, string> = { 'x-wallet-pubkey': key.address, 'x-wallet-signature': signature, 'x-wallet-message': message };
  if (o.chainHeader) h['x-wallet-chain'] = o.chainHeader;
  return h;
}
