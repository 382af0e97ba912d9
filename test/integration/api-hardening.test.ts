import { readFileSync } from 'node:fs';
import express from 'express';
import YAML from 'yaml';
import { verifyEd25519, type SignatureVerifier } from '../../core/ed25519';
import { NON_ASCII_MESSAGE } from '../../server/auth/wallet-auth';
import { errorMapper } from '../../server/http/errors';
import { WS_ERRORS } from '../../server/ws/protocol';
import bs58 from 'bs58';
import nacl from 'tweetnacl';
import { call, HIGH_LIMITS, serve, testWallet, walletHeaders } from '../support/api';
import { apiSuite } from '../support/api-servers';
import { testCommon } from '../support/common';
import { WsClient, wsAuth } from '../support/ws';
import { assertErrorEnvelope, OPENAPI_PATH } from '../support/openapi';
import { rawGet, type RawResponse } from '../support/raw-http';
import { testTenant } from '../support/redis';

const doc = YAML.parse(readFileSync(OPENAPI_PATH, 'utf8')) as { paths: Record<string, { get?: unknown }> };
const GET_PATHS = Object.keys(doc.paths).filter((p) => doc.paths[p]!.get);

/** Every form a client may use for a documented path: canonical, the legacy `/api/` prefix, the root alias. */
function forms(template: string, value: string): string[] {
  const p = template.replace(/\{\w+\}/g, value);
  if (!p.startsWith('/api/v1/')) return [p];
  const rest = p.slice('/api/v1'.length);
  return [p, `/api${rest}`, rest];
}

const MALFORMED = ['%ff%fe', '%E0%A4%A', '%', '%zz', 'a%2', '%C0%AF', '%ED%A0%80'];

