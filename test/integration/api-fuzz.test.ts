import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import YAML from 'yaml';
import { createIndexer } from '../../indexer/indexer';
import { createSimulatorSource } from '../../simulator/source';
import { createApp } from '../../server/app';
import { startApiServer } from '../../server/run';
import { createApiStores, createLiveStores } from '../../server/stores';
import { call, serve } from '../support/api';
import { testCommon } from '../support/common';
import { PROGRAM_ID, projectionDb, type ProjectionDb } from '../support/indexer';
import { assertErrorEnvelope, OPENAPI_PATH } from '../support/openapi';
import { rawGet } from '../support/raw-http';

const doc = YAML.parse(readFileSync(OPENAPI_PATH, 'utf8')) as { paths: Record<string, { get?: { parameters?: { name?: string; $ref?: string }[] } }> };
const PATHS = Object.keys(doc.paths).filter((p) => doc.paths[p]!.get && p !== '/metrics');
const ALL_GET_PATHS = Object.keys(doc.paths).filter((p) => doc.paths[p]!.get);
const QUERY_NAMES = ['limit', 'offset', 'state', 'chain', 'tx', 'status', 'settled', 'owner', 'days', 'cursor', 'outcome', 'market', 'metric', 'mint', 'x'];

const hostile = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.integer().map(String),
  fc.double().map(String),
  fc.constantFrom(
    "' OR 1=1 --", "1; DROP TABLE markets", '%00', '\u0000', '../../etc/passwd', '9'.repeat(300), '-1', '1e309', 'NaN', 'Infinity',
    'true', 'null', '[]', '{}', '11111111111111111111111111111111', '0'.repeat(44), 'I'.repeat(88), '$1', '\\x41', '😀'.repeat(10),
  ),
);
const junkAuth = fc.record(
  {
    'x-wallet-pubkey': fc.oneof(fc.string({ maxLength: 60 }), fc.constant('11111111111111111111111111111111')),
    'x-wallet-signature': fc.string({ maxLength: 120 }),
    'x-wallet-message': fc.oneof(fc.string({ maxLength: 300 }), fc.json({ maxDepth: 2 })),
    'x-wallet-chain': fc.string({ maxLength: 20 }),
  },
  { requiredKeys: [] },
);

/**
 * Raw pieces of a request target, sent byte for byte (no percent-encoding by the client): broken
 * and well-formed escapes, delimiters, characters a URL must not hold raw, non-ASCII text (sent
 * as UTF-8). CR and LF are left out: they end the request line, which is request smuggling,
 * not a path.
 */
const rawPiece = fc.oneof(
  fc.constantFrom('%', '%f', '%ff', '%fe', '%E0%A4', '%E0%A4%A4', '%C0%AF', '%ED%A0%80', '%zz', '%00', '%2F', '%2f', '%25', '%3F', '%23', '%20', '+'),
  fc.constantFrom('/', '//', '?', '&', '=', '#', ';', ',', '.', '..', ' ', '\t', '"', '<', '>', '\\', '^', '`', '{', '|', '}', '\u0000', '\u007f', 'é', '😀', '\u00ff'),
  fc.string({ maxLength: 6 }),
  fc.string({ unit: 'binary', maxLength: 3 }),
  fc.constantFrom('1', '11111111111111111111111111111111', '9'.repeat(30), '-1', 'true'),
);
const rawText = fc.array(rawPiece, { maxLength: 6 }).map((a) => a.join('').replace(/[\r\n]/g, ''));

describe('hostile input on every documented endpoint', () => {
  let p: ProjectionDb;
  let api: { url: string; close(): Promise<void> };
  let rawPort: number;
  const common = testCommon({ PROGRAM_ID, API_PORT: '0', API_HOST: '127.0.0.1', PUBLIC_READ_RATE_LIMIT_MAX_REQUESTS: '1000000', RATE_LIMIT_MAX_REQUESTS: '1000000', RATE_LIMIT_SENSITIVE_MAX: '1000000' });

  beforeAll(async () => {
    p = await projectionDb();
    await createIndexer({ common, db: p.database.db, pgp: p.database.pgp, databaseUrl: p.tdb.url, updates: undefined, source: createSimulatorSource({ seed: 1313, programId: PROGRAM_ID, untilSlot: 300 }) }).run();
    api = await serve(createApp({ common, db: p.database.db, ...createApiStores(common, undefined) }));
    // The HTTP server as the API process runs it, for targets only a raw client sends.
    const live = createLiveStores(common, undefined);
    common.shutdown.add('live', () => live.close());
    rawPort = (await startApiServer({ common, db: p.database.db, redis: undefined, live, busCarriesIndexer: false })).port;
  });
  afterAll(async () => {
    await api.close();
    await common.shutdown.run('test');
    await p.close();
  });

  it('never answers a raw (unencoded) path or query with a 5xx or without the error envelope, on any route or alias (2,000 cases)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ALL_GET_PATHS),
        fc.constantFrom('/api/v1', '/api', ''),
        fc.array(rawText, { minLength: 2, maxLength: 2 }),
        fc.option(fc.array(fc.tuple(fc.oneof(fc.constantFrom(...QUERY_NAMES), rawText), fc.option(rawText)), { maxLength: 4 })),
        async (template, prefix, pathValues, query) => {
          let i = 0;
          const path = template.replace(/^\/api\/v1(?=\/)/, prefix).replace(/\{\w+\}/g, () => pathValues[i++] ?? 'x');
          const qs = query === null ? '' : `?${query.map(([k, v]) => (v === null ? k : `${k}=${v}`)).join('&')}`;
          const r = await rawGet(rawPort, `${path}${qs}`);
          expect(r.status).toBeLessThan(500);
          if (r.status >= 400) assertErrorEnvelope(r.json);
          expect(r.body).not.toMatch(/at \w+ \(|node_modules|SELECT |INSERT |syntax error|pg-protocol/);
        },
      ),
      { numRuns: 2_000 },
    );
  }, 120_000);

  it('never answers with a 5xx, a stack, SQL or a shape openapi.yaml does not document (2,000 cases)', async () => {
    const headerSafe = (v: unknown) => String(typeof v === 'string' ? v : JSON.stringify(v)).replace(/[^\x20-\x7e]/g, '?');
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...PATHS),
        fc.array(hostile, { minLength: 2, maxLength: 2 }),
        fc.array(fc.tuple(fc.constantFrom(...QUERY_NAMES), hostile), { maxLength: 4 }),
        junkAuth,
        async (template, pathValues, query, auth) => {
          let i = 0;
          const path = template.replace(/\{\w+\}/g, () => encodeURIComponent(pathValues[i++] ?? 'x'));
          const qs = new URLSearchParams(query).toString();
          const headers = Object.fromEntries(Object.entries(auth).map(([k, v]) => [k, headerSafe(v)]));
          // call() validates status and body against openapi.yaml.
          const r = await call(`${api.url}${path}${qs ? `?${qs}` : ''}`, { headers });
          expect(r.status).toBeLessThan(500);
          const text = JSON.stringify(r.body ?? '');
          expect(text).not.toMatch(/at \w+ \(|node_modules|SELECT |INSERT |syntax error|pg-protocol/);
        },
      ),
      { numRuns: 2_000 },
    );
  }, 120_000);
});
