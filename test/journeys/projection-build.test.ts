import { createDatabase } from '../../core/db';
import { readLiveSchema } from '../../core/db/live-projection';
import { projectionSchema } from '../../core/db/projection-schema';
import { PROJECTION_VERSION } from '../../core/db/projection-version';
import { PROGRAM_ID } from '../support/indexer';
import { createTestDatabase } from '../support/pg';
import { runEntry, spawnApi, spawnIndexer } from '../support/processes';
import { TEST_REDIS_URL, testTenant } from '../support/redis';
import { waitFor } from '../support/tables';
import { WsClient } from '../support/ws';

/**
 * The indexer entry point in build mode (D-411) beside an API process: it builds this release's
 * schema from the simulated chain the live writer indexed, switches the pointer, and the API
 * process closes its /ws clients with 4010 (D-410) and answers from the built tables.
 */
describe('INDEXER_MODE=build, as processes', () => {
  it('builds p<version>, switches the API process to it, /ws clients are told, and a live writer started afterwards writes it', async () => {
    const tdb = await createTestDatabase();
    const database = createDatabase({ url: tdb.url, poolMax: 2 });
    const env = { DATABASE_URL: tdb.url, REDIS_URL: TEST_REDIS_URL, TENANT_ID: testTenant(), PROGRAM_ID };
    const chain = ['--source', 'simulator', '--seed', '4243', '--until-slot', '150', '--batch-size', '50'];
    const api = spawnApi(env);
    try {
      // The live writer indexes public to the chain's end.
      expect(await spawnIndexer(chain, env).exited).toEqual({ code: 0, signal: null });
      const base = `http://127.0.0.1:${await api.port}`;
      await waitFor('/ready', async () => (await fetch(`${base}/ready`)).status === 200);
      const slot = async () => ((await (await fetch(`${base}/api/v1/status`)).json()) as { data: { lastProcessedSlot: string | null } }).data.lastProcessedSlot;
      expect(await slot()).toBe('150');
      await database.db.none('UPDATE indexer_cursor SET last_processed_slot = 140'); // marks the live tables' cursor apart from the build's
      const client = await WsClient.open(`ws://127.0.0.1:${await api.port}/ws`);
      await client.next((m) => m.type === 'connected');

      const builder = spawnIndexer(chain, { ...env, INDEXER_MODE: 'build' });
      expect(await builder.exited).toEqual({ code: 0, signal: null });
      expect(await readLiveSchema(database.db)).toBe(projectionSchema(PROJECTION_VERSION));
      expect((await client.closed).code).toBe(4010);
      await waitFor('the API reading the built tables', async () => (await slot()) === '150');

      // A release in live mode started after the switch writes the built schema, not public.
      const after = spawnIndexer(['--source', 'simulator', '--seed', '4243', '--until-slot', '200', '--batch-size', '50'], env);
      expect(await after.exited).toEqual({ code: 0, signal: null });
      expect(await slot()).toBe('200');
      expect(await database.db.one('SELECT last_processed_slot FROM public.indexer_cursor')).toEqual({ last_processed_slot: '140' });

      // A release older than the projection the API reads (here: the built schema recorded as a
      // newer version) refuses to write it, naming both versions and the way out (D-441).
      const built = projectionSchema(PROJECTION_VERSION);
      await database.db.none(`UPDATE ${built}.projection_version SET version = $1`, [PROJECTION_VERSION + 1]);
      const older = await runEntry('indexer/main.ts', [...chain, '--no-progress'], { env, timeoutMs: 30_000 });
      expect(older.code).toBe(1);
      expect(older.stderr.trim()).toBe(
        `the indexer cannot start: the API reads schema ${built}, built by projection version ${PROJECTION_VERSION + 1}, newer than this release's (${PROJECTION_VERSION}): run a release of projection ${PROJECTION_VERSION + 1}, or switch the API back to the tables of projection ${PROJECTION_VERSION} first (docs/deploy.md#switching-back)`,
      );
      expect(await slot()).toBe('200');
    } finally {
      api.child.kill('SIGKILL');
      await database.close();
      await tdb.drop();
    }
  }, 60_000);
});
