import Joi from 'joi';
import type { Db } from '../../core/db';
import { base58Address, limit, NO_PARAMS } from '../http/validate';
import { refereeCount, referralLock, referralSums, referrerEarnings, referrerLeaderboard } from '../read/queries/referrals';
import { iso } from '../read/serialize';
import { route, type RouteDef, type RouteDeps } from './table';

const walletParam = Joi.object<{ wallet: string }>({ wallet: base58Address.required() });

/** The referral accounting checks of `/v2/referrals/diagnostics` (D-47), over one snapshot. */
async function referralDiagnostics(db: Db) {
  const d = await referralSums(db);
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

/** `/v2/referral`, `/v2/referrer`, `/v2/referrals`: who referred a wallet, a referrer's earnings, rankings, accounting checks. */
export function referralsRoutes({ db, hot }: RouteDeps): RouteDef[] {
  const pub = { by: 'ip', tier: 'public' } as const;
  return [
    route({
      method: 'GET',
      path: '/v2/referral/:wallet',
      access: pub,
      params: walletParam,
      query: NO_PARAMS,
      handler: async (_req, res, { params: { wallet } }) => {
        const lock = await referralLock(db, wallet);
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
      },
    }),
    route({
      method: 'GET',
      path: '/v2/referrer/:wallet/earnings',
      access: pub,
      params: walletParam,
      query: Joi.object<{ mint?: string }>({ mint: base58Address }),
      handler: async (_req, res, { params: { wallet }, query: q }) => {
        const [row, referees] = await Promise.all([referrerEarnings(db, wallet, q.mint ?? null), refereeCount(db, wallet)]);
        res.json({
          success: true,
          data: row
            ? {
                wallet,
                accumulated: String(row.accumulated),
                totalClaimed: String(row.total_claimed),
                refereesCount: referees,
                lastCreditAt: row.last_credit_at ? (row.last_credit_at as Date).getTime() : null,
                settlementMint: row.settlement_mint as string,
              }
            : null,
        });
      },
    }),
    route({
      method: 'GET',
      path: '/v2/referrals/leaderboard',
      access: pub,
      query: Joi.object<{ limit: number }>({ limit: limit(25, 100) }),
      handler: async (_req, res, { query: q }) => {
        const rows = await referrerLeaderboard(db, q.limit);
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
      },
    }),
    route({
      method: 'GET',
      path: '/v2/referrals/diagnostics',
      conditional: true,
      access: pub,
      query: NO_PARAMS,
      // It sums whole tables: served from memory like the hot reads (D-48), so a flood of it costs
      // the database one computation per commit or second, not one per request.
      handler: (_req, res) => hot.send(res, 'referrals:diagnostics', () => referralDiagnostics(db)),
    }),
  ];
}
