import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { createDatabase, type Database } from '../../core/db';
import { createIndexer } from '../../indexer/indexer';
import { createSimulatorSource } from '../../indexer/sources/simulator';
import { createApp } from '../../server/app';
import { v1Presentation } from '../../server/routes';
import { parametersOf, type ParameterContract, type ParameterSchema } from '../../server/routes/contract';
import type { RouteDef, RouteDeps } from '../../server/routes/table';
import { createApiStores } from '../../server/stores';
import { keyPairOf } from '../../simulator/ids';
import { walletHeaders } from '../support/api';
import { testCommon } from '../support/common';
import { freePort } from '../support/free-port';
import { PROGRAM_ID } from '../support/indexer';
import { OPENAPI_PATH } from '../support/openapi';
import { createTestDatabase, type TestDatabase } from '../support/pg';

/**
 * The OpenAPI document checked by a tool nobody here wrote: Stoplight Prism as a validating
 * proxy in front of the real API (issue 24). Request validation is off, so requests the
 * document forbids are forwarded and the service's own 400s are checked too; every response is
 * validated against the document, and Prism reports what breaks it in `sl-violations`.
 * The traffic is every operation of the route table with valid values, each rule's boundary
 * broken, unknown parameters, unsigned and forged signatures, and conditional reads.
 */
const PRISM = path.resolve(__dirname, '../../node_modules/@stoplight/prism-cli/dist/index.js');

async function startPrism(upstream: string): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, [PRISM, 'proxy', OPENAPI_PATH, upstream, '--port', String(port), '--host', '127.0.0.1', '--errors=false', '--validate-request=false'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const seen = (b: Buffer) => {
      out += b.toString();
      if (out.includes('Prism is listening')) resolve();
    };
    child.stdout!.on('data', seen);
    child.stderr!.on('data', seen);
    child.once('exit', (code) => reject(new Error(`prism exited ${code}: ${out.slice(-2000)}`)));
  });
  // Prism logs a line per request: keep the pipes drained.
  child.stdout!.resume();
  child.stderr!.resume();
  return { url: `http://127.0.0.1:${port}`, child };
}

const stop = (c: ChildProcess) => new Promise<void>((r) => (c.exitCode !== null ? r() : (c.once('exit', () => r()), c.kill('SIGTERM'))));

/** Values that break each rule of a parameter (each one alone), and values that keep them. */
function badValues(s: ParameterSchema): string[] {
  if (s.anyOf) return ['!', '0'.repeat(21)];
  const bad = ['', 'x'.repeat(300)];
  if (s.type === 'integer' || s.type === 'number') bad.push('abc', '1.5', '-1');
  if (s.maximum !== undefined) bad.push(String(s.maximum + 1));
  if (s.minimum !== undefined) bad.push(String(s.minimum - 1));
  if (s.enum) bad.push('not-a-choice');
  if (s.pattern) bad.push('0OIl!');
  if (s.maxLength !== undefined) bad.push('a'.repeat(s.maxLength + 1));
  if (s.type === 'boolean') bad.push('yes');
  return bad;
}
function goodValues(s: ParameterSchema): string[] {
  const good: string[] = [];
  if (s.enum) good.push(...s.enum.map(String));
  if (s.minimum !== undefined) good.push(String(s.minimum));
  if (s.maximum !== undefined) good.push(String(s.maximum));
  if (s.type === 'boolean') good.push('true', 'false');
  return good;
}

