import { Router } from 'express';
import Joi from 'joi';
import type { Db } from '../../core/db';
import { MarketState } from '../../core/domain';
import { base58Address, limit, NO_PARAMS, parse } from '../http/validate';
import { sendCached, type HotCache } from '../read/hot-cache';
import { iso } from '../read/serialize';
import type { Guards } from './guards';

type Row = Record<string, unknown>;
const CATEGORIES = ['trading', 'streak', 'accuracy', 'exploration'] as const;

const achievement = (r: Row) => ({
  id: Number(r.id),
  code: r.code as string,
  name: r.name as string,
  description: r.description as string,
  category: r.category as string,
  iconUrl: (r.icon_url as string | null) ?? null,
  threshold: Number(r.threshold),
  createdAt: iso(r.created_at),
});

const walletParam = Joi.object({ wallet: base58Address.required() });
const mintQuery = Joi.object({ mint: base58Address });
const leaderboardQuery = Joi.object({ limit: limit(25, 100) });

/** The referral accounting checks of `/v2/referrals/diagnostics` (D-47), over one snapshot. */
async function referralDiagnostics(db: Db) {
  const d = await db.one<Row>(
    `SELECT (SELECT count(*)::int FROM referral_locks) AS locks,
            (SELECT count(*)::int FROM referral_locks WHERE expires_at > now()) AS active_locks,
            (SELECT count(DISTINCT wallet)::int FROM referrer_earnings) AS referrers,
            (SELECT COALESCE(sum(amount), 0)::text FROM referrer_credits) AS credited,
            (SELECT COALESCE(sum(amount), 0)::text FROM referrer_claims) AS claimed,
            (SELECT COALESCE(sum(accumulated), 0)::text FROM referrer_earnings) AS accumulated,
            (SELECT COALESCE(sum(total_earned), 0)::text FROM referrer_earnings) AS earned,
            (SELECT COALESCE(sum(fee_referral), 0)::text FROM trades) AS trade_referral_fees`,
  );
  const credited = BigInt(d.credited as string);
  const data = {
    locks: d.locks,
    activeLocks: d.active_locks,
    referrers: d.referrers,
    totalCredited: d.credited,
    totalClaimed: d.claimed,
    totalAccumulated: d.accumulated,
    tradeReferralFees: d.trade_referral_fees,
    checks: {
      // Every credit is in some referrer's earnings, and earnings = claimable + claimed.
      creditsMatchEarnings: credited === BigInt(d.earned as string),
      earningsBalance: credited === BigInt(d.accumulated as string) + BigInt(d.claimed as string),
      creditsMatchTradeFees: credited === BigInt(d.trade_referral_fees as string),
    },
  };
  return { status: 200, json: { data } };
}

