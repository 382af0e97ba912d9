import type { Db } from '../../../core/db';

type Row = Record<string, unknown>;

export interface MarketsPageQuery {
  state?: number;
  limit: number;
  offset: number;
}

/**
 * One page of `GET /markets`, newest epoch first (market_id DESC, id DESC), and the total.
 *
 * A deep OFFSET is found by the block counts the projector keeps (`market_list_blocks`, D-130):
 * running sums over the blocks, newest first, name the block the page starts in and how many
 * of its entries come before the page, so the index skips at most one block's entries instead
 * of `offset` entries. The counts and the rows are read in one statement, so one snapshot: a
 * batch the indexer commits meanwhile is in both or in neither.
 */
function pageQuery(filtered: boolean): string {
  const byState = filtered ? 'AND state = $3' : '';
  return `WITH blocks AS (
      SELECT block, sum(n) AS n FROM market_list_blocks WHERE true ${byState} GROUP BY block
    ), start AS (
      SELECT block, ($2 - (before_and_in - n))::bigint AS skip
        FROM (SELECT block, n, sum(n) OVER (ORDER BY block DESC) AS before_and_in FROM blocks) c
       WHERE before_and_in > $2
       ORDER BY block DESC LIMIT 1
    )
    SELECT m.* FROM markets m JOIN (
      SELECT id FROM markets
       WHERE market_id < (SELECT market_list_block_end(block) FROM start) ${byState}
       ORDER BY market_id DESC, id DESC LIMIT $1 OFFSET (SELECT skip FROM start)
    ) page USING (id)
    ORDER BY m.market_id DESC, m.id DESC`;
}

const PAGE = pageQuery(false);
const PAGE_OF_STATE = pageQuery(true);

/** `db` may be a transaction (the tests compare it with a plain OFFSET in one snapshot). */
export async function marketsPage(db: Pick<Db, 'any' | 'one'>, q: MarketsPageQuery): Promise<{ rows: Row[]; total: number }> {
  const filtered = q.state !== undefined;
  const [rows, count] = await Promise.all([
    db.any<Row>(filtered ? PAGE_OF_STATE : PAGE, [q.limit, q.offset, q.state]),
    db.one<{ n: number }>(`SELECT COALESCE(sum(n), 0)::int AS n FROM market_counts ${filtered ? 'WHERE state = $1' : ''}`, [q.state]),
  ]);
  return { rows, total: count.n };
}
