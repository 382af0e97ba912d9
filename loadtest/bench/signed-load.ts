// A load generator for a wallet-signed route (run by api-bench.ts in its own process, like the
// autocannon CLI for the public routes): 64 connections, every request carrying its own nonce.
// Signatures are made before the run (node:crypto, ~0.05 ms each), so the generator spends its
// CPU on requests, not on signing; if the run outlasts them it signs more on the fly.
// Input (env): SIGNED_URL, SIGNED_SECONDS, SIGNED_SEED (hex of the wallet's 32-byte seed),
// SIGNED_PREPARE (how many to sign first). Output: autocannon's result as JSON on stdout.
import { createPrivateKey, createPublicKey, randomBytes, sign } from 'node:crypto';
import autocannon from 'autocannon';
import bs58 from 'bs58';

const url = new URL(process.env.SIGNED_URL!);
const seconds = Number(process.env.SIGNED_SECONDS ?? 5);
const seed = Buffer.from(process.env.SIGNED_SEED!, 'hex');
const privateKey = createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]), format: 'der', type: 'pkcs8' });
const address = bs58.encode(Buffer.from(createPublicKey(privateKey).export({ format: 'jwk' }).x!, 'base64url'));
// The action a client signs: the request target without the /api/v1 prefix (spec part 5).
const action = `GET ${url.pathname.replace(/^\/api\/v1/, '')}${url.search}`;

function headers(): Record<string, string> {
  const message = JSON.stringify({ domain: 'localhost', chain: 'solana-mainnet', timestamp: Math.floor(Date.now() / 1000), action, nonce: randomBytes(12).toString('hex') });
  return { 'x-wallet-pubkey': address, 'x-wallet-signature': bs58.encode(sign(null, Buffer.from(message), privateKey)), 'x-wallet-message': message };
}

const prepared = Array.from({ length: Number(process.env.SIGNED_PREPARE ?? 50_000) }, headers);
let next = 0;

void autocannon({
  url: url.toString(),
  connections: 64,
  duration: seconds,
  requests: [
    {
      setupRequest: (req) => {
        req.headers = { ...req.headers, ...(prepared[next++] ?? headers()) };
        return req;
      },
    },
  ],
}).then((r) => process.stdout.write(JSON.stringify({ ...r, prepared: prepared.length, used: next })));
