import Joi from 'joi';
import { base58Address, NO_PARAMS } from '../http/validate';
import { walletAnalytics } from '../read/queries/wallet';
import { route, type RouteDef, type RouteDeps } from './table';

/** `/v2/wallet/:address/analytics`: a wallet's trading, creation and referral figures. */
export function walletRoutes({ db }: RouteDeps): RouteDef[] {
  return [
    route({
      method: 'GET',
      path: '/v2/wallet/:address/analytics',
      access: { by: 'ip', tier: 'public' },
      params: Joi.object<{ address: string }>({ address: base58Address.required() }),
      query: NO_PARAMS,
      handler: async (_req, res, { params: { address } }) => {
        const w = await walletAnalytics(db, address);
        const settled = Number(w.settled ?? 0);
        res.json({
          data: {
            wallet: address,
            trading: {
              totalPnl: (w.total_pnl as string | null) ?? '0',
              settledTrades: settled,
              winRate: settled === 0 ? 0 : Math.round((Number(w.wins ?? 0) / settled) * 10_000) / 100,
              trades: Number(w.trades ?? 0),
              volume: (w.volume as string | null) ?? '0',
              marketsTraded: Number(w.markets_traded ?? 0),
            },
            creation: { marketsCreated: w.markets_created, feesEarned: w.fees_earned, feesClaimable: w.fees_claimable },
            referral: { totalEarned: w.ref_earned, accumulated: w.ref_accumulated, totalClaimed: w.ref_claimed, refereesCount: w.referees },
          },
        });
      },
    }),
  ];
}
