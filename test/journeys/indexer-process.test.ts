import prand from 'pure-rand';
import { createDatabase, type Database } from '../../core/db';
import { PROGRAM_ID, projectionDb, simulate, type ProjectionDb } from '../support/indexer';
import { createTestDatabase, type TestDatabase } from '../support/pg';
import { attr, exportedSpans, startCollector } from '../support/otlp';
import { runEntry, spawnIndexer } from '../support/processes';
import { tableDigests, waitFor } from '../support/tables';

const SEED = 606;
// Long enough that the ten kills land well before the end on a fast machine: on the fastest seen
// here, ten kills 0–250 ms after a commit took the cursor to slot 914 of 1,200; 0–120 ms after,
// to 601 of 2,400.
const UNTIL = 2_400;
const BATCH = 60;
const withUntil = (until: number) => ['--source', 'simulator', '--seed', String(SEED), '--until-slot', String(until), '--batch-size', String(BATCH)];
const args = withUntil(UNTIL);

/** The same chain indexed without interruption, in this process: what every run must equal. */
async function reference(): Promise<{ p: ProjectionDb; digests: Awaited<ReturnType<typeof tableDigests>> }> {
  const p = await projectionDb();
  const { txs } = simulate(UNTIL, { seed: SEED });
  // The digests include row ids, which must come out identical whatever the batching.
  await p.apply(txs, 500);
  return { p, digests: await tableDigests(p.database.db) };
}

describe('indexer processes (real PostgreSQL, SIGKILL)', () => {
  let ref: Awaited<ReturnType<typeof reference>>;
  let tdb: TestDatabase;
  let database: Database;
  const cursor = async () => Number((await database.db.one('SELECT last_processed_slot FROM indexer_cursor')).last_processed_slot);

  // The reference run indexes 2,400 slots in this process: setup, given room on a loaded machine.
  beforeAll(async () => {
    ref = await reference();
  }, 120_000);
  afterAll(() => ref.p.close());
  beforeEach(async () => {
    tdb = await createTestDatabase();
    database = createDatabase({ url: tdb.url, poolMax: 2 });
  });
  afterEach(async () => {
    await database.close();
    await tdb.drop();
  });

  it('ends with the same tables after being killed at 10 random points and restarted', async () => {
    // Seeded, so a failure can be replayed: the kill points differ run to run of the seed only.
    const rng = prand.xoroshiro128plus(20261121);
    let kills = 0;
    let last = 0;
    while (kills < 10) {
      const run = spawnIndexer(args, { DATABASE_URL: tdb.url, PROGRAM_ID });
      await run.port;
      // Let it commit at least one new batch, then kill it a random moment later.
      await waitFor('progress', async () => (await cursor()) > last || (run.child.exitCode !== null ? 'exited' : false), 60_000);
      await new Promise((r) => setTimeout(r, prand.unsafeUniformIntDistribution(0, 120, rng)));
      if (run.child.exitCode === null) {
        run.child.kill('SIGKILL');
        const { signal } = await run.exited;
        if (signal === 'SIGKILL') kills += 1;
      }
      last = await cursor();
      if (last >= UNTIL) throw new Error(`the run finished after ${kills} kills: lower the batch size or raise --until-slot`);
    }
    const final = spawnIndexer(args, { DATABASE_URL: tdb.url, PROGRAM_ID });
    expect((await final.exited).code).toBe(0);
    expect(kills).toBe(10);
    expect(await cursor()).toBe(UNTIL);
    expect(await tableDigests(database.db)).toEqual(ref.digests);
  }, 240_000);

  it('hands over to a hot standby when the writer dies', async () => {
    // A first writer indexes the first half of the chain and exits.
    const first = spawnIndexer(withUntil(UNTIL / 2), { DATABASE_URL: tdb.url, PROGRAM_ID });
    expect((await first.exited).code).toBe(0);
    expect(await cursor()).toBe(UNTIL / 2);
    // While this transaction holds raw_events, no batch can commit: the next writer dies inside
    // its first batch, whatever the speed of the machine, and nothing it did lands.
    const blocker = await database.db.$pool.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE raw_events IN SHARE MODE');
      const writer = spawnIndexer(args, { DATABASE_URL: tdb.url, PROGRAM_ID });
      const health = async (port: number) => (await (await fetch(`http://127.0.0.1:${port}/health`)).json()) as { role: string; indexerRunning: boolean };
      const writerPort = await writer.port;
      await waitFor('writer role', async () => (await health(writerPort)).role === 'writer');
      const standby = spawnIndexer(args, { DATABASE_URL: tdb.url, PROGRAM_ID });
      const port = await standby.port;
      await waitFor('standby role', async () => (await health(port)).role === 'standby');
      expect((await health(port)).indexerRunning).toBe(true);
      const ready = await fetch(`http://127.0.0.1:${port}/ready`);
      expect(ready.status).toBe(200);

      writer.child.kill('SIGKILL');
      await writer.exited;
      await blocker.query('COMMIT');
      const { code } = await standby.exited;
      expect(code).toBe(0);
    } finally {
      await blocker.query('ROLLBACK').catch(() => {});
      blocker.release();
    }
    expect(await cursor()).toBe(UNTIL);
    expect(await tableDigests(database.db)).toEqual(ref.digests);
    // The first writer, the one that died, and the standby each took the lock once.
    const epoch = await database.db.one('SELECT writer_epoch::int AS e FROM indexer_cursor');
    expect(epoch.e).toBe(3);
  }, 120_000);

  it('traces the requests of its own port when an OTLP endpoint is set', async () => {
    const collector = await startCollector();
    const secret = 'webhook-secret-of-at-least-32-characters';
    const run = spawnIndexer(['--source', 'webhook'], { DATABASE_URL: tdb.url, PROGRAM_ID, WEBHOOK_SECRET: secret, OTEL_EXPORTER_OTLP_ENDPOINT: collector.url });
    try {
      const port = await run.port;
      const refused = await fetch(`http://127.0.0.1:${port}/internal/webhook`, { method: 'POST', headers: { authorization: 'Bearer wrong', 'content-type': 'application/json' }, body: '[]' });
      expect(refused.status).toBe(401);
      expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
      run.child.kill('SIGTERM');
      expect((await run.exited).code).toBe(0); // shutdown flushes the spans
      const { services, spans } = exportedSpans(collector);
      expect(services).toEqual(['market-indexer-indexer']);
      const server = spans.filter((s) => s.kind === 2);
      // The probe is not traced.
      expect(server).toHaveLength(1);
      expect(server[0]).toMatchObject({ name: 'POST /internal/webhook' });
      expect(attr(server[0]!, 'http.response.status_code')).toBe(401);
    } finally {
      run.child.kill('SIGKILL');
      collector.close();
    }
  });

  it('stops with one clear line naming DATABASE_URL and its host (not its password) when the database cannot be reached', async () => {
    const run = await runEntry('indexer/main.ts', [...args, '--no-progress'], { env: { PROGRAM_ID, INDEXER_PORT: '0', DATABASE_URL: 'postgres://app:db-secret@127.0.0.1:1/none' } });
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe('the indexer cannot start: DATABASE_URL (127.0.0.1:1) cannot be reached: connect ECONNREFUSED 127.0.0.1:1');
    expect(run.stdout).not.toContain('db-secret');
  });

  it('stops with one clear line when started without a database', async () => {
    const run = spawnIndexer(args, { PROGRAM_ID });
    const { code } = await run.exited;
    expect(code).toBe(1);
    expect(run.stderr().trim()).toBe('the indexer process needs DATABASE_URL (postgres://user@host:5432/dbname)');
  });
});
