import { execFileSync, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { Client } from 'pg';
import { SETTINGS } from '../../core/config/settings';
import { migrate } from '../../core/db/migrate';
import { tableDigests } from '../../core/db/table-digests';
import { openFreshChain } from './fresh-chain';
import { build, dropDatabase, freshDatabase, pct, REDIS_URL, ROOT, spawnImage } from './support';

const FREEZES = Number(process.env.BENCH_FREEZES ?? 10);
/** How long one freeze may last before the bench calls it "never taken over" (the base commit never hands over). */
const BOUND_MS = Number(process.env.BENCH_FAILOVER_BOUND_MS ?? 60_000);
/** Another build's indexer (`dist/indexer/main.js` of a checkout built with `npm run build`): the "before". */
const BASE_INDEXER = process.env.BENCH_FAILOVER_BASE_INDEXER;
const PROGRAM_ID = SETTINGS.PROGRAM_ID.default;
const EPOCH_SECONDS = 86_400;

/** Every committed cursor advance with the session that committed it and PostgreSQL's time (a rolled-back one leaves no row). */
const AUDIT = `
CREATE TABLE bench_commits (n BIGSERIAL PRIMARY KEY, app TEXT NOT NULL, epoch BIGINT NOT NULL, slot BIGINT NOT NULL, at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp());
CREATE FUNCTION bench_commit_audit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO bench_commits (app, epoch, slot) VALUES (current_setting('application_name'), NEW.writer_epoch, NEW.last_processed_slot); RETURN NEW; END $$;
CREATE TRIGGER bench_commit_audit AFTER UPDATE ON indexer_cursor FOR EACH ROW
  WHEN (NEW.last_activity_at IS DISTINCT FROM OLD.last_activity_at) EXECUTE FUNCTION bench_commit_audit();`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, probe: () => Promise<T | undefined | false>, ms: number): Promise<T | undefined> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) return undefined;
    await sleep(100);
  }
}

interface Freeze {
  ms: number | null;
  /** Commits by the frozen process after the standby's first commit. */
  lateCommits: number;
  exitCode: number | null;
}

/**
 * `npm run bench -- failover` (issue 38 part 2): the simulated chain in real time in this process
 * behind its JSON-RPC; two compiled indexers (rpc source) on one tenant database, as the image
 * runs them. FREEZES times: SIGSTOP the writer (nothing else acts on it), time until another
 * process commits a batch under a new fencing token (PostgreSQL's clock, from a trigger on the
 * cursor), SIGCONT it, wait for it to exit and count what it committed after the take-over, then
 * start a new standby in its place (a process manager's restart). Then the chain stops and the
 * tables are compared with one indexer's uninterrupted run over the same chain.
 */
