import { createHash } from 'node:crypto';
import bs58 from 'bs58';

const digest = (s: string) => createHash('sha256').update(s).digest();

/** A deterministic 32-byte address for a label (simulated accounts). */
export const addressOf = (label: string): string => bs58.encode(digest(label));

/** A deterministic 64-byte transaction signature for a label. */
export const signatureOf = (label: string): string =>
  bs58.encode(Buffer.concat([digest(`${label}#0`), digest(`${label}#1`)]));

/** 32 deterministic bytes as lowercase hex (feed ids). */
export const hexOf = (label: string): string => digest(label).toString('hex');
