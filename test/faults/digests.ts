// What the fault scenarios that interrupt the indexer compare its tables with (kept out of
// ./support.ts, which the global teardown loads).
import type { Db } from '../../core/db';
import { projectionDb, simulate } from '../support/indexer';
import { tableDigests } from '../support/tables';

/** The table digests of the simulated chain `seed` indexed up to `until` without interruption: what an interrupted run must equal. */
export async function uninterruptedDigests(seed: number, until: number): Promise<Record<string, unknown>> {
  const ref = await projectionDb();
  try {
    await ref.apply(simulate(until, { seed }).txs, 500);
    return await tableDigests(ref.database.db);
  } finally {
    await ref.close();
  }
}

/** The tables of `db` whose digest differs from `expected`'s. */
export async function differingTables(expected: Record<string, unknown>, db: Db): Promise<string[]> {
  const digests = await tableDigests(db);
  return Object.keys(expected).filter((t) => JSON.stringify(expected[t]) !== JSON.stringify(digests[t]));
}
