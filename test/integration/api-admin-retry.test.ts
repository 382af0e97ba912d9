import { createDatabase, type Database } from '../../core/db';
import { buildTransaction, type ProgramEvent, type RawTransaction } from '../../core/events';
import { createIndexer, type Indexer } from '../../indexer/indexer';
import type { Source } from '../../indexer/sources/types';
import { addressOf, signatureOf } from '../../simulator/ids';
import { call, HIGH_LIMITS, testWallet, walletHeaders, type Json } from '../support/api';
import { createApiServers } from '../support/api-servers';
import { testCommon } from '../support/common';
import { PROGRAM_ID } from '../support/indexer';
import { createTestDatabase, type TestDatabase } from '../support/pg';
import { testTenant } from '../support/redis';
import { waitFor } from '../support/tables';

const HIGH = HIGH_LIMITS;
const wallet = testWallet;

/** A source the test feeds batch by batch; it runs until the indexer stops. */
function queueSource(): { source: Source; push(batch: RawTransaction[]): void } {
  const queue: RawTransaction[][] = [];
  let wake: (() => void) | undefined;
  return {
    push(batch) {
      queue.push(batch);
      wake?.();
    },
    source: {
      name: 'test-queue',
      async *batches(_from, signal) {
        while (!signal.aborted) {
          const next = queue.shift();
          if (next) {
            yield next;
            continue;
          }
          await new Promise<void>((resolve) => {
            wake = resolve;
            signal.addEventListener('abort', () => resolve(), { once: true });
          });
          wake = undefined;
        }
      },
      chainTip: async () => null,
      connected: () => true,
      close: async () => {},
    },
  };
}

