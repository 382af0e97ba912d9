import { createDatabase, type Database } from '../../core/db';
import { IDL, type RawTransaction } from '../../core/events';
import { MarketSimulator, type SimulatorOptions } from '../../indexer/sources/simulator/engine';
import { createProjector, type BatchResult, type Projector } from '../../indexer/project';
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
  apply(txs: RawTransaction[], batchSize?: number): Promise<BatchResult[]>;
  close(): Promise<void>;
}

/** A fresh migrated database with a projector writing into it (writer epoch 0). */
export async function projectionDb(): Promise<ProjectionDb> {
  const tdb = await createTestDatabase();
  const database = createDatabase({ url: tdb.url, poolMax: 4 });
  const projector = createProjector({ db: database.db, pgp: database.pgp, programId: PROGRAM_ID, source: 'test' });
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
    async close() {
      await database.close();
      await tdb.drop();
    },
  };
}
