import { randomBytes } from 'node:crypto';
import { createKeyPairSignerFromBytes, createKeyPairSignerFromPrivateKeyBytes, getBase58Encoder, signBytes, type KeyPairSigner } from '@solana/kit';
import { createRestClient, createTxClient, MarketApiError, type Signer, type TxName } from '../../client/src';

/**
 * A wallet as a market's users run one, against a tenant's API and its chain's RPC: it signs
 * wallet-auth messages for the signed routes (spec part 5), asks `/tx/*` for an unsigned
 * transaction, checks it, signs it with its key and sends it to the chain itself, all through
 * the client SDK (D-531, D-532) over its `@solana/kit` key. The service never holds the key.
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
  const { signer } = opts.key;

  // Requests go through the client SDK (D-531): signed with a fresh nonce per attempt on the
  // server's clock, reads retried after Retry-After, errors typed; the wallet keeps its own
  // WalletRequestError for its callers.
  const sdkSigner: Signer = { publicKey: signer.address, signMessage: async (bytes) => new Uint8Array(await signBytes(signer.keyPair.privateKey, bytes)) };
  const http = createRestClient({ baseUrl: api, signer: sdkSigner, domain, chain, fetch: (r) => doFetch(r), retry: { maxRetryAfterMs: MAX_RETRY_AFTER_S * 1000 } });
  // Build, check (the SDK's instruction check for the wallet's program, D-532), sign, send.
  const tx = createTxClient({ rest: http, signer: sdkSigner, rpcUrl: opts.rpc, program: opts.program, fetch: (r) => doFetch(r) });

  async function typed<T>(what: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      if (err instanceof MarketApiError) throw new WalletRequestError(err.status, { error: err.message.replace(/^\d+ \S+: /, ''), code: err.code, details: err.details }, what);
      throw err;
    }
  }
  const request = (method: 'GET', path: string, signed: boolean) =>
    typed(`${method} ${path}`, async () => {
      const call = (signed ? http.signed : http.rest)[method] as (path: string, init: object) => Promise<{ data?: unknown }>;
      return (await call(`/api/v1${path}`, {})).data;
    });

  return {
    address: signer.address,
    /** A public read (no signature). */
    read: (path: string) => request('GET', path, false),
    /** A wallet-signed read, e.g. `/orders`, `/positions`. */
    signedRead: (path: string) => request('GET', path, true),
    /**
     * The whole loop of a trade: `/tx/<name>` builds the unsigned transaction on a recent
     * blockhash, the SDK checks it is the instruction asked for (D-281, D-532), signs it and
     * sends it to the chain. Returns its signature; throws TransactionRefused unsigned.
     */
    send: (name: TxName, body: Record<string, unknown>): Promise<string> => typed(`POST /tx/${name}`, () => tx.send(name, body)),
  };
}

export type WalletClient = ReturnType<typeof createWalletClient>;

/** An `http://` URL to anything but this machine: the API's answers can be read and changed on the way. */
export function plainHttpBeyondLoopback(url: string): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  return u.protocol === 'http:' && !['localhost', '[::1]'].includes(u.hostname) && !/^127\./.test(u.hostname);
}
