// One attack of `npm run bench -- abuse`, in its own process so that the attacker does not share
// the event loop of the bench's measuring client. Input (env): ATTACK (a key of ATTACKS),
// ATTACK_PORT, ATTACK_SECONDS. Output: a JSON summary on stdout (what was sent, what came back).
import http from 'node:http';
import WebSocket from 'ws';
import { keyPairOf } from '../simulator/ids';
import { walletHeaders } from '../test/support/api';

const port = Number(process.env.ATTACK_PORT);
const seconds = Number(process.env.ATTACK_SECONDS ?? 5);
const deadline = Date.now() + seconds * 1000;
const CONCURRENCY = 32;
const trader = keyPairOf('abuse-bench-trader');
const outcomes = new Map<string, number>();
const seen = (k: string) => outcomes.set(k, (outcomes.get(k) ?? 0) + 1);
let sent = 0;
let bytes = 0;

/** `CONCURRENCY` keep-alive loops of GET `target()` from `ip`s, until the deadline. */
async function httpFlood(ips: string[], target: () => string, headers: () => Record<string, string> = () => ({})): Promise<void> {
  const agents = ips.map((ip) => new http.Agent({ keepAlive: true, localAddress: ip, maxSockets: CONCURRENCY }));
  const one = (i: number) =>
    new Promise<void>((resolve) => {
      sent++;
      const req = http.get({ host: '127.0.0.1', port, path: target(), agent: agents[i % agents.length], headers: headers() }, (res) => {
        res.on('data', (d: Buffer) => (bytes += d.length));
        res.on('end', () => (seen(String(res.statusCode)), resolve()));
      });
      req.on('error', () => (seen('error'), resolve()));
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

export const ATTACKS: Record<string, () => Promise<void>> = {
  'ws-bad-subscribes': wsBadSubscribes,
  'http-bad-signatures': () => httpFlood(['127.0.0.3'], () => '/api/v1/stats', forged),
  'malformed-percent': () => httpFlood(['127.0.0.4'], () => `/api/v1/markets/%ff%fe${sent}`),
  'health-flood': () => httpFlood(['127.0.0.5', '127.0.0.6', '127.0.0.7', '127.0.0.8'], () => (sent % 2 ? '/health' : '/ready')),
  'long-invalid-values': () => httpFlood(['127.0.0.9'], () => `/api/v1/v2/referral/${'0'.repeat(14_000)}`),
};

if (require.main === module) {
  const attack = ATTACKS[process.env.ATTACK ?? ''];
  if (!attack) throw new Error(`ATTACK must be one of ${Object.keys(ATTACKS).join(', ')}`);
  void attack().then(() => process.stdout.write(JSON.stringify({ sent, bytes, outcomes: Object.fromEntries(outcomes) })));
}
