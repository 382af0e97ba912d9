import type { Db } from '../../../core/db';
import type { DbRow } from './rows';

export const referralLock = (db: Db, wallet: string) => db.oneOrNone<DbRow>('SELECT * FROM referral_locks WHERE wallet = $1', [wallet]);

/** A referrer's earnings in `mint`, or in its best-earning mint when none is named. */
export const referrerEarnings = (db: Db, wallet: string, mint: string | null) =>
  db.oneOrNone<DbRow>(
    `SELECT * FROM referrer_earnings WHERE wallet = $1 AND ($2::text IS NULL OR settlement_mint = $2)
      ORDER BY total_earned DESC, settlement_mint LIMIT 1`,
    [wallet, mint],
  );

export const refereeCount = (db: Db, referrer: string) =>
  db.one<{ n: number }>('SELECT count(*)::int AS n FROM referral_locks WHERE referrer = $1', [referrer]).then((r) => r.n);

/** Referrers by claimable earnings over every mint, ties by wallet. */
export const referrerLeaderboard = (db: Db, limit: number) =>
  db.any<DbRow>(
    `SELECT e.wallet, sum(e.accumulated)::text AS accumulated, sum(e.total_earned)::text AS total_earned,
            sum(e.total_claimed)::text AS total_claimed,
            (SELECT count(*)::int FROM referral_locks l WHERE l.referrer = e.wallet) AS referees
       FROM referrer_earnings e GROUP BY e.wallet ORDER BY sum(e.accumulated) DESC, e.wallet LIMIT $1`,
    [limit],
  );

/** The referral accounting sums of `/v2/referrals/diagnostics` (D-47), over one snapshot. */
export const referralSums = (db: Db) =>
  db.one<DbRow>(
    `SELECT (SELECT count(*)::int FROM referral_locks) AS locks,
            (SELECT count(*)::int FROM referral_locks WHERE expires_at > now()) AS active_locks,
            (SELECT count(DISTINCT wallet)::int FROM referrer_earnings) AS referrers,
            (SELECT COALESCE(sum(amount), 0)::text FROM referrer_credits) AS credited,
            (SELECT COALESCE(sum(amount), 0)::text FROM referrer_claims) AS claimed,
            (SELECT COALESCE(sum(accumulated), 0)::text FROM referrer_earnings) AS accumulated,
            (SELECT COALESCE(sum(total_earned), 0)::text FROM referrer_earnings) AS earned,
            (SELECT COALESCE(sum(fee_referral), 0)::text FROM trades) AS trade_referral_fees`,
  );
