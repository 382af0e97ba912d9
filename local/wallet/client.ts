import { randomBytes } from 'node:crypto';
import {
  createKeyPairSignerFromBytes,
  createKeyPairSignerFromPrivateKeyBytes,
  createSolanaRpc,
  getBase58Encoder,
  getBase64EncodedWireTransaction,
  getTransactionDecoder,
  signBytes,
  signTransaction,
  type KeyPairSigner,
} from '@solana/kit';
import { createRestClient, MarketApiError, type Signer } from '../../client/src';
import { checkBuiltTransaction, DEFAULT_MARKET_PROGRAM, expectedFor, TransactionRefused } from './check-tx';

/**
 * A wallet as a market's users run one, against a tenant's API and its chain's RPC: it signs
 * wallet-auth messages for the signed routes (spec part 5), asks `/tx/*` for an unsigned
 * transaction, signs it with its key and sends it to the chain itself, with `@solana/kit`
 * only. The service never holds the key.
 */

export interface WalletKey {
  signer: KeyPairSigner;
  /** The Solana CLI keypair file's 64 bytes (secret seed, then public key). */
  bytes: Uint8Array;
}

/** A new key, with the bytes a keypair file keeps. */
export async function generateWalletKey(): Promise<WalletKey> {
  const seed = new Uint8Array(randomBytes(32));
  const signer = await createKeyPairSignerFromPrivateKeyBytes(seed);
  const bytes = new Uint8Array(64);
  bytes.set(seed);
  bytes.set(getBase58Encoder().encode(signer.address), 32);
  return { signer, bytes };
}

/** A key from a Solana CLI keypair file's 64 bytes. */
export async function walletKeyFromBytes(bytes: Uint8Array): Promise<WalletKey> {
  return { signer: await createKeyPairSignerFromBytes(bytes), bytes };
}

export class WalletRequestError extends Error {
  override name = 'WalletRequestError';
  constructor(
    readonly status: number,
    readonly body: unknown,
    what: string,
  ) {
    const b = body as { error?: string; code?: string; details?: { field: string; message: string }[] } | undefined;
    const detail = b?.details?.map((d) => `${d.field}: ${d.message}`).join('; ');
    super(`${what}: ${status}${b?.code ? ` ${b.code}` : ''}${b?.error ? ` ${b.error}` : ''}${detail ? ` (${detail})` : ''}`);
  }
}

const MAX_RETRY_AFTER_S = 60;

export type TxName = 'place-order' | 'cancel-order' | 'claim-payout' | 'claim-referral' | 'claim-creator-fees';

export interface WalletClientOptions {
  /** The tenant's API, e.g. http://localhost:3000 (the `/api/v1` prefix is added). */
  api: string;
  /** The chain's JSON-RPC, e.g. http://localhost:8899. */
  rpc: string;
  key: WalletKey;
  /** The `domain` of auth messages: one of the tenant's PUBLIC_HOSTS (default: the API URL's host name). */
  domain?: string;
  /** The tenant's CHAIN_ID (default solana-mainnet). */
  chain?: string;
  /** The market program the wallet signs for (default: the one the spec's IDL names); /tx/* answers calling anything else are refused. */
  program?: string;
  fetch?: typeof fetch;
}

export function createWalletClient(opts: WalletClientOptions) {
  const api = opts.api.replace(/\/+$/, '');
  const domain = opts.domain ?? new URL(api).hostname;
  const chain = opts.chain ?? 'solana-mainnet';
  const doFetch = opts.fetch ?? fetch;
  const rpc = createSolanaRpc(opts.rpc);
  const { signer } = opts.key;

  // Requests go through the client SDK (D-531): signed with a fresh nonce per attempt on the
  // server's clock, reads retried after Retry-After, errors typed; the wallet keeps its own
  // WalletRequestError for its callers.
  const sdkSigner: Signer = { publicKey: signer.address, signMessage: async (bytes) => new Uint8Array(await signBytes(signer.keyPair.privateKey, bytes)) };
  const http = createRestClient({ baseUrl: api, signer: sdkSigner, domain, chain, fetch: (r) => doFetch(r), retry: { maxRetryAfterMs: MAX_RETRY_AFTER_S * 1000 } });

  async function request(method: 'GET' | 'POST', path: string, body?: unknown, signed = true): Promise<unknown> {
    const c = signed ? http.signed : http.rest;
    try {
      const call = c[method] as (path: string, init: { body?: unknown }) => Promise<{ data?: unknown }>;
      const r = await call(`/api/v1${path}`, body === undefined ? {} : { body });
      return (r as { data?: unknown }).data;
    } catch (err) {
      if (err instanceof MarketApiError) throw new WalletRequestError(err.status, { error: err.message.replace(/^\d+ \S+: /, ''), code: err.code, details: err.details }, `${method} ${path}`);
      throw err;
    }
  }

  return {
    address: signer.address,
    /** A public read (no signature). */
    read: (path: string) => request('GET', path, undefined, false),
    /** A wallet-signed read, e.g. `/orders`, `/positions`. */
    signedRead: (path: string) => request('GET', path),
    /**
     * The whole loop of a trade: `/tx/<name>` builds the unsigned transaction on a recent
     * blockhash, the wallet checks it is the instruction asked for (check-tx.ts, D-281), signs
     * it and sends it to the chain. Returns its signature; throws TransactionRefused unsigned.
     */
    async send(name: TxName, body: Record<string, unknown>): Promise<string> {
      const built = (await request('POST', `/tx/${name}`, body)) as { data?: { transaction?: unknown; accounts?: Record<string, string> } } | undefined;
      if (typeof built?.data?.transaction !== 'string') throw new TransactionRefused(`POST /tx/${name} answered no transaction`);
      const { expected, given } = expectedFor(name, body, built.data.accounts ?? {});
      await checkBuiltTransaction({ transaction: built.data.transaction, wallet: signer.address, program: opts.program ?? DEFAULT_MARKET_PROGRAM, expected, given });
      const tx = getTransactionDecoder().decode(Buffer.from(built.data.transaction, 'base64'));
      const signed = await signTransaction([signer.keyPair], tx);
      return rpc.sendTransaction(getBase64EncodedWireTransaction(signed), { encoding: 'base64', preflightCommitment: 'confirmed' }).send();
    },
  };
}

export type WalletClient = ReturnType<typeof createWalletClient>;
