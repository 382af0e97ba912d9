import type { Db } from '../../core/db';
import { DEFAULT_FEE_CONFIG, DEFAULT_TICK_SIZE_BPS } from '../../core/domain';

type Row = Record<string, unknown>;

/** Resting orders (open, pending_cancel, cancel_failed): answered from the partial index `orders_resting_idx`. */
export const RESTING_ORDERS_COUNT = 'SELECT count(*)::int FROM orders WHERE status_code IN (0, 4, 5)';

/** Trades logged by one transaction, in event order (`/trades?tx=` and `/orders?tx=`). */
export const tradesOfTransaction = (db: Db, tx: string, limit: number) =>
  db.any<Row>('SELECT * FROM trades WHERE tx_signature = $1 ORDER BY event_index LIMIT $2', [tx, limit]);

/** The live tick size and fee curve (newest config events), with the spec's defaults before any. */
export async function liveProgramConfig(db: Db): Promise<{ tickSizeBps: number; feeConfig: { feeCapBps: number; decayRateBps: number } }> {
  const [tick, fee] = await Promise.all([
    db.oneOrNone<{ tick_size_bps: number }>('SELECT tick_size_bps FROM tick_size_history ORDER BY slot DESC, event_index DESC LIMIT 1'),
    db.oneOrNone<{ fee_cap_bps: number; decay_rate_bps: number }>('SELECT fee_cap_bps, decay_rate_bps FROM fee_config_history ORDER BY slot DESC, event_index DESC LIMIT 1'),
  ]);
  return {
    tickSizeBps: tick?.tick_size_bps ?? DEFAULT_TICK_SIZE_BPS,
    feeConfig: fee ? { feeCapBps: fee.fee_cap_bps, decayRateBps: fee.decay_rate_bps } : { ...DEFAULT_FEE_CONFIG },
  };
}
