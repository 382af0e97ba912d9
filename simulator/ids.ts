import { createHash } from 'node:crypto';
import bs58 from 'bs58';
import { keyPairFromSeed } from '../core/ed25519';
import { encodeBase58 } from './chain/base58';

const digest = (s: string) => createHash('sha256').update(s).digest();

/** A deterministic 32-byte address for a label (simulated accounts). */
export const addressOf = (label: string): string => bs58.encode(digest(label));

/** A deterministic 64-byte transaction signature for a label. */
export const signatureOf = (label: string): string => encodeBase58(Buffer.concat([digest(`${label}#0`), digest(`${label}#1`)]));

/** 32 deterministic bytes as lowercase hex (feed ids). */
export const hexOf = (label: string): string => digest(label).toString('hex');

/** A deterministic Ed25519 key pair for a label: its address and 64-byte secret key. */
export function keyPairOf(label: string): { address: string; secretKey: Uint8Array } {
  const kp = keyPairFromSeed(digest(`keypair:${label}`));
  return { address: bs58.encode(kp.publicKey), secretKey: kp.secretKey };
}