describe('openapi.yaml against the served API through Stoplight Prism (a validating proxy)', () => {
  let tdb: TestDatabase;
  let database: Database;
  let api: http.Server;
  let apiUrl: string;
  let prism: { url: string; child: ChildProcess };
  const trader = keyPairOf('wallet:4242:0');

  beforeAll(async () => {
    tdb = await createTestDatabase();
    database = createDatabase({ url: tdb.url, poolMax: 4 });
    // Generous limits: the run is about shapes, not about 429s (limits-rest covers those).
    const common = testCommon({ PROGRAM_ID, RATE_LIMIT_MAX_REQUESTS: '100000', PUBLIC_READ_RATE_LIMIT_MAX_REQUESTS: '100000', RATE_LIMIT_SENSITIVE_MAX: '100000' });
    const source = createSimulatorSource({ seed: 4242, programId: PROGRAM_ID, untilSlot: 1_200, epochSeconds: 30 });
    await createIndexer({ common, db: database.db, pgp: database.pgp, databaseUrl: tdb.url, updates: undefined, source }).run();
    api = http.createServer(createApp({ common, db: database.db, ...createApiStores(common, undefined) }));
    await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
    apiUrl = `http://127.0.0.1:${(api.address() as { port: number }).port}`;
    prism = await startPrism(apiUrl);
  }, 120_000);
  afterAll(async () => {
    if (prism) await stop(prism.child);
    await new Promise((r) => api?.close(r));
    await database?.close();
    await tdb?.drop();
  });

  it('detects a response that breaks the document (the check can fail)', async () => {
    const stub = http.createServer((_req, res) => res.setHeader('content-type', 'application/json').end('{"data":{"market":42}}'));
    await new Promise<void>((r) => stub.listen(0, '127.0.0.1', r));
    const broken = await startPrism(`http://127.0.0.1:${(stub.address() as { port: number }).port}`);
    try {
      const res = await fetch(`${broken.url}/api/v1/markets/current`);
      expect(res.headers.get('sl-violations')).toContain('response');
    } finally {
      await stop(broken.child);
      await new Promise((r) => stub.close(r));
    }
  }, 60_000);

  it('answers every operation, valid or not, only as the document says', async () => {
    const market = await database.db.one<{ address: string; market_id: string }>('SELECT address, market_id::text FROM markets ORDER BY id LIMIT 1');
    const wallet = await database.db.one<{ owner: string }>('SELECT owner FROM positions GROUP BY owner ORDER BY count(*) DESC LIMIT 1');
    const tx = await database.db.one<{ tx_signature: string }>('SELECT tx_signature FROM trades LIMIT 1');
    const pathValue: Record<string, string[]> = {
      marketId: [market.address, market.market_id, '999999999', '1111111111111111111111111111111111'],
      wallet: [wallet.owner, trader.address],
      address: [wallet.owner],
      // /admin/attestations/:id/revoke (a non-admin wallet: 403, D-146).
      id: ['1', '999999'],
    };
    const goodQuery: Record<string, string[]> = { tx: [tx.tx_signature], market: [market.address], owner: [trader.address], mint: [market.address], chain: ['solana-mainnet'] };

    const violations: string[] = [];
    const statuses = new Map<number, number>();
    let requests = 0;
    const send = async (route: RouteDef, target: string, headers: Record<string, string> = {}) => {
      const res = await fetch(`${prism.url}${target}`, { method: route.method, headers });
      await res.arrayBuffer();
      requests += 1;
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      const v = res.headers.get('sl-violations');
      // Prism checks a request's security even with request validation off: an unsigned
      // request to a signed route is one the traffic sends on purpose, and only that.
      const found = v ? (JSON.parse(v) as { location: string[]; message: string }[]) : [];
      const unsigned = !headers['x-wallet-signature'];
      for (const x of found) {
        if (x.location[0] === 'request' && x.message === 'Invalid security scheme used' && unsigned) continue;
        violations.push(`${route.method} ${target} → ${res.status}: ${JSON.stringify(x).slice(0, 400)}`);
      }
      return res;
    };
    const signed = (route: RouteDef, target: string) =>
      route.access.by === 'wallet' ? walletHeaders(trader, `${route.method} ${target.slice(v1Presentation.prefix.length)}`) : {};

    for (const route of v1Presentation.routes({ chainId: 'solana-mainnet' } as RouteDeps)) {
      const params = parametersOf(route);
      const pathParams = params.filter((p) => p.in === 'path');
      const queryParams = params.filter((p) => p.in === 'query');
      const fill = (values: Record<string, string>) => route.path.replace(/:(\w+)/g, (_, n: string) => encodeURIComponent(values[n]!));
      const pathSets: Record<string, string>[] = pathParams.length
        ? (pathValue[pathParams[0]!.name] ?? []).map((v) => ({ [pathParams[0]!.name]: v }))
        : [{}];
      for (const values of pathSets) {
        const base = `${v1Presentation.prefix}${fill(values)}`;
        await send(route, base, signed(route, base));
        if (route.conditional) {
          const first = await fetch(`${apiUrl}${base}`);
          const etag = first.headers.get('etag');
          if (etag) await send(route, base, { 'if-none-match': etag });
        }
        const q = (p: ParameterContract, v: string) => `${base}?${p.name}=${encodeURIComponent(v)}`;
        for (const p of queryParams) {
          for (const v of [...goodValues(p.schema), ...(goodQuery[p.name] ?? []), ...badValues(p.schema)]) {
            const target = q(p, v);
            await send(route, target, signed(route, target));
          }
        }
        const unknown = `${base}?bogus=1`;
        await send(route, unknown, signed(route, unknown));
      }
      for (const p of pathParams) {
        for (const v of badValues(p.schema)) {
          if (v === '') continue;
          const target = `${v1Presentation.prefix}${fill({ ...Object.fromEntries(pathParams.map((x) => [x.name, pathValue[x.name]![0]!])), [p.name]: v })}`;
          await send(route, target, signed(route, target));
        }
      }
      if (route.access.by === 'wallet') {
        const base = `${v1Presentation.prefix}${fill(Object.fromEntries(pathParams.map((x) => [x.name, pathValue[x.name]![0]!])))}`;
        await send(route, base);
        await send(route, base, walletHeaders(trader, `${route.method} ${base.slice(v1Presentation.prefix.length)}`, { forge: true }));
        await send(route, base, walletHeaders(trader, `${route.method} ${base.slice(v1Presentation.prefix.length)}`, { timestamp: 1 }));
      }
    }
    for (const ops of ['/health', '/ready', '/metrics']) await send({ method: 'GET' } as RouteDef, ops);

    expect(violations).toEqual([]);
    // The traffic reached what it is meant to check.
    expect(requests).toBeGreaterThan(250);
    for (const status of [200, 304, 400, 401, 404]) expect([status, statuses.get(status) ?? 0]).not.toEqual([status, 0]);
  }, 300_000);
});
