// One attack of `npm run bench -- abuse`, in its own process so that the attacker does not share
// the event loop of the bench's measuring client. Input (env): ATTACK (a key of ATTACKS),
// ATTACK_PORT, ATTACK_SECONDS. Output: a JSON summary on stdout (what was sent, what came back).
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import http from 'node:http';
import bs58 from 'bs58';
import WebSocket from 'ws';
import { keyPairOf } from '../../simulator/ids';
import { walletHeaders } from './wallet-headers';

const port = Number(process.env.ATTACK_PORT);
const seconds = Number(process.env.ATTACK_SECONDS ?? 5);
const deadline = Date.now() + seconds * 1000;
const CONCURRENCY = 32;
const trader = keyPairOf('abuse-bench-trader');
const outcomes = new Map<string, number>();
const seen = (k: string) => outcomes.set(k, (outcomes.get(k) ?? 0) + 1);
let sent = 0;
let bytes = 0;

/** `CONCURRENCY` keep-alive loops of GET `target()` (or POST with `body`) from `ip`s, until the deadline. */
async function httpFlood(ips: string[], target: () => string, headers: () => Record<string, string> = () => ({}), body?: string): Promise<void> {
  const agents = ips.map((ip) => new http.Agent({ keepAlive: true, localAddress: ip, maxSockets: CONCURRENCY }));
  const one = (i: number) =>
    new Promise<void>((resolve) => {
      sent++;
      const method = body === undefined ? 'GET' : 'POST';
      const extra = body === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) };
      const req = http.request({ method, host: '127.0.0.1', port, path: target(), agent: agents[i % agents.length], headers: { ...headers(), ...extra } }, (res) => {
        res.on('data', (d: Buffer) => (bytes += d.length));
        res.on('end', () => (seen(String(res.statusCode)), resolve()));
      });
      req.on('error', () => (seen('error'), resolve()));
      req.end(body);
    });
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, i) => {
      while (Date.now() < deadline) await one(i);
    }),
  );
  agents.forEach((a) => a.destroy());
}

/**
 * Up to 10 connections from one address, each sending wrongly signed `positions:` subscribes in
 * batches of 60 (under the 64-message flood guard), the next batch once the last is answered;
 * a closed connection is reopened.
 */
async function wsBadSubscribes(): Promise<void> {
  const channel = `positions:${trader.address}`;
  const frame = JSON.stringify({ type: 'subscribe', channel, auth: { ...wsAuth() } });
  function wsAuth() {
    const h = walletHeaders(trader, `WS_SUBSCRIBE ${channel}`, { forge: true });
    return { publicKey: h['x-wallet-pubkey']!, signature: h['x-wallet-signature']!, message: h['x-wallet-message']! };
  }
  const connection = () =>
    new Promise<void>((resolve) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, { localAddress: '127.0.0.2' });
      // A server that never closes it (the one before D-100) would keep it past the run.
      const stop = setTimeout(() => ws.terminate(), Math.max(0, deadline - Date.now()));
      ws.on('close', () => clearTimeout(stop));
      let answered = 0;
      const batch = () => {
        for (let i = 0; i < 60; i++) (sent++, ws.send(frame));
      };
      ws.on('open', batch);
      ws.on('message', (d) => {
        const m = JSON.parse(d.toString()) as { type: string; message?: string };
        seen(m.type === 'error' ? `error: ${m.message}` : m.type);
        if (m.type === 'error' && ++answered % 60 === 0 && Date.now() < deadline) batch();
      });
      ws.on('unexpected-response', (_req, res) => (seen(`upgrade ${res.statusCode}`), res.resume(), resolve()));
      ws.on('close', (code) => (seen(`close ${code}`), resolve()));
      ws.on('error', () => resolve());
    });
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (Date.now() < deadline) await connection();
    }),
  );
}

