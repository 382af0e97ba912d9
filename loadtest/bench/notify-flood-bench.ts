// `npm run bench -- notify-flood` (issue 50): another role's session sends BENCH_NOTIFICATIONS
// (default 100000) notifications on the live-schema pointer's channel in one statement, as any role
// that can connect to the tenant's database can (NOTIFY needs no privilege). The API's follower
// (core/db/live-projection.ts, in this process with the API's pool of 10) hears them; meanwhile a
// well-behaved caller runs `SELECT 1` through that pool back to back. Printed: the flood's own
// time, the pointer reads it caused, the caller's slowest statement and failures (the pool's
// 5 s connection timeout), the heap's growth, and the time until a switch sent after the flood
// was adopted (the bench gives up after 60 s).
import { getHeapStatistics } from 'node:v8';
import { Client } from 'pg';
import { createDatabase, type Db } from '../../core/db';
import { followLiveSchema, LIVE_PROJECTION_CHANNEL, switchLiveSchema } from '../../core/db/live-projection';
import { migrate } from '../../core/db/migrate';
import { admin, dropDatabase, freshDatabase } from './support';

const N = Number(process.env.BENCH_NOTIFICATIONS ?? 100_000);
/** How long the bench waits for the switch after the flood to be adopted. */
const LIMIT_MS = 60_000;

export async function run(): Promise<void> {
  const name = `bench_notify_flood_${process.pid}`;
  const role = `bench_notify_flood_${process.pid}`;
  const url = await freshDatabase(name);
  await migrate({ databaseUrl: url });
  await admin(`CREATE ROLE ${role} LOGIN`);
  const api = createDatabase({ url, poolMax: 10, applicationName: 'bench-api' });
  const operator = createDatabase({ url, poolMax: 1, applicationName: 'bench-switch' });
  const reads = { started: 0 };
  const counted = new Proxy(api.db, {
    get: (t, p) => (p === 'one' ? (...a: unknown[]) => (reads.started++, (t.one as (...x: unknown[]) => Promise<unknown>)(...a)) : Reflect.get(t, p)),
  }) as Db;
  const follower = followLiveSchema({ db: counted, databaseUrl: url });
  try {
    await api.db.none('CREATE SCHEMA p901');
    while (!follower.ready()) await new Promise((r) => setTimeout(r, 20));
    const heapBefore = getHeapStatistics().used_heap_size;
    let heapMost = heapBefore;
    const sampler = setInterval(() => (heapMost = Math.max(heapMost, getHeapStatistics().used_heap_size)), 20);
    let stop = false;
    const latencies: number[] = [];
    let failures = 0;
    const caller = (async () => {
      while (!stop) {
        const t = performance.now();
        try {
          await api.db.one('SELECT 1 AS ok');
          latencies.push(performance.now() - t);
        } catch {
          failures++;
        }
      }
    })();
    const attacker = new Client({ connectionString: Object.assign(new URL(url), { username: role, password: '' }).toString() });
    await attacker.connect();
    const t0 = performance.now();
    await attacker.query("SELECT count(pg_notify($1, 'p' || g)) FROM generate_series(1, $2::int) g", [LIVE_PROJECTION_CHANNEL, N]);
    const floodMs = performance.now() - t0;
    await attacker.end();
    // The switch's notification comes after every one of the flood's.
    await switchLiveSchema(operator.db, 'p901');
    const deadline = performance.now() + LIMIT_MS;
    while (follower.current() !== 'p901' && performance.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    const settled = follower.current() === 'p901' ? `${(performance.now() - t0).toFixed(0)} ms` : `not within ${LIMIT_MS / 1000} s`;
    stop = true;
    await caller;
    clearInterval(sampler);
    heapMost = Math.max(heapMost, getHeapStatistics().used_heap_size);
    const mb = (b: number) => (b / 2 ** 20).toFixed(1);
    console.log(`notify-flood: ${N.toLocaleString('en')} notifications from another role; API pool of 10; follower in this process`);
    console.log('| flood statement | pointer reads | switch after the flood adopted | SELECT 1: statements, slowest, failed | heap growth (most) |');
    console.log('|---|---|---|---|---|');
    console.log(
      `| ${floodMs.toFixed(0)} ms | ${reads.started.toLocaleString('en')} | ${settled} | ${latencies.length.toLocaleString('en')}, ${Math.max(0, ...latencies).toFixed(1)} ms, ${failures} | ${mb(heapMost - heapBefore)} MB |`,
    );
  } finally {
    await follower.close();
    await api.close();
    await operator.close();
    await dropDatabase(name);
    await admin(`DROP ROLE IF EXISTS ${role}`);
  }
}
