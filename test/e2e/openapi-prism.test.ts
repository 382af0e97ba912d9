import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { createDatabase, type Database } from '../../core/db';
import { createIndexer } from '../../indexer/indexer';
import { createSimulatorSource } from '../../simulator/source';
import { createApp } from '../../server/app';
import { v1Presentation } from '../../server/routes';
import { aliasOperationsOf, parametersOf, type ParameterSchema } from '../../server/routes/contract';
import { aliasHeaders, LEGACY_PREFIX, type AliasMatch } from '../../server/http/aliases';
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

  it('detects an alias answered without its alias headers (they are declared required)', async () => {
    // The real API behind a relay that drops the deprecation headers: the bodies stay right.
    const DROPPED = ['deprecation', 'link', 'x-service-canonical-path'];
    const relay = http.createServer((req, res) => {
      void fetch(`${apiUrl}${req.url}`).then(async (r) => {
        const body = Buffer.from(await r.arrayBuffer());
        r.headers.forEach((v, k) => {
          if (![...DROPPED, 'content-length', 'content-encoding', 'transfer-encoding', 'connection'].includes(k)) res.setHeader(k, v);
        });
        res.statusCode = r.status;
        res.end(body);
      });
    });
    await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
    const relayed = await startPrism(`http://127.0.0.1:${(relay.address() as { port: number }).port}`);
    try {
      // Prism's forwarder adds `Deprecation: true` itself to any answer of a deprecated
      // operation, so that header is checked against the service directly in the next case.
      const res = await fetch(`${relayed.url}/config`);
      expect(res.status).toBe(200);
      const found = JSON.parse(res.headers.get('sl-violations') ?? '[]') as { location: string[]; message: string }[];
      expect(found.filter((v) => v.location.join('.') === 'response.header').map((v) => v.message)).toEqual([
        "Response header must have required property 'link'",
        "Response header must have required property 'x-service-canonical-path'",
      ]);
      // The canonical path carries none of them, and none is wanted there.
      expect((await fetch(`${relayed.url}/api/v1/config`)).headers.get('sl-violations')).toBeNull();
    } finally {
      await stop(relayed.child);
      await new Promise((r) => relay.close(r));
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
    const count = { canonical: 0, alias: 0 };
    type Tally = keyof typeof count;
    const send = async (route: RouteDef, target: string, headers: Record<string, string> = {}, tally: Tally = 'canonical') => {
      const res = await fetch(`${prism.url}${target}`, { method: route.method, headers });
      await res.arrayBuffer();
      count[tally] += 1;
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
    // A request as the route table knows it (`rel`: its path under the prefix, with any query),
    // sent to one form of its path: canonical, a root alias, or the legacy /api/ prefix. The
    // signed action is the target after the prefix, which an alias is rewritten to (spec 5).
    type Form = { at: (rel: string) => string; require?: string; kind?: AliasMatch['kind'] };
    // Prism adds `Deprecation` itself to answers of deprecated operations: the alias headers
    // are also checked on the service's own answers.
    const headerMismatches: string[] = [];
    const checkAliasHeaders = async (form: Form, route: RouteDef, path: string, rel: string) => {
      if (!form.kind) return;
      const target = form.at(rel);
      const res = await fetch(`${apiUrl}${target}`, { method: route.method, headers: route.access.by === 'wallet' ? walletHeaders(trader, `${route.method} ${rel}`) : {} });
      await res.arrayBuffer();
      const wanted = aliasHeaders({ canonical: `${v1Presentation.prefix}${path}`, kind: form.kind });
      const got = Object.fromEntries(Object.keys(wanted).map((h) => [h, res.headers.get(h)]));
      if (JSON.stringify(got) !== JSON.stringify(wanted)) headerMismatches.push(`${route.method} ${target} → ${res.status} ${JSON.stringify(got)}`);
    };
    const canonicalForm: Form = { at: (rel) => `${v1Presentation.prefix}${rel}` };
    const sendAs = (form: Form, route: RouteDef, rel: string, headers?: Record<string, string> | 'sign') => {
      const target = form.at(rel);
      const h = headers === 'sign' ? (route.access.by === 'wallet' ? walletHeaders(trader, `${route.method} ${rel}`) : {}) : headers;
      return send(route, target, h, form.kind ? 'alias' : 'canonical');
    };

    /** Every operation's traffic through one form: valid values, each rule broken, an unknown parameter, bad signatures. */
    const traffic = async (route: RouteDef, form: Form) => {
      const params = parametersOf(route);
      const pathParams = params.filter((p) => p.in === 'path');
      // A query-conditioned alias (`/orders?tx=`) is only that alias with its parameter: every request names it.
      const required = form.require;
      const queryParams = params.filter((p) => p.in === 'query');
      const fill = (values: Record<string, string>) => route.path.replace(/:(\w+)/g, (_, n: string) => encodeURIComponent(values[n]!));
      const withQuery = (path: string, pairs: [string, string][]) => {
        const all: [string, string][] = required && !pairs.some(([n]) => n === required) ? [[required, goodQuery[required]![0]!], ...pairs] : pairs;
        return all.length ? `${path}?${all.map(([n, v]) => `${n}=${encodeURIComponent(v)}`).join('&')}` : path;
      };
      const pathSets: Record<string, string>[] = pathParams.length ? (pathValue[pathParams[0]!.name] ?? []).map((v) => ({ [pathParams[0]!.name]: v })) : [{}];
      for (const values of pathSets) {
        const path = fill(values);
        await sendAs(form, route, withQuery(path, []), 'sign');
        await checkAliasHeaders(form, route, path, withQuery(path, []));
        await checkAliasHeaders(form, route, path, withQuery(path, [['bogus', '1']]));
        if (route.conditional) {
          const first = await fetch(`${apiUrl}${form.at(withQuery(path, []))}`);
          const etag = first.headers.get('etag');
          if (etag) await sendAs(form, route, withQuery(path, []), { 'if-none-match': etag });
        }
        for (const p of queryParams) {
          for (const v of [...goodValues(p.schema), ...(goodQuery[p.name] ?? []), ...badValues(p.schema)]) {
            await sendAs(form, route, withQuery(path, [[p.name, v]]), 'sign');
          }
        }
        await sendAs(form, route, withQuery(path, [['bogus', '1']]), 'sign');
      }
      const firstValues = () => Object.fromEntries(pathParams.map((x) => [x.name, pathValue[x.name]![0]!]));
      for (const p of pathParams) {
        for (const v of badValues(p.schema)) {
          if (v === '') continue;
          await sendAs(form, route, withQuery(fill({ ...firstValues(), [p.name]: v }), []), 'sign');
        }
      }
      if (route.access.by === 'wallet') {
        const rel = withQuery(fill(firstValues()), []);
        await sendAs(form, route, rel, {});
        await sendAs(form, route, rel, walletHeaders(trader, `${route.method} ${rel}`, { forge: true }));
        await sendAs(form, route, rel, walletHeaders(trader, `${route.method} ${rel}`, { timestamp: 1 }));
      }
    };

    const routes = v1Presentation.routes({ chainId: 'solana-mainnet' } as RouteDeps);
    // The deprecated aliases (D-168): the same traffic through each root alias and the legacy
    // /api/ prefix, answered as their own (deprecated) operations with the alias headers.
    const aliases = aliasOperationsOf(v1Presentation.prefix, routes);
    const jobs: [RouteDef, Form][] = [
      ...routes.map((route): [RouteDef, Form] => [route, canonicalForm]),
      ...aliases.map((alias): [RouteDef, Form] => [
        alias.route,
        alias.kind === 'root' ? { at: (rel) => rel, kind: alias.kind, ...(alias.query ? { require: alias.query } : {}) } : { at: (rel) => `${LEGACY_PREFIX}${rel}`, kind: alias.kind },
      ]),
    ];
    // Each operation's traffic in order, four operations at a time: Prism and the API each get
    // a core instead of taking turns on one (every request is signed with a fresh nonce).
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < jobs.length) await traffic(...jobs[next++]!);
      }),
    );
    for (const ops of ['/health', '/ready', '/metrics']) await send({ method: 'GET' } as RouteDef, ops);

    expect(violations).toEqual([]);
    expect(headerMismatches).toEqual([]);
    // The traffic reached what it is meant to check.
    expect(count.canonical).toBeGreaterThan(250);
    expect(count.alias).toBeGreaterThan(400);
    expect(aliases.filter((a) => a.kind === 'root').length).toBeGreaterThanOrEqual(8);
    for (const status of [200, 304, 400, 401, 404]) expect([status, statuses.get(status) ?? 0]).not.toEqual([status, 0]);
  }, 600_000); // about 950 requests through Prism: 10 s idle, several times that on a loaded machine
});