// Signed once: tweetnacl's signing would cap the attacker, and the server refuses the
// signature before it could look at the nonce.
const forgedHeaders = walletHeaders(trader, 'GET /stats', { forge: true });
const forged = () => forgedHeaders;

/**
 * Correctly signed headers of a brand-new wallet for each request (issue 31 finding 2): a
 * keypair costs the attacker one node:crypto key generation, nothing the service can see.
 */
function freshWalletHeaders(action: string): Record<string, string> {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  const message = JSON.stringify({ domain: 'localhost', chain: 'solana-mainnet', timestamp: Math.floor(Date.now() / 1000), action, nonce: randomBytes(12).toString('hex') });
  return { 'x-wallet-pubkey': bs58.encode(raw), 'x-wallet-signature': bs58.encode(sign(null, Buffer.from(message), privateKey)), 'x-wallet-message': message };
}
// A market that does not exist: what passes the limits is refused by the route's check (400).
const ORDER = JSON.stringify({ market: bs58.encode(Buffer.alloc(32, 7)), side: 'buy_yes', priceBps: 100, quantity: '5' });
/** A well-formed key nobody made. */
const randomApiKey = () => `mik_${randomBytes(6).toString('hex')}_${randomBytes(32).toString('base64url')}`;

/** `/ws` upgrades with a new random key each, `CONCURRENCY` at a time, until the deadline (issue 31 finding 4). */
async function wsBadKeys(): Promise<void> {
  const upgrade = () =>
    new Promise<void>((resolve) => {
      sent++;
      const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, { localAddress: '127.0.0.12', headers: { 'x-api-key': randomApiKey() } });
      ws.on('unexpected-response', (_req, res) => (seen(`upgrade ${res.statusCode}`), res.resume(), resolve()));
      ws.on('open', () => (seen('connected'), ws.terminate(), resolve()));
      ws.on('error', () => resolve());
    });
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < deadline) await upgrade();
    }),
  );
}

/** Which API an attack is aimed at: the spec's (v1) or the appendix variant's (legacy, API keys). */
export type AttackTarget = 'v1' | 'legacy';

export const ATTACKS: Record<string, { target: AttackTarget; run: () => Promise<void> }> = {
  'ws-bad-subscribes': { target: 'v1', run: wsBadSubscribes },
  'http-bad-signatures': { target: 'v1', run: () => httpFlood(['127.0.0.3'], () => '/api/v1/stats', forged) },
  'malformed-percent': { target: 'v1', run: () => httpFlood(['127.0.0.4'], () => `/api/v1/markets/%ff%fe${sent}`) },
  'health-flood': { target: 'v1', run: () => httpFlood(['127.0.0.5', '127.0.0.6', '127.0.0.7', '127.0.0.8'], () => (sent % 2 ? '/health' : '/ready')) },
  'long-invalid-values': { target: 'v1', run: () => httpFlood(['127.0.0.9'], () => `/api/v1/v2/referral/${'0'.repeat(14_000)}`) },
  // Issue 31.
  'admin-anonymous': { target: 'v1', run: () => httpFlood(['127.0.0.13'], () => `/api/v1/admin/x${sent}`) },
  'fresh-keypairs-tx': { target: 'v1', run: () => httpFlood(['127.0.0.10'], () => '/api/v1/tx/place-order', () => freshWalletHeaders('POST /tx/place-order'), ORDER) },
  'bad-api-keys-http': { target: 'legacy', run: () => httpFlood(['127.0.0.11'], () => '/api/v1/markets?limit=1', () => ({ 'x-api-key': randomApiKey() })) },
  'bad-api-keys-ws': { target: 'legacy', run: wsBadKeys },
};

if (require.main === module) {
  const attack = ATTACKS[process.env.ATTACK ?? ''];
  if (!attack) throw new Error(`ATTACK must be one of ${Object.keys(ATTACKS).join(', ')}`);
  void attack.run().then(() => process.stdout.write(JSON.stringify({ sent, bytes, outcomes: Object.fromEntries(outcomes) })));
}
