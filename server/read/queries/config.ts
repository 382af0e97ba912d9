import type { Db } from '../../../core/db';
import { DEFAULT_FEE_CONFIG, DEFAULT_TICK_SIZE_BPS } from '../../../core/domain';
import type { DbRow } from './rows';

export interface LiveProgramConfig {
  tickSizeBps: number;
  feeConfig: { feeCapBps: number; decayRateBps: number };
}

/** The live tick size and fee curve (newest config events), with the spec's defaults before any. */
export async function liveProgramConfig(db: Db): Promise<LiveProgramConfig> {
  const [tick, fee] = await Promise.all([
    db.oneOrNone<{ tick_size_bps: number }>('SELECT tick_size_bps FROM tick_size_history ORDER BY slot DESC, event_index DESC LIMIT 1'),
    db.oneOrNone<{ fee_cap_bps: number; decay_rate_bps: number }>('SELECT fee_cap_bps, decay_rate_bps FROM fee_config_history ORDER BY slot DESC, event_index DESC LIMIT 1'),
  ]);
  return {
    tickSizeBps: tick?.tick_size_bps ?? DEFAULT_TICK_SIZE_BPS,
    feeConfig: fee ? { feeCapBps: fee.fee_cap_bps, decayRateBps: fee.decay_rate_bps } : { ...DEFAULT_FEE_CONFIG },
  };
}

/** The newest `limit` fee-config changes, newest first. */
export const feeConfigHistory = (db: Db, limit: number) =>
  db.any<DbRow>('SELECT * FROM fee_config_history ORDER BY slot DESC, event_index DESC LIMIT $1', [limit]);

/** Every fee split ever configured, for the invariant check. */
export const feeSplits = (db: Db) =>
  db.any<{ protocol_share_bps: number; creator_share_bps: number; referral_share_bps: number }>(
    'SELECT protocol_share_bps, creator_share_bps, referral_share_bps FROM fee_config_history',
  );