export async function run(): Promise<void> {
  build();
  const load0 = execFileSync('uptime').toString().trim();
  const { chain, close: closeChain } = openFreshChain({ name: 'failover', programId: PROGRAM_ID, seed: 11, epochSeconds: EPOCH_SECONDS });
  const endpoints = await chain.rpc.listen(0);
  const stopChain = chain.runRealtime();
  const entry = BASE_INDEXER ? path.relative(ROOT, path.resolve(BASE_INDEXER)) : undefined;
  const name = `bench_failover_${process.pid}`;
  const refName = `${name}_ref`;
  const databaseUrl = await freshDatabase(name);
  await migrate({ databaseUrl });
  const pg = new Client({ connectionString: databaseUrl });
  await pg.connect();
  await pg.query(AUDIT);
  const env = (url: string, tenant: string) => ({
    DATABASE_URL: url, REDIS_URL, TENANT_ID: tenant, PROGRAM_ID, INDEXER_PORT: '0', API_HOST: '127.0.0.1', RPC_URL: endpoints.url, RPC_WS_URL: endpoints.wsUrl, LOG_LEVEL: 'error',
  });
  const children = new Set<ChildProcess>();
  const start = (url = databaseUrl, tenant = `bench-failover-${process.pid}`) => {
    const p = spawnImage('indexer', env(url, tenant), { entry, args: ['--source', 'rpc', '--no-progress'] });
    children.add(p.child);
    p.child.once('exit', () => children.delete(p.child));
    return p;
  };
  const one = async <T>(sql: string, values: unknown[] = []) => (await pg.query(sql, values)).rows[0] as T;
  const commitsSince = async (n: number) => (await pg.query<{ n: string; app: string; epoch: string }>('SELECT n, app, epoch FROM bench_commits WHERE n > $1 ORDER BY n', [n])).rows;
  const freezes: Freeze[] = [];
  let differing: string[] = [];
  try {
    const procs = [start(), start()];
    await Promise.all(procs.map((p) => p.port));
    await until('a first commit', async () => Number((await one<{ n: string }>('SELECT count(*) AS n FROM bench_commits')).n) > 0, 120_000);
    for (let i = 0; i < FREEZES; i++) {
      // The writer: the process whose session holds the advisory lock (named for its pid, in every release).
      const last = await one<{ n: string; app: string; epoch: string }>('SELECT n, app, epoch FROM bench_commits ORDER BY n DESC LIMIT 1');
      const holder = await one<{ app: string } | undefined>(
        `SELECT a.application_name AS app FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.granted AND a.datname = current_database()`,
      );
      const frozen = [...children].find((c) => holder?.app.endsWith(`:${c.pid}`));
      if (!frozen) throw new Error(`the writer lock is held by ${holder?.app ?? 'nobody'}, none of this bench's processes`);
      frozen.kill('SIGSTOP');
      const t0 = (await one<{ t: Date }>('SELECT clock_timestamp() AS t')).t.getTime();
      const exited = new Promise<number | null>((r) => frozen.once('exit', (code) => r(code)));
      const taken = await until('a commit by another writer', async () => (await commitsSince(Number(last.n))).find((c) => Number(c.epoch) > Number(last.epoch)), BOUND_MS);
      const at = taken ? (await one<{ at: Date }>('SELECT at FROM bench_commits WHERE n = $1', [taken.n])).at.getTime() : null;
      frozen.kill('SIGCONT');
      // A woken writer that lost its lease exits; one that never lost it (the base) is stopped here.
      const code = await Promise.race([exited, sleep(taken ? 30_000 : 5_000).then(() => undefined)]);
      if (code === undefined) frozen.kill('SIGKILL');
      const exitCode = code === undefined ? null : code;
      await exited;
      // The frozen writer's commits carry its (old) fencing token.
      const late = taken ? (await commitsSince(Number(taken.n))).filter((c) => Number(c.epoch) <= Number(last.epoch)).length : 0;
      freezes.push({ ms: at === null ? null : at - t0, lateCommits: late, exitCode });
      process.stderr.write(`freeze ${i + 1}: ${at === null ? `not taken over in ${BOUND_MS} ms` : `${at - t0} ms`}, late commits ${late}, exit ${exitCode}\n`);
      if (!taken) break;
      // The process manager's restart: a new standby in the frozen one's place.
      await start().port;
      await sleep(3_000);
    }
    stopChain();
    // The writer catches up with the stopped chain; then one indexer indexes the same chain without interruption.
    const settled = async (p: Client) => {
      let prev = -1;
      return until('the cursor to settle', async () => {
        const s = Number((await p.query<{ s: string }>('SELECT last_processed_slot AS s FROM indexer_cursor')).rows[0]!.s);
        const same = s === prev && s > 0;
        prev = s;
        await sleep(5_000);
        return same ? s : false;
      }, 120_000);
    };
    const finalSlot = await settled(pg);
    for (const c of children) c.kill('SIGTERM');
    const refUrl = await freshDatabase(refName);
    await migrate({ databaseUrl: refUrl });
    const ref = new Client({ connectionString: refUrl });
    await ref.connect();
    const refProc = start(refUrl, `bench-failover-ref-${process.pid}`);
    await refProc.port;
    await until('the reference run', async () => Number((await ref.query<{ s: string }>('SELECT last_processed_slot AS s FROM indexer_cursor')).rows[0]!.s) >= (finalSlot ?? 0), 300_000);
    refProc.child.kill('SIGTERM');
    const { createDatabase } = await import('../../core/db');
    const [a, b] = [createDatabase({ url: databaseUrl, poolMax: 2 }), createDatabase({ url: refUrl, poolMax: 2 })];
    const [da, db] = [await tableDigests(a.db), await tableDigests(b.db)];
    differing = Object.keys(db).filter((t) => JSON.stringify(da[t]) !== JSON.stringify(db[t]));
    await Promise.all([a.close(), b.close()]);
    await ref.end();
  } finally {
    for (const c of children) {
      c.kill('SIGCONT');
      c.kill('SIGKILL');
    }
    stopChain();
    await pg.end().catch(() => {});
    await closeChain();
    await dropDatabase(name);
    await dropDatabase(refName);
  }
  const load1 = execFileSync('uptime').toString().trim();
  const times = freezes.map((f) => f.ms).filter((m): m is number => m !== null);
  const never = freezes.length - times.length;
  const lines = [
    `failover: ${freezes.length} freezes (SIGSTOP of the writer, no other action), ${BASE_INDEXER ? `indexer ${BASE_INDEXER}` : 'this build'}`,
    `  lease: ${SETTINGS.INDEXER_LEASE_DURATION_MS.default} ms, renew deadline ${SETTINGS.INDEXER_LEASE_RENEW_DEADLINE_MS.default} ms, retry ${SETTINGS.INDEXER_LEASE_RETRY_PERIOD_MS.default} ms (defaults)`,
    `  freeze -> another process commits: p50 ${times.length ? pct(times, 50) : '-'} ms, max ${times.length ? Math.max(...times) : '-'} ms${never ? `; ${never} not taken over within ${BOUND_MS} ms` : ''}`,
    `  commits by a woken writer after the take-over: ${freezes.reduce((a, f) => a + f.lateCommits, 0)}; exit codes of woken writers: ${freezes.map((f) => f.exitCode).join(', ')}`,
    `  tables differing from an uninterrupted run: ${differing.length}${differing.length ? ` (${differing.join(', ')})` : ''}`,
    `  load before: ${load0}`,
    `  load after:  ${load1}`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}