describe('hostile request targets (real sockets, real Redis)', () => {
  const suite = apiSuite();

  /** The API server as the process runs it (startApiServer), on Redis under a fresh tenant; its log lines from debug up kept. */
  async function api(env: Record<string, string>, verifySignature?: SignatureVerifier) {
    const lines: string[] = [];
    const s = await suite.startProcess({ LOG_LEVEL: 'debug', ...env }, suite.db, { docs: true, verifySignature, logTo: (line) => void lines.push(line) });
    return { ...s, lines };
  }

  const expectMalformed = (r: RawResponse, where: string) => {
    expect([where, r.status, r.json?.code]).toEqual([where, 400, 'INVALID_PARAMETER']);
    assertErrorEnvelope(r.json);
    expect(r.json.error).toMatch(/^Malformed percent-encoding in the request (path|query)$/);
  };

  it('answers malformed percent-encoding in any path or query, on every route and alias, with 400 INVALID_PARAMETER and logs no stack', async () => {
    const s = await api(HIGH_LIMITS);
    const startup = s.lines.length;
    try {
      const targets: string[] = [];
      for (const template of GET_PATHS) {
        for (const bad of MALFORMED) {
          // In a path parameter (or appended to a path that has none), and in a query value and name.
          const inPath = template.includes('{') ? forms(template, bad) : forms(`${template}${bad}`, '');
          targets.push(...inPath, ...forms(template, '1').map((p) => `${p}?limit=${bad}`), ...forms(template, '1').map((p) => `${p}?x${bad}=1`));
        }
      }
      targets.push('/docs/assets/%ff', '/nothing/here/%ff', '/health?x=%zz');
      for (const t of targets) expectMalformed(await rawGet(s.port, t), t);
      // Only the first parameter that does not decode is named.
      const q = await rawGet(s.port, '/api/v1/markets?limit=10&sta%74e=%ff');
      expect(q.json.details).toEqual([{ field: 'query.state', message: 'malformed percent-encoding' }]);
      // Well-formed escapes still reach the handlers.
      expect((await rawGet(s.port, '/api/v1/markets?st%61te=2')).status).toBe(200);
      expect((await rawGet(s.port, '/api/v1/markets/%31%32')).status).toBe(404);
      // A client's mistake is not the server's error: nothing above debug, never a stack.
      const lines = s.lines.slice(startup);
      expect(lines.length).toBeLessThanOrEqual(targets.length + 2);
      for (const line of lines) {
        const entry = JSON.parse(line) as { level: string; err?: unknown };
        expect(['debug', 'trace']).toContain(entry.level);
        expect(line).not.toMatch(/stack|URIError/);
      }
    } finally {
      await s.close();
    }
  }, 60_000);

  it('counts malformed requests against the caller\'s IP: a flood from one address ends in 429s, another address keeps its quota', async () => {
    const s = await api({ RATE_LIMIT_MAX_REQUESTS: '5' });
    try {
      const flood = await Promise.all(Array.from({ length: 40 }, (_, i) => rawGet(s.port, `/api/v1/markets/%ff%fe${i}`, { localAddress: '127.0.0.2' })));
      const statuses = flood.map((r) => r.status);
      expect(statuses.filter((x) => x === 400)).toHaveLength(5);
      expect(statuses.filter((x) => x === 429)).toHaveLength(35);
      const refused = flood.find((r) => r.status === 429)!;
      expect(refused.json).toEqual({ error: 'Rate limit exceeded', code: 'RATE_LIMITED' });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      // The same tier as any other public request of that address.
      expect((await rawGet(s.port, '/api/v1/achievements/all', { localAddress: '127.0.0.2' })).status).toBe(429);
      // Other addresses are untouched.
      expectMalformed(await rawGet(s.port, '/v2/referral/%ff', { localAddress: '127.0.0.3' }), '127.0.0.3');
      expect((await rawGet(s.port, '/api/v1/achievements/all', { localAddress: '127.0.0.4' })).status).toBe(200);
    } finally {
      await s.close();
    }
  });

  it('answers what Node\'s HTTP parser refuses with the error envelope, not a bare status line', async () => {
    const s = await api(HIGH_LIMITS);
    try {
      for (const target of [Buffer.from('/api/v1/markets/é', 'utf8'), '/api/v1/markets a', '/api/v1/markets\u0001', Buffer.from([0x2f, 0xff, 0xfe])]) {
        const r = await rawGet(s.port, target);
        expect([r.status, r.json]).toEqual([400, { error: 'Malformed HTTP request', code: 'VALIDATION_ERROR' }]);
      }
      const big = await rawGet(s.port, '/api/v1/markets', { headers: { 'x-pad': 'y'.repeat(70_000) } });
      expect([big.status, big.json]).toEqual([431, { error: 'Request headers are too large', code: 'LIMIT_EXCEEDED' }]);
    } finally {
      await s.close();
    }
  });

  it('maps a router decoding error that reaches the error mapper to 400, without logging it', async () => {
    const lines: string[] = [];
    const common = testCommon({ LOG_LEVEL: 'debug' }, { logTo: (line) => void lines.push(line) });
    const app = express();
    app.get('/x/:p', (_req, res) => void res.json({}));
    app.use(errorMapper(common.logger, 1000));
    const s = await serve(app);
    try {
      const r = await fetch(`${s.url}/x/%ff`);
      expect([r.status, await r.json()]).toEqual([
        400,
        { error: 'Malformed percent-encoding in the request path', code: 'INVALID_PARAMETER', details: [{ field: 'path', message: 'malformed percent-encoding' }] },
      ]);
      expect(lines).toEqual([]);
    } finally {
      await s.close();
    }
  });

  describe('signature verification budget (D-77)', () => {
    const trader = testWallet();
    /** The real verifier, counted: how many signatures the server checked. */
    const counting = () => {
      const c: { calls: number; verify: SignatureVerifier } = { calls: 0, verify: (m, sig, k) => (c.calls++, verifyEd25519(m, sig, k)) };
      return c;
    };
    const signed = (path: string, o: { forge?: boolean } = {}) => walletHeaders(trader, `GET ${path}`, o);

    it('refuses a flood of bad signatures from one address without verifying them once its budget is spent; other addresses and public reads are unaffected', async () => {
      const v = counting();
      const s = await api({ RATE_LIMIT_MAX_REQUESTS: '5' }, v.verify);
      try {
        const from = (ip: string, headers: Record<string, string>, path = '/stats') => rawGet(s.port, `/api/v1${path}`, { localAddress: ip, headers });
        const first = [];
        for (let i = 0; i < 5; i++) first.push(await from('127.0.0.2', signed('/stats', { forge: true })));
        expect(first.map((r) => [r.status, r.json.code])).toEqual(Array(5).fill([401, 'INVALID_SIGNATURE']));
        expect(v.calls).toBe(5);
        // The budget is spent: refused before the signature is looked at, however many come at once.
        const forged = signed('/stats', { forge: true });
        const flood = await Promise.all(Array.from({ length: 100 }, () => from('127.0.0.2', forged)));
        expect(flood.every((r) => r.status === 429 && r.json.code === 'RATE_LIMITED' && Number(r.headers['retry-after']) > 0)).toBe(true);
        // A correct signature from that address is refused too, unverified: the server cannot tell it apart without the work.
        expect((await from('127.0.0.2', signed('/stats'))).status).toBe(429);
        expect(v.calls).toBe(5);
        // The address's public requests have their own quota.
        expect((await from('127.0.0.2', {}, '/achievements/all')).status).toBe(200);
        // Another address: its own budget.
        expect((await from('127.0.0.3', signed('/stats'))).status).toBe(200);
        expect((await from('127.0.0.3', signed('/stats', { forge: true }))).status).toBe(401);
        expect(v.calls).toBe(7);
      } finally {
        await s.close();
      }
    });

    it('across replicas: one that has not yet seen the budget spent verifies one more failure, then refuses unverified too', async () => {
      const tenant = testTenant();
      const [va, vb] = [counting(), counting()];
      const a = await api({ TENANT_ID: tenant, RATE_LIMIT_MAX_REQUESTS: '3' }, va.verify);
      const b = await api({ TENANT_ID: tenant, RATE_LIMIT_MAX_REQUESTS: '3' }, vb.verify);
      try {
        const forged = (port: number) => rawGet(port, '/api/v1/stats', { localAddress: '127.0.0.6', headers: signed('/stats', { forge: true }) });
        for (let i = 0; i < 3; i++) expect((await forged(a.port)).status).toBe(401);
        expect([(await forged(a.port)).status, va.calls]).toEqual([429, 3]);
        // The budget lives in Redis; replica b learns it is spent from its first failure.
        expect([(await forged(b.port)).status, vb.calls]).toEqual([429, 1]);
        expect([(await forged(b.port)).status, vb.calls]).toEqual([429, 1]);
      } finally {
        await a.close();
        await b.close();
      }
    });

    it('shares the budget between HTTP and /ws subscriptions', async () => {
      const v = counting();
      const s = await api({ RATE_LIMIT_MAX_REQUESTS: '3' }, v.verify);
      const client = await WsClient.open(`ws://127.0.0.1:${s.port}/ws`, { localAddress: '127.0.0.4' });
      try {
        await client.next((m) => m.type === 'connected');
        const channel = `positions:${trader.address}`;
        const bad = () => ({ type: 'subscribe', channel, auth: wsAuth(trader, `WS_SUBSCRIBE ${channel}`, { forge: true }) });
        expect((await client.request(bad())).message).toBe(WS_ERRORS.badSignature);
        expect((await client.request(bad())).message).toBe(WS_ERRORS.badSignature);
        expect((await rawGet(s.port, '/api/v1/stats', { localAddress: '127.0.0.4', headers: signed('/stats', { forge: true }) })).status).toBe(401);
        expect(v.calls).toBe(3);
        for (let i = 0; i < 5; i++) expect((await client.request(bad())).message).toBe(WS_ERRORS.tooManyAuthFailures);
        const good = { type: 'subscribe', channel, auth: wsAuth(trader, `WS_SUBSCRIBE ${channel}`) };
        expect((await client.request(good)).message).toBe(WS_ERRORS.tooManyAuthFailures);
        expect(v.calls).toBe(3);
        // From another address the same subscription goes through.
        const other = await WsClient.open(`ws://127.0.0.1:${s.port}/ws`, { localAddress: '127.0.0.5' });
        await other.next((m) => m.type === 'connected');
        expect(await other.request({ ...good, auth: wsAuth(trader, `WS_SUBSCRIBE ${channel}`) })).toEqual({ type: 'subscribed', channel });
        await other.close();
        client.assertValid();
      } finally {
        await client.close();
        await s.close();
      }
    });
  });

  describe('what error bodies echo, unknown parameters, header encoding', () => {
    const trader = testWallet();

    it('echoes at most 64 characters of a rejected value or name, once in `error` and once in `details`', async () => {
      const s = await api(HIGH_LIMITS);
      const base = `http://127.0.0.1:${s.port}`;
      try {
        const long = (c: string) => c.repeat(14_000);
        for (const [method, path] of [
          ['GET', `/api/v1/markets/${long('x')}`],
          ['GET', `/api/v1/markets?state=${long('y')}`],
          ['GET', `/api/v1/markets?${long('z')}=1`],
          ['GET', `/api/v1/v2/referral/${long('0')}`],
          ['POST', `/api/v1/markets/${long('w')}`],
        ] as const) {
          const r = await call(`${base}${path}`, { method });
          expect([path.slice(0, 30), r.status]).toEqual([path.slice(0, 30), method === 'GET' ? 400 : 405]);
          expect(JSON.stringify(r.body).length).toBeLessThan(1024);
        }
        const echoed = await call(`${base}/api/v1/v2/referral/${long('0')}`);
        expect(echoed.body.error).toBe(`Invalid path parameter: wallet with value ${'0'.repeat(64)}… fails to match the base58 address pattern`);
        expect(echoed.body.details).toEqual([{ field: 'path.wallet', message: `wallet with value ${'0'.repeat(64)}… fails to match the base58 address pattern` }]);
        // Inside a signed auth message too (the message is checked once its signature verifies).
        const nonce = `${'n'.repeat(100)} ${'m'.repeat(20)}`;
        const message = JSON.stringify({ domain: 'localhost', chain: 'solana-mainnet', timestamp: Math.floor(Date.now() / 1000), action: 'GET /stats', nonce });
        const r = await call(`${base}/api/v1/stats`, { headers: walletHeaders(trader, 'GET /stats', { rawMessage: message }) });
        expect([r.status, r.body.code]).toEqual([401, 'UNAUTHORIZED']);
        expect(r.body.error).toContain('n'.repeat(64));
        expect(r.body.error).not.toContain(nonce);
      } finally {
        await s.close();
      }
    });

    it('refuses an unknown query parameter with 400 INVALID_PARAMETER on every documented endpoint', async () => {
      const s = await api(HIGH_LIMITS);
      const base = `http://127.0.0.1:${s.port}`;
      const signedPaths = Object.entries(doc.paths as Record<string, { get?: { security?: unknown[] } }>)
        .filter(([, op]) => op.get?.security?.some((x) => Object.keys(x as object).length > 0))
        .map(([p]) => p);
      try {
        for (const template of GET_PATHS.filter((p) => p.startsWith('/api/v1/'))) {
          const path = template.replace('{marketId}', '1').replace(/\{(wallet|address)\}/, trader.address);
          const target = `${path}?zzz=1`;
          const headers = signedPaths.includes(template) ? walletHeaders(trader, `GET ${target.slice('/api/v1'.length)}`) : {};
          const r = await call(`${base}${target}`, { headers });
          // /admin/* checks the allow-list before anything else, so a wallet outside it learns nothing (D-146).
          if (template.startsWith('/api/v1/admin/')) expect([template, r.status, r.body.code]).toEqual([template, 403, 'FORBIDDEN']);
          else expect([template, r.status, r.body.code, r.body.details?.[0]?.field]).toEqual([template, 400, 'INVALID_PARAMETER', 'query.zzz']);
        }
        // The root alias of /status too.
        expect((await call(`${base}/status?foo=1`)).status).toBe(400);
      } finally {
        await s.close();
      }
    });

    it('refuses a non-ASCII x-wallet-message with a clear 401, and verifies the same text written with JSON \\u escapes', async () => {
      const s = await api(HIGH_LIMITS);
      try {
        const signedRaw = (text: string) => {
          const bytes = Buffer.from(text, 'utf8');
          return {
            'x-wallet-pubkey': trader.address,
            'x-wallet-signature': bs58.encode(nacl.sign.detached(bytes, trader.secretKey)),
            // Sent as the UTF-8 bytes the client signed, as curl or a raw client would.
            'x-wallet-message': bytes,
          };
        };
        const fields = (memo: string) => ({ domain: 'localhost', chain: 'solana-mainnet', timestamp: Math.floor(Date.now() / 1000), action: 'GET /stats', nonce: `n-${Math.random()}`, memo });
        const raw = await rawGet(s.port, '/api/v1/stats', { headers: signedRaw(JSON.stringify(fields('café 😀'))) });
        expect([raw.status, raw.json]).toEqual([401, { error: NON_ASCII_MESSAGE, code: 'UNAUTHORIZED' }]);
        // The same message with its non-ASCII characters escaped is ASCII, and parses to the same text.
        const escaped = JSON.stringify(fields('café 😀')).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
        expect(JSON.parse(escaped).memo).toBe('café 😀');
        expect((await rawGet(s.port, '/api/v1/stats', { headers: signedRaw(escaped) })).status).toBe(200);
      } finally {
        await s.close();
      }
    });
  });
});
