import { createDatabase } from '../../core/db';
import { HIGH_LIMITS } from '../support/api';
import { createTestDatabase } from '../support/pg';
import { spawnApi, spawnIndexer, tenantEnv } from '../support/processes';
import { waitFor } from '../support/tables';
import { differingTables, uninterruptedDigests } from './digests';
import { get, report, startLoad } from './support';

const SEED = 53;
const UNTIL = 2_400;

it('SIGKILL of the indexer writer under load: the hot standby takes over and the tables end identical to an uninterrupted run', async () => {
  const expected = await uninterruptedDigests(SEED, UNTIL);
  const tdb = await createTestDatabase();
  const direct = createDatabase({ url: tdb.url, poolMax: 1 });
  const env = tenantEnv(tdb.url, HIGH_LIMITS);
  const args = ['--source', 'simulator', '--seed', String(SEED), '--until-slot', String(UNTIL), '--batch-size', '20'];
  const api = spawnApi(env);
  const writer = spawnIndexer(args, env);
  let standby: ReturnType<typeof spawnIndexer> | undefined;
  try {
    const port = await api.port;
    const health = async (p: number) => ((await (await fetch(`http://127.0.0.1:${p}/health`)).json()) as { role: string }).role;
    const cursor = async () => Number((await direct.db.one('SELECT last_processed_slot FROM indexer_cursor')).last_processed_slot);
    await waitFor('writer role', async () => (await health(await writer.port)) === 'writer', 60_000);
    standby = spawnIndexer(args, env);
    const standbyPort = await standby.port;
    await waitFor('standby role', async () => (await health(standbyPort)) === 'standby', 60_000);
    const reads = startLoad(4, () => get(port, '/api/v1/markets?limit=5'));
    await waitFor('a first commit', async () => (await cursor()) > 0, 60_000);
    const killedAt = Date.now();
    const slotAtKill = await cursor();
    writer.child.kill('SIGKILL');
    await writer.exited;
    await waitFor('the standby writes', async () => (await health(standbyPort).catch(() => '')) === 'writer' || standby!.child.exitCode === 0, 30_000);
    const tookOverAt = Date.now();
    expect((await standby.exited).code).toBe(0);
    const outcomes = await reads.stop();
    const differing = await differingTables(expected, direct.db);
    const failed = outcomes.filter((o) => o.status !== 200);
    report({
      scenario: 'SIGKILL indexer writer: standby takes over, tables identical',
      requests: outcomes.length,
      errors: failed.length,
      dataLost: differing.length,
      recoveryMs: tookOverAt - killedAt,
      note: `killed at slot ${slotAtKill} of ${UNTIL}; tables differing: ${differing.length}`,
    });
    expect(slotAtKill).toBeLessThan(UNTIL);
    expect(failed.map((o) => `${o.status} ${o.body}`)).toEqual([]);
    expect(await cursor()).toBe(UNTIL);
    expect(differing).toEqual([]);
  } finally {
    for (const p of [api, writer, standby]) p?.child.kill('SIGKILL');
    await Promise.all([api, writer, standby].map((p) => p?.exited));
    await direct.close();
    await tdb.drop();
  }
});
