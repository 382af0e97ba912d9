import net from 'node:net';
import bs58 from 'bs58';
import nacl from 'tweetnacl';
import { createDatabase, type Database } from '../../core/db';
import { call, HIGH_LIMITS, testWallet, walletHeaders } from '../support/api';
import { createApiServers } from '../support/api-servers';
import { testCommon } from '../support/common';
import { createTestDatabase, type TestDatabase } from '../support/pg';
import { testTenant } from '../support/redis';

const HIGH = { ...HIGH_LIMITS, RATE_LIMIT_COMPLIANCE_MAX: '100000' };
const POLICY = { GEO_BLOCKED_COUNTRIES: 'XB,XC', ATTESTATION_REQUIRED_COUNTRIES: 'XA', GEO_COUNTRY_HEADER: 'CF-IPCountry' };
const wallet = testWallet;
// No market exists: a request the policy lets through is refused by the route's own check.
const ORDER = { market: bs58.encode(Buffer.alloc(32, 3)), side: 'buy_yes', priceBps: 100, quantity: '5' };

describe('451 jurisdiction policy and POST /attestations (real signatures, PostgreSQL, Redis)', () => {
  let tdb: TestDatabase;
  let database: Database;
  const apis = createApiServers();

  async function start(env: Record<string, string>) {
    return apis.start(testCommon({ TENANT_ID: testTenant(), ...HIGH, ...env }), database.db);
  }
  beforeAll(async () => {
    tdb = await createTestDatabase();
    database = createDatabase({ url: tdb.url, poolMax: 4 });
  });
  afterAll(async () => {
    await apis.closeAll();
    await database.close();
    await tdb.drop();
  });

  const placeOrder = (base: string, key: ReturnType<typeof wallet>, country?: string) =>
    call(`${base}/api/v1/tx/place-order`, {
      method: 'POST',
      headers: { ...walletHeaders(key, 'POST /tx/place-order'), 'content-type': 'application/json', ...(country ? { 'cf-ipcountry': country } : {}) },
      body: JSON.stringify(ORDER),
    });
  const attest = (base: string, key: ReturnType<typeof wallet>, body: Record<string, string>) =>
    call(`${base}/api/v1/attestations`, { method: 'POST', headers: { ...walletHeaders(key, 'POST /attestations'), 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const statementOf = (key: ReturnType<typeof wallet>, country: string) => {
    const statement = `I, holder of wallet ${key.address}, attest that I may trade under the rules of ${country}.`;
    return { country, statement, signature: bs58.encode(nacl.sign.detached(Buffer.from(statement), key.secretKey)) };
  };

  it('is off by default: the country header changes nothing', async () => {
    const base = await start({ TRUST_PROXY: 'loopback', GEO_COUNTRY_HEADER: 'CF-IPCountry' });
    const r = await placeOrder(base, wallet(), 'XB');
    expect([r.status, r.body.code]).toEqual([400, 'VALIDATION_ERROR']);
  });

  it('answers 451 GEO_BLOCKED for a blocked country from a trusted proxy, and not for others', async () => {
    const base = await start({ TRUST_PROXY: 'loopback', ...POLICY });
    const blocked = await placeOrder(base, wallet(), 'xc');
    expect([blocked.status, blocked.body.code]).toEqual([451, 'GEO_BLOCKED']);
    expect((await placeOrder(base, wallet(), 'FR')).status).toBe(400);
    expect((await placeOrder(base, wallet())).status).toBe(400); // unknown country
    // Routes outside GEO_POLICY_PATHS are not covered.
    expect((await call(`${base}/api/v1/markets`, { headers: { 'cf-ipcountry': 'XB' } })).status).toBe(200);
  });

  it('ignores a forged country header from an address TRUST_PROXY does not trust', async () => {
    const base = await start({ TRUST_PROXY: '10.0.0.1', ...POLICY });
    const r = await placeOrder(base, wallet(), 'XB');
    expect([r.status, r.body.code]).toEqual([400, 'VALIDATION_ERROR']);
  });

  it('answers 451 ATTESTATION_REQUIRED until the wallet attests, per wallet and country', async () => {
    const base = await start({ TRUST_PROXY: 'loopback', ...POLICY });
    const w = wallet();
    const before = await placeOrder(base, w, 'XA');
    expect([before.status, before.body.code]).toEqual([451, 'ATTESTATION_REQUIRED']);
    // Refused attestations: another wallet's signature, a statement naming neither wallet nor country.
    const other = wallet();
    const forged = { ...statementOf(w, 'XA'), signature: statementOf(other, 'XA').signature };
    expect((await attest(base, w, forged)).body.details.map((d: { field: string }) => d.field)).toEqual(['body.signature']);
    const vague = 'I attest that I may trade here, honestly.';
    const vagueBody = { country: 'XA', statement: vague, signature: bs58.encode(nacl.sign.detached(Buffer.from(vague), w.secretKey)) };
    expect((await attest(base, w, vagueBody)).body.details.map((d: { field: string }) => d.field)).toEqual(['body.statement', 'body.statement']);
    expect((await placeOrder(base, w, 'XA')).status).toBe(451);

    const ok = await attest(base, w, statementOf(w, 'XA'));
    expect(ok.status).toBe(200);
    expect(ok.body.data.attestation).toMatchObject({ wallet: w.address, country: 'XA' });
    const stored = await database.db.one('SELECT statement, signature FROM attestations WHERE wallet = $1', [w.address]);
    expect(stored).toEqual({ statement: statementOf(w, 'XA').statement, signature: statementOf(w, 'XA').signature });
    const after = await placeOrder(base, w, 'XA');
    expect([after.status, after.body.code]).toEqual([400, 'VALIDATION_ERROR']);
    // Another wallet from the same country still needs its own.
    expect((await placeOrder(base, other, 'XA')).status).toBe(451);
    // A revoked attestation no longer counts.
    await database.db.none("UPDATE attestations SET revoked_at = now(), revoked_by = 'test' WHERE wallet = $1", [w.address]);
    expect((await placeOrder(base, w, 'XA')).status).toBe(451);
  });

  /** A signed POST /tx/place-order over a raw socket, with the country header lines given (each its own line). */
  async function rawPlaceOrder(base: string, countryLines: string[]): Promise<{ status: number; code?: string }> {
    const body = JSON.stringify(ORDER);
    const lines = [
      'POST /api/v1/tx/place-order HTTP/1.1',
      'host: localhost',
      'connection: close',
      'content-type: application/json',
      `content-length: ${Buffer.byteLength(body)}`,
      ...Object.entries(walletHeaders(wallet(), 'POST /tx/place-order')).map(([k, v]) => `${k}: ${v}`),
      ...countryLines.map((v) => `cf-ipcountry: ${v}`),
    ];
    const socket = net.connect({ port: Number(new URL(base).port), host: '127.0.0.1' });
    const chunks: Buffer[] = [];
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.write(`${lines.join('\r\n')}\r\n\r\n${body}`);
    await new Promise((r) => socket.once('close', r));
    const raw = Buffer.concat(chunks).toString('utf8');
    const json = raw.slice(raw.indexOf('\r\n\r\n') + 4);
    return { status: Number(raw.split(' ')[1]), code: (JSON.parse(json) as { code?: string }).code };
  }

  it('blocks a malformed or repeated country header from a listed proxy instead of treating it as unknown (issue 31 finding 6)', async () => {
    const base = await start({ TRUST_PROXY: 'loopback', ...POLICY });
    const blocked = { status: 451, code: 'GEO_BLOCKED' };
    expect(await rawPlaceOrder(base, ['US', 'XB'])).toEqual(blocked);
    expect(await rawPlaceOrder(base, ['FR', 'FR'])).toEqual(blocked);
    expect(await rawPlaceOrder(base, ['US, XB'])).toEqual(blocked);
    for (const v of ['', 'USA', 'T1', 'X']) expect([v, await rawPlaceOrder(base, [v])]).toEqual([v, blocked]);
    // One code, whatever its case, is that country; none at all is unknown.
    expect(await rawPlaceOrder(base, ['fr'])).toEqual({ status: 400, code: 'VALIDATION_ERROR' });
    expect(await rawPlaceOrder(base, [])).toEqual({ status: 400, code: 'VALIDATION_ERROR' });
  });

  it('refuses to start a policy whose header it could never believe: TRUST_PROXY a hop count or true, or no header (issue 31 finding 6)', async () => {
    // With a hop count the peer at hop 0 is trusted whoever it is: a client that reached the API
    // directly would choose its own country.
    await expect(start({ TRUST_PROXY: '1', ...POLICY })).rejects.toThrow(/TRUST_PROXY=1 names none/);
    await expect(start({ TRUST_PROXY: 'true', ...POLICY })).rejects.toThrow(/TRUST_PROXY=true names none/);
    const { GEO_COUNTRY_HEADER: _header, ...noHeader } = POLICY;
    await expect(start({ TRUST_PROXY: 'loopback', ...noHeader })).rejects.toThrow(/need GEO_COUNTRY_HEADER/);
    // A subnet list is what Express's trust proxy takes, and the header is believed from it.
    const base = await start({ TRUST_PROXY: '10.0.0.0/8,127.0.0.0/8', ...POLICY });
    expect((await placeOrder(base, wallet(), 'XB')).status).toBe(451);
  });
});
