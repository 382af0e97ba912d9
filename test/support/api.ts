import http from 'node:http';
import bs58 from 'bs58';
import nacl from 'tweetnacl';
import { assertMatchesOpenApi } from './openapi';

// The signer lives with the benches' clients, which sign the same way (product code imports no test/).
export { walletHeaders, type SignOptions } from '../../loadtest/bench/wallet-headers';

export type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export async function serve(app: http.RequestListener): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** A request whose response is checked against api-reference/openapi.yaml before the test sees it. */
export async function call(url: string, init?: RequestInit) {
  const res = await fetch(url, init);
  const text = await res.text();
  const json = res.headers.get('content-type')?.includes('application/json');
  const body = (json && text ? JSON.parse(text) : text || undefined) as Json;
  assertMatchesOpenApi(init?.method ?? 'GET', url, res.status, res.headers.get('content-type'), body);
  return { res, status: res.status, headers: res.headers, body };
}

/** A fresh wallet keypair, as signed requests need it. */
export function testWallet(): { address: string; secretKey: Uint8Array } {
  const kp = nacl.sign.keyPair();
  return { address: bs58.encode(kp.publicKey), secretKey: kp.secretKey };
}

/** Rate limits no suite reaches, for suites that test something else. */
export const HIGH_LIMITS = { PUBLIC_READ_RATE_LIMIT_MAX_REQUESTS: '1000000', RATE_LIMIT_MAX_REQUESTS: '1000000', RATE_LIMIT_SENSITIVE_MAX: '1000000' };
