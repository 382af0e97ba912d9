import { createDatabase, type Database } from '../../core/db';
import { IDL, type RawTransaction } from '../../core/events';
import { MarketSimulator, type SimulatorOptions } from '../../simulator/simulation';
import { createProjector, type BatchResult, type Projector } from '../../indexer/projection';
import { createTestDatabase, type TestDatabase } from './pg';

export const PROGRAM_ID = IDL.address;

/** A simulated chain's transactions for `slots` slots, and the simulator (for its truth). */
export function simulate(slots: number, opts: Partial<SimulatorOptions> = {}): { sim: MarketSimulator; txs: RawTransaction[] } {
  const sim = new MarketSimulator({ seed: 11, programId: PROGRAM_ID, ...opts });
  const txs: RawTransaction[] = [];
  for (let i = 0; i < slots; i++) txs.push(...sim.nextBlock().transactions);
  return { sim, txs };
}

export interface ProjectionDb {
  tdb: TestDatabase;
  database: Database;
  projector: Projector;
  /** One batch after the other, each applied and committed before the next. */
  apply(txs: RawTransaction[], batchSize?: number): Promise<BatchResult[]>;
  pipelined(txs: RawTransaction[], batchSize: number): Promise<BatchResult[]>;
  close(): Promise<void>;
}

/** A fresh migrated database with a projector writing into it (writer epoch 0). */
export async function projectionDb(opts: { cacheRows?: number } = {}): Promise<ProjectionDb> {
  const tdb = await createTestDatabase();
  const database = createDatabase({ url: tdb.url, poolMax: 4 });
  const projector = createProjector({ db: database.db, pgp: database.pgp, programId: PROGRAM_ID, source: 'test', cacheRows: opts.cacheRows });
  return {
    tdb,
    database,
    projector,
    async apply(txs, batchSize = 1_000) {
      const results: BatchResult[] = [];
      for (let i = 0; i < txs.length; i += batchSize) {
        results.push(await projector.applyBatch(txs.slice(i, i + batchSize), { writerEpoch: 0 }));
      }
      return results;
    },
    async pipelined(txs, batchSize) {
      // As the indexer's loop runs them: the next batch is applied ahead while one commits.
      const results: BatchResult[] = [];
      let inflight: Promise<void> | undefined;
      for (let i = 0; i < txs.length; i += batchSize) {
        const prepared = await projector.applyAhead(projector.prepare(txs.slice(i, i + batchSize)));
        await inflight;
        inflight = projector.commit(prepared, { writerEpoch: 0 }).then((r) => void results.push(r));
      }
      await inflight;
      return results;
    },
    async close() {
      await database.close();
      await tdb.drop();
    },
  };
}
