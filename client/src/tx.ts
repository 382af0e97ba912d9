import { decodeBase58, encodeBase58 } from './base58';
import { marketProgramCheck, TransactionRefused } from './check';
import { fromBase64 } from './check/wire';
import type { RestClient } from './http';
import type { Signer } from './signer';

/**
 * `/tx/*` from build to indexed (D-528): the API builds an unsigned transaction, `check`
 * decides whether it is the one asked for (the API chooses every byte of it; by default the
 * SDK's instruction check, D-532), the signer signs its message, the chain's RPC gets it, and
 * the order is waited for in the index. Nothing is retried: a build is a signed POST, and a
 * sent transaction is the chain's.
 */
export type TxName = 'place-order' | 'cancel-order' | 'claim-payout' | 'claim-referral' | 'claim-creator-fees';
export type TxCheck = (built: { name: TxName; body: Record<string, unknown>; transaction: string; accounts: Record<string, string>; wallet: string }) => Promise<void> | void;

const toBase64 = (b: Uint8Array) => btoa(Array.from(b, (x) => String.fromCharCode(x)).join(''));

/** Solana's compact-u16 (shortvec) at `at`: its value and length. */
function shortvec(bytes: Uint8Array, at: number): [number, number] {
  let value = 0;
  for (let i = 0; i < 3; i++) {
    const b = bytes[at + i]!;
    value |= (b & 0x7f) << (7 * i);
    if (!(b & 0x80)) return [value, i + 1];
  }
  throw new TypeError('malformed compact-u16');
}

/** The wire transaction with `signer`'s signature over its message in the signer's slot. */
export async function signWireTransaction(base64: string, signer: Signer): Promise<{ transaction: string; signature: string }> {
  const bytes = fromBase64(base64);
  const [count, n] = shortvec(bytes, 0);
  const messageAt = n + 64 * count;
  const message = bytes.slice(messageAt);
  // A versioned message starts with 0x80 | version; a legacy one with the header.
  const header = message[0]! & 0x80 ? 1 : 0;
  const required = message[header]!;
  const [keys, k] = shortvec(message, header + 3);
  const keysAt = header + 3 + k;
  const me = decodeBase58(signer.publicKey);
  let slot = -1;
  for (let i = 0; i < Math.min(required, keys); i++) {
    const key = message.subarray(keysAt + 32 * i, keysAt + 32 * (i + 1));
    if (key.every((b, j) => b === me[j])) slot = i;
  }
  if (slot < 0) throw new Error(`the transaction does not ask ${signer.publicKey} to sign`);
  const sig = await signer.signMessage(message);
  bytes.set(sig, n + 64 * slot);
  return { transaction: toBase64(bytes), signature: encodeBase58(sig) };
}

export interface TxOptions {
  rest: RestClient;
  signer: Signer;
  /** The chain's JSON-RPC URL. */
  rpcUrl: string;
  /** The market program transactions must call (a tenant's PROGRAM_ID; default the IDL's). */
  program?: string;
  /** Replaces the SDK's instruction check (`marketProgramCheck(program)`). */
  check?: TxCheck;
  fetch?: (request: Request) => Promise<Response>;
}

export function createTxClient(o: TxOptions) {
  const doFetch = o.fetch ?? ((r: Request) => globalThis.fetch(r));
  const check = o.check ?? marketProgramCheck(o.program);
  return {
    /** Builds, checks, signs and sends; returns the transaction's signature. */
    async send(name: TxName, body: Record<string, unknown>): Promise<string> {
      const { data } = await o.rest.signed.POST(`/api/v1/tx/${name}` as '/api/v1/tx/place-order', { body: body as never });
      const built = (data as { data?: { transaction?: string; accounts?: Record<string, string> } } | undefined)?.data;
      if (typeof built?.transaction !== 'string') throw new TransactionRefused(`POST /tx/${name} answered no transaction`);
      await check({ name, body, transaction: built.transaction, accounts: built.accounts ?? {}, wallet: o.signer.publicKey });
      const { transaction, signature } = await signWireTransaction(built.transaction, o.signer);
      const res = await doFetch(
        new Request(o.rpcUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [transaction, { encoding: 'base64', preflightCommitment: 'confirmed' }] }),
        }),
      );
      const answer = (await res.json()) as { result?: string; error?: { message?: string } };
      if (answer.error || typeof answer.result !== 'string') throw new Error(`the RPC refused the transaction: ${answer.error?.message ?? res.status}`);
      return answer.result;
    },
    /** Resolves once `find` sees what the transaction did in the index (polled every `everyMs`), or throws after `timeoutMs`. */
    async untilIndexed<T>(find: () => Promise<T | undefined>, o2: { timeoutMs?: number; everyMs?: number } = {}): Promise<T> {
      const deadline = Date.now() + (o2.timeoutMs ?? 60_000);
      for (;;) {
        const v = await find();
        if (v !== undefined) return v;
        if (Date.now() > deadline) throw new Error('not indexed in time');
        await new Promise((r) => setTimeout(r, o2.everyMs ?? 500));
      }
    },
  };
}