describe('POST /admin/dead-letters/:id/retry, the standby and batch timings of GET /admin/indexer', () => {
  let tdb: TestDatabase;
  let database: Database;
  const apis = createApiServers();
  const indexers: Indexer[] = [];
  const admin = wallet();
  const stranger = wallet();
  const tenant = testTenant();
  let api: string;

  const signer = addressOf('retry-signer');
  const market = addressOf('retry-market');
  let n = 0;
  const tx = (events: ProgramEvent[], slot: number): RawTransaction =>
    buildTransaction({ programId: PROGRAM_ID, signature: signatureOf(`retry:${n++}`), slot, blockTime: 1_767_300_000 + slot, signer, eventAuthority: addressOf('authority'), instructionName: 'Test', events });
  const init: ProgramEvent = {
    kind: 'MarketInitialized',
    data: { market, marketId: 7n, creator: signer, oracleFeed: null, oracleFeedId: 'cd'.repeat(32), settlementMint: addressOf('mint'), durationSeconds: 60n, tStart: 1_767_300_000n, tEnd: 1_767_300_060n, maxConfidenceRatioBps: 100, initialCollateral: 0n },
  };
  const started: ProgramEvent = { kind: 'TradingStarted', data: { market, startPrice: 6_500_000_000_000n, startPriceConf: 1_000n, startPriceExpo: -8, publishTime: 1_767_300_001n } };

  async function startApi(env: Record<string, string> = {}) {
    return apis.start(testCommon({ PROGRAM_ID, TENANT_ID: tenant, ...HIGH, ADMIN_WALLETS: admin.address, ...env }), database.db);
  }
  function startIndexer() {
    const q = queueSource();
    const common = testCommon({ PROGRAM_ID, TENANT_ID: tenant });
    const indexer = createIndexer({ common, db: database.db, pgp: database.pgp, databaseUrl: tdb.url, updates: undefined, source: q.source, heartbeatMs: 100 });
    indexers.push(indexer);
    const run = indexer.run();
    run.catch(() => {});
    /** The writer's count of settled retries by outcome, as /metrics shows it. */
    const retries = async () =>
      Object.fromEntries((await common.metrics.indexerDeadLetterRetries.get()).values.map((v) => [v.labels.outcome, v.value]));
    return { indexer, run, push: q.push, retries };
  }

  beforeAll(async () => {
    tdb = await createTestDatabase();
    database = createDatabase({ url: tdb.url, poolMax: 6 });
    api = await startApi();
  });
  afterAll(async () => {
    await Promise.all(indexers.map((i) => i.stop()));
    await apis.closeAll();
    await database.close();
    await tdb.drop();
  });

  const get = (path: string, key = admin) => call(`${api}/api/v1${path}`, { headers: walletHeaders(key, `GET ${path}`) });
  const retry = (id: number | string, key = admin, base = api) =>
    call(`${base}/api/v1/admin/dead-letters/${id}/retry`, { method: 'POST', headers: walletHeaders(key, `POST /admin/dead-letters/${id}/retry`) });
  const marketRow = () => database.db.oneOrNone<{ state: number; start_price: string | null }>('SELECT state, start_price FROM markets WHERE address = $1', [market]);

  it('applies an event that arrived before its market once the market exists, exactly once', async () => {
    const writer = startIndexer();
    // TradingStarted before MarketInitialized: a dead letter (unknown_market).
    const early = tx([started], 301);
    writer.push([early]);
    const dl = await waitFor('dead letter', () => database.db.oneOrNone<{ id: string; reason: string }>('SELECT id, reason FROM dead_letters WHERE signature = $1', [early.transaction.signatures[0]]));
    expect(dl.reason).toBe('unknown_market');
    const id = Number(dl.id);

    // Retried while the market is still unknown: still failing, with the reason, nothing applied.
    const failing = await retry(id);
    expect(failing.status).toBe(200);
    expect(failing.body.data.retry).toMatchObject({ deadLetterId: id, outcome: 'still_failing', reason: 'unknown_market', requestedBy: admin.address });
    expect(failing.body.data.retry.detail).toContain(market);
    expect(await marketRow()).toBeNull();

    writer.push([tx([init], 302)]);
    await waitFor('market', marketRow);
    expect((await marketRow())!.state).toBe(1);
    const appliedBefore = Number((await database.db.one('SELECT events_applied FROM indexer_cursor')).events_applied);

    // Two retries at once: one applies, the other finds it applied.
    const both = await Promise.all([retry(id), retry(id)]);
    expect(both.map((r) => r.status)).toEqual([200, 200]);
    expect(both.map((r) => r.body.data.retry.outcome).sort()).toEqual(['already_applied', 'applied']);
    expect(await marketRow()).toEqual({ state: 2, start_price: '6500000000000' });
    expect(Number((await database.db.one('SELECT events_applied FROM indexer_cursor')).events_applied)).toBe(appliedBefore + 1);
    expect((await database.db.one('SELECT count(*)::int AS n FROM raw_events WHERE signature = $1', [early.transaction.signatures[0]])).n).toBe(1);

    // Again later: already applied; the listing shows it resolved.
    const again = await retry(id);
    expect([again.status, again.body.data.retry.outcome]).toEqual([200, 'already_applied']);
    // Settled by this writer: one still failing, one applied, one of the concurrent pair found
    // applied (the later retry of a resolved dead letter the API answers itself).
    expect(await writer.retries()).toEqual({ applied: 1, already_applied: 1, still_failing: 1, not_retryable: 0 });
    const listed = (await get('/admin/dead-letters')).body.data.deadLetters.find((d: Json) => d.id === id);
    expect(listed.resolvedAt).toEqual(expect.any(String));
    // Filtered by whether a retry applied it: only the resolved list has it.
    const ids = async (q: string) => (await get(`/admin/dead-letters?${q}`)).body.data.deadLetters.map((d: Json) => d.id);
    expect(await ids('resolved=true')).toContain(id);
    expect(await ids('resolved=false')).not.toContain(id);
    const unresolved = (await get('/admin/dead-letters?resolved=false')).body.data;
    expect(unresolved.total).toBe((await database.db.one('SELECT count(*)::int AS n FROM dead_letters WHERE resolved_at IS NULL')).n);
    expect((await get('/admin/dead-letters?resolved=maybe')).body.code).toBe('INVALID_PARAMETER');

    // A batch applied after the retry sees the retried state: the market settles from Trading.
    writer.push([tx([{ kind: 'MarketSettling', data: { market } }], 303)]);
    await waitFor('settling', async () => (await marketRow())?.state === 3);
    expect(await database.db.one('SELECT count(*)::int AS n FROM dead_letters WHERE resolved_at IS NULL')).toEqual({ n: 0 });
  });

  it('refuses other wallets (403) and unknown ids (404); a held-back transaction is not retryable', async () => {
    const r = await retry(1, stranger);
    expect([r.status, r.body]).toEqual([403, { error: 'Forbidden', code: 'FORBIDDEN' }]);
    const missing = await retry(999_999);
    expect([missing.status, missing.body.code]).toEqual([404, 'NOT_FOUND']);
    expect((await retry('abc')).status).toBe(400);
    const { id } = await database.db.one(
      "INSERT INTO dead_letters (signature, event_index, slot, kind, reason, detail, source) VALUES ('sigT', -1, 12, NULL, 'log_truncated', 'cut', 'test') RETURNING id",
    );
    const nr = await retry(Number(id));
    expect([nr.status, nr.body.data.retry.outcome, nr.body.data.retry.reason]).toEqual([200, 'not_retryable', 'no_event']);
    // What the admin did is audited, its refusals with their code; another wallet's 403 is not (D-186).
    const audit = await waitFor('the admin\'s retries audited', async () => {
      const entries = (await get('/admin/audit?limit=100')).body.data.entries as Json[];
      const done = [`POST /api/v1/admin/dead-letters/${id}/retry`, 'POST /api/v1/admin/dead-letters/999999/retry'].every((a) => entries.some((e) => e.action === a));
      return done ? entries : undefined;
    });
    expect(audit.find((e) => e.action === 'POST /api/v1/admin/dead-letters/999999/retry')).toMatchObject({ wallet: admin.address, status: 404, outcome: 'NOT_FOUND' });
    expect(audit.filter((e) => e.wallet === stranger.address)).toEqual([]);
  });

  it('shows the standby waiting for the writer lock and the writer\'s recent batch timings', async () => {
    const standby = startIndexer();
    await waitFor('standby', async () => standby.indexer.status().role === 'standby' && ((await get('/admin/indexer')).body.data.standby as Json[]).length === 1);
    const r = await get('/admin/indexer');
    expect(r.body.data.writer.lockHeld).toBe(true);
    expect(r.body.data.standby[0]).toMatchObject({ pid: expect.any(Number), instance: expect.stringMatching(/:\d+$/), since: expect.any(String), clientAddr: '127.0.0.1' });
    const batches = await waitFor('batch timings', async () => {
      const b = (await get('/admin/indexer')).body.data.recentBatches as Json[];
      return b.some((x) => x.slot === 303) ? b : undefined;
    });
    const last = batches.find((x) => x.slot === 303)!;
    expect(last).toMatchObject({ transactions: 1, events: 1, deadLetters: 0, totalMs: expect.any(Number) });
    expect(Object.keys(last.phasesMs).sort()).toEqual(['apply', 'commit', 'ledger', 'load', 'parse', 'write']);
    await standby.indexer.stop();
    // The standby's session ends on the server a moment after its client closed it.
    await waitFor('standby gone', async () => ((await get('/admin/indexer')).body.data.standby as Json[]).length === 0);
  });

  it('answers 202 pending while no writer runs; the next writer settles the request', async () => {
    await Promise.all(indexers.map((i) => i.stop()));
    const early = tx([{ kind: 'MarketSettling', data: { market: addressOf('nowhere') } }], 310);
    const { id } = await database.db.one(
      `INSERT INTO dead_letters (signature, event_index, slot, kind, reason, detail, data, source) VALUES ($1, 0, 310, 'MarketSettling', 'unknown_market', 'x', $2, 'test') RETURNING id`,
      [early.transaction.signatures[0], Buffer.from(early.meta!.logMessages!.find((l) => l.startsWith('Program data: '))!.slice(14), 'base64')],
    );
    const quick = await startApi({ REQUEST_TIMEOUT_MS: '400' });
    const pending = await retry(Number(id), admin, quick);
    expect([pending.status, pending.body.data.retry.outcome, pending.body.data.retry.doneAt]).toEqual([202, 'pending', null]);
    startIndexer();
    const settled = await waitFor('settled', () => database.db.oneOrNone('SELECT outcome, reason FROM dead_letter_retries WHERE id = $1 AND outcome IS NOT NULL', [pending.body.data.retry.id]));
    expect(settled).toEqual({ outcome: 'still_failing', reason: 'unknown_market' });
  });
});
