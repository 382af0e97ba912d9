import type { Db } from '../../core/db';

// The digests the benches compare too live with the product (core/db/table-digests.ts).
export { PROJECTED_TABLES, tableDigests } from '../../core/db/table-digests';

/** Rows of a query keyed by `key`, for comparing with the simulator's truth. */
export async function rowsBy<T extends Record<string, unknown>>(db: Db, query: string, key: (r: T) => string): Promise<Map<string, T>> {
  const rows = await db.any<T>(query);
  return new Map(rows.map((r) => [key(r), r]));
}

/** Waits for a condition by polling it (bounded): for state reached by another process. */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | null | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
