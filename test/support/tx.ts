import { getTransactionDecoder, getTransactionEncoder } from '@solana/kit';
import bs58 from 'bs58';
import { keyPairFromSeed, signEd25519 } from '../../core/ed25519';

/** What a wallet does with a built transaction: signs its message bytes into its signature slot. */
export function signWireTransaction(base64: string, secretKey: Uint8Array): string {
  const tx = getTransactionDecoder().decode(Buffer.from(base64, 'base64'));
  const pub = keyPairFromSeed(secretKey.subarray(0, 32)).publicKey;
  const signer = Object.keys(tx.signatures).find((k) => Buffer.from(bs58.decode(k)).equals(Buffer.from(pub)));
  if (!signer) throw new Error('this key is not a signer of the transaction');
  const sig = signEd25519(Uint8Array.from(tx.messageBytes), secretKey);
  const signed = { ...tx, signatures: { ...tx.signatures, [signer]: sig } };
  return Buffer.from(getTransactionEncoder().encode(signed as never)).toString('base64');
}