export function achievementsReferralsCreatorsRouter(db: Db, g: Guards, hot: HotCache): Router {
  const r = Router();
  const pub = g.ip('public');

  r.get('/achievements/all', pub, async (req, res) => {
    parse(NO_PARAMS, req.query, 'query');
    const rows = await db.any<Row>('SELECT * FROM achievements ORDER BY id');
    res.json({ data: { achievements: rows.map(achievement) } });
  });

  r.get('/achievements', g.wallet('authenticated'), async (req, res) => {
    parse(NO_PARAMS, req.query, 'query');
    const rows = await db.any<Row>(
      `SELECT a.*, COALESCE(u.progress, 0) AS progress, u.unlocked_at
         FROM achievements a LEFT JOIN user_achievements u ON u.achievement_id = a.id AND u.wallet = $1 ORDER BY a.id`,
      [req.wallet],
    );
    const achievements = rows.map((x) => ({ ...achievement(x), progress: Number(x.progress), unlockedAt: iso(x.unlocked_at) }));
    const grouped = Object.fromEntries(CATEGORIES.map((c) => [c, achievements.filter((a) => a.category === c)]));
    res.json({ data: { achievements, grouped, stats: { total: achievements.length, unlocked: achievements.filter((a) => a.unlockedAt !== null).length } } });
  });

  r.get('/v2/referral/:wallet', pub, async (req, res) => {
    const { wallet } = parse(walletParam, req.params, 'path');
    parse(NO_PARAMS, req.query, 'query');
    const lock = await db.oneOrNone<Row>('SELECT * FROM referral_locks WHERE wallet = $1', [wallet]);
    res.json({
      success: true,
      data: lock
        ? {
            wallet,
            referrer: lock.referrer as string,
            expiresAt: (lock.expires_at as Date).getTime(),
            isLocked: (lock.expires_at as Date).getTime() > Date.now(),
            createdAt: iso(lock.created_at),
          }
        : null,
    });
  });

  r.get('/v2/referrer/:wallet/earnings', pub, async (req, res) => {
    const { wallet } = parse(walletParam, req.params, 'path');
    const q = parse(mintQuery, req.query, 'query');
    const [row, referees] = await Promise.all([
      db.oneOrNone<Row>(
        `SELECT * FROM referrer_earnings WHERE wallet = $1 AND ($2::text IS NULL OR settlement_mint = $2)
          ORDER BY total_earned DESC, settlement_mint LIMIT 1`,
        [wallet, q.mint ?? null],
      ),
      db.one<{ n: number }>('SELECT count(*)::int AS n FROM referral_locks WHERE referrer = $1', [wallet]),
    ]);
    res.json({
      success: true,
      data: row
        ? {
            wallet,
            accumulated: String(row.accumulated),
            totalClaimed: String(row.total_claimed),
            refereesCount: referees.n,
            lastCreditAt: row.last_credit_at ? (row.last_credit_at as Date).getTime() : null,
            settlementMint: row.settlement_mint as string,
          }
        : null,
    });
  });

  r.get('/v2/referrals/leaderboard', pub, async (req, res) => {
    const q = parse(leaderboardQuery, req.query, 'query');
    const rows = await db.any<Row>(
      `SELECT e.wallet, sum(e.accumulated)::text AS accumulated, sum(e.total_earned)::text AS total_earned,
              sum(e.total_claimed)::text AS total_claimed,
              (SELECT count(*)::int FROM referral_locks l WHERE l.referrer = e.wallet) AS referees
         FROM referrer_earnings e GROUP BY e.wallet ORDER BY sum(e.accumulated) DESC, e.wallet LIMIT $1`,
      [q.limit],
    );
    res.json({
      data: {
        leaderboard: rows.map((x, i) => ({
          rank: i + 1,
          wallet: x.wallet as string,
          accumulated: x.accumulated as string,
          totalEarned: x.total_earned as string,
          totalClaimed: x.total_claimed as string,
          refereesCount: Number(x.referees),
        })),
        limit: q.limit,
      },
    });
  });

  r.get('/v2/referrals/diagnostics', pub, async (req, res) => {
    parse(NO_PARAMS, req.query, 'query');
    // It sums whole tables: served from memory like the hot reads (D-48), so a flood of it costs
    // the database one computation per commit or second, not one per request.
    sendCached(res, await hot.get('referrals:diagnostics', () => referralDiagnostics(db)));
  });

  r.get('/creators/:wallet', pub, async (req, res) => {
    const { wallet } = parse(walletParam, req.params, 'path');
    parse(NO_PARAMS, req.query, 'query');
    const markets = await db.any<Row>('SELECT * FROM markets WHERE creator = $1 ORDER BY market_id DESC, id DESC', [wallet]);
    let earned = 0n;
    let volume = 0n;
    for (const m of markets) {
      earned += BigInt(String(m.creator_fees_earned));
      volume += BigInt(String(m.total_volume));
    }
    res.json({
      data: {
        walletAddress: wallet,
        totalFeesEarned: earned.toString(),
        marketsCreated: markets.length,
        totalVolume: volume.toString(),
        markets: markets.map((m) => ({
          address: m.address as string,
          pair: (m.oracle_feed_id as string | null) ?? '',
          state: Number(m.state),
          volume: String(m.total_volume),
          trades: Number(m.total_trades),
          feesEarned: String(m.creator_fees_earned),
          createdAt: iso(m.created_at),
        })),
        deferredFees: markets
          .filter((m) => (Number(m.state) === MarketState.Resolved || Number(m.state) === MarketState.Closed) && BigInt(String(m.accumulated_creator_fees)) > 0n)
          .map((m) => ({
            marketAddress: m.address as string,
            accumulatedCreatorFees: String(m.accumulated_creator_fees),
            settlementMint: m.settlement_mint as string,
            outcome: Number(m.outcome),
            pair: (m.oracle_feed_id as string | null) ?? null,
            oracleFeedId: (m.oracle_feed_id as string | null) ?? null,
          })),
      },
    });
  });

  return r;
}
