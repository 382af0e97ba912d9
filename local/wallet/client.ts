import { randomBytes } from 'node:crypto';
import {
  createKeyPairSignerFromBytes,
  createKeyPairSignerFromPrivateKeyBytes,
  createSolanaRpc,
  getBase58Decoder,
  getBase58Encoder,
  getBase64EncodedWireTransaction,
  getTransactionDecoder,
  signBytes,
  signTransaction,
  type KeyPairSigner,
} from '@solana/kit';
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

const MAX_ATTEMPTS = 4;
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
  const utf8 = new TextEncoder();

  /** The three headers of a signed request: the message, signed over its exact bytes. */
  async function authHeaders(action: string): Promise<Record<string, string>> {
    const message = JSON.stringify({ domain, chain, timestamp: Math.floor(Date.now() / 1000), action, nonce: randomBytes(12).toString('hex') });
    const signature = await signBytes(signer.keyPair.privateKey, utf8.encode(message));
    return { 'x-wallet-pubkey': signer.address, 'x-wallet-signature': getBase58Decoder().decode(signature), 'x-wallet-message': message };
  }

  /** How long a 429 asks to wait (Retry-After, seconds), or undefined when it may not be waited out. */
  const retryAfterMs = (res: Response) => {
    const s = Number(res.headers.get('retry-after'));
    return Number.isFinite(s) && s >= 0 && s <= MAX_RETRY_AFTER_S ? s * 1000 : undefined;
  };

  async function request(method: 'GET' | 'POST', path: string, body?: unknown, signed = true): Promise<unknown> {
    for (let attempt = 1; ; attempt++) {
      // A fresh message (its nonce is single-use) for every attempt.
      const headers: Record<string, string> = signed ? await authHeaders(`${method} ${path}`) : {};
      if (body !== undefined) headers['content-type'] = 'application/json';
      const res = await doFetch(`${api}/api/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      // Rate limited: wait as the answer says, as a polite client does, a few times.
      const wait = res.status === 429 && attempt < MAX_ATTEMPTS ? retryAfterMs(res) : undefined;
      if (wait !== undefined) {
        await res.arrayBuffer();
        await new Promise((r) => setTimeout(r, wait));
        continue;
      }
      return answer(res, method, path);
    }
  }

  async function answer(res: Response, method: string, path: string): Promise<unknown> {
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = text;
    }
    if (!res.ok) throw new WalletRequestError(res.status, parsed, `${method} ${path}`);
    return parsed;
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
