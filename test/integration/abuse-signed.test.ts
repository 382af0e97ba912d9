import bs58 from 'bs58';
import nacl from 'tweetnacl';
import { verifyEd25519 } from '../../core/ed25519';
import { call, HIGH_LIMITS, testWallet, walletHeaders } from '../support/api';
import { apiSuite } from '../support/api-servers';
import { testCommon } from '../support/common';
import { testTenant } from '../support/redis';

// No market exists: a request that passes the limits is refused by the route's own check (400).
const ORDER = { market: bs58.encode(Buffer.alloc(32, 7)), side: 'buy_yes', priceBps: 100, quantity: '5' };

/** Issue 31 finding 2: fresh keypairs from one address (D-187). */
describe('signed routes spend a per-address bucket besides the wallet\'s (real signatures, PostgreSQL, Redis)', () => {
  const apis = apiSuite();

  const placeOrder = (base: string, from?: string) =>
    call(`${base}/api/v1/tx/place-order`, {
      method: 'POST',
      headers: { ...walletHeaders(testWallet(), 'POST /tx/place-order'), 'content-type': 'application/json', ...(from ? { 'x-forwarded-for': from } : {}) },
      body: JSON.stringify(ORDER),
    });

  it('/tx: one address gets RATE_LIMIT_WALLETS_PER_IP wallets\' worth of the sensitive tier, whatever the keypairs; then 429 unverified', async () => {
    let verified = 0;
    const common = testCommon({ TENANT_ID: testTenant(), ...HIGH_LIMITS, RATE_LIMIT_SENSITIVE_MAX: '2', RATE_LIMIT_WALLETS_PER_IP: '3', TRUST_PROXY: 'loopback' });
    const base = await apis.start(common, apis.db, { verifySignature: (m, s, k) => (verified++, verifyEd25519(m, s, k)) });
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) {
      const r = await placeOrder(base);
      statuses.push(r.status);
      if (r.status === 429) expect([r.body.code, Number(r.headers.get('retry-after')) > 0]).toEqual(['RATE_LIMITED', true]);
    }
    // 3 wallets' worth of 2: six new wallets served, then every new one refused.
    expect(statuses).toEqual([...Array(6).fill(400), ...Array(14).fill(429)]);
    // The sixth spent the bucket's last request: from then on nothing the address signs is verified.
    expect(verified).toBe(6);
    const exceeded = (await common.metrics.rateLimitExceeded.get()).values.filter((v) => v.value > 0).map((v) => [v.labels.tier, v.value]);
    expect(exceeded).toEqual([['sensitive_per_ip', 14]]);
    const max = (await common.metrics.rateLimitMax.get()).values.find((v) => v.labels.tier === 'sensitive_per_ip');
    expect(max?.value).toBe(6);
    // Another address has its own bucket.
    expect((await placeOrder(base, '203.0.113.9')).status).toBe(400);
  });

  it('/attestations: stored per address at most compliance × RATE_LIMIT_WALLETS_PER_IP a window', async () => {
    const base = await apis.start(testCommon({ TENANT_ID: testTenant(), ...HIGH_LIMITS, RATE_LIMIT_COMPLIANCE_MAX: '1' }), apis.db);
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      const w = testWallet();
      const statement = `I, holder of wallet ${w.address}, attest that I may trade under the rules of XA.`;
      const body = { country: 'XA', statement, signature: bs58.encode(nacl.sign.detached(Buffer.from(statement), w.secretKey)) };
      const r = await call(`${base}/api/v1/attestations`, { method: 'POST', headers: { ...walletHeaders(w, 'POST /attestations'), 'content-type': 'application/json' }, body: JSON.stringify(body) });
      statuses.push(r.status);
    }
    expect(statuses).toEqual([...Array(5).fill(200), ...Array(7).fill(429)]);
    expect((await apis.db.one<{ n: number }>('SELECT count(*)::int AS n FROM attestations')).n).toBe(5);
  });
});
