import { createDatabase, type Database } from '../../core/db';
import { ChainUnavailableError, type ChainAccess } from '../../core/tx';
import { observeIndexerLag } from '../../server/observed-lag';
import { testCommon } from '../support/common';
import { createTestDatabase, type TestDatabase } from '../support/pg';
import { waitFor } from '../support/tables';

// The API watches the indexer from outside (D-213): its RPC's tip minus the committed cursor,
// whatever the indexer itself can report; NaN, not stale, when it cannot look.
describe('the slot lag the API observes', () => {
  let tdb: TestDatabase;
  let database: Database;
  beforeAll(async () => {
    tdb = await createTestDatabase();
    database = createDatabase({ url: tdb.url, poolMax: 2 });
  });
  afterAll(async () => {
    await database.close();
    await tdb.drop();
  });

  it('is the chain tip minus the committed cursor, follows both, and is NaN while the RPC fails', async () => {
    const common = testCommon();
    let tip: number | Error = 1_500;
    const chain: ChainAccess = {
      recentBlockhash: async () => {
        if (tip instanceof Error) throw tip;
        return { blockhash: '11111111111111111111111111111111', lastValidBlockHeight: 0n, slot: tip };
      },
    };
    await database.db.none('UPDATE indexer_cursor SET last_processed_slot = 1000 WHERE id = 1');
    const series = async () => (await common.metrics.registry.getSingleMetricAsString('service_indexer_slot_lag')).split('\n').filter((l) => l.startsWith('service_indexer_slot_lag'));
    const stop = observeIndexerLag({ db: database.db, chain, metrics: common.metrics, logger: common.logger, intervalMs: 20 });
    try {
      await waitFor('lag 500', async () => (await series()).join() === 'service_indexer_slot_lag 500');
      // The chain goes on while the cursor stands still (a frozen indexer): the lag grows.
      tip = 1_900;
      await waitFor('lag 900', async () => (await series()).join() === 'service_indexer_slot_lag 900');
      await database.db.none('UPDATE indexer_cursor SET last_processed_slot = 1900 WHERE id = 1');
      await waitFor('lag 0', async () => (await series()).join() === 'service_indexer_slot_lag 0');
      tip = new ChainUnavailableError('RPC unreachable');
      // prom-client writes NaN as `Nan`, which Prometheus reads as NaN (Go's ParseFloat ignores case).
      await waitFor('NaN', async () => (await series()).join() === 'service_indexer_slot_lag Nan');
      tip = 2_000;
      await waitFor('lag 100 again', async () => (await series()).join() === 'service_indexer_slot_lag 100');
    } finally {
      stop();
    }
  });
});
