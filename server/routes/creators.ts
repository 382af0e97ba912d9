import Joi from 'joi';
import { MarketState } from '../../core/domain';
import { base58Address, NO_PARAMS } from '../http/validate';
import { marketsOfCreator } from '../read/queries/markets';
import { iso } from '../read/serialize';
import { route, type RouteDef, type RouteDeps } from './table';

/** `/creators/:wallet`: the markets a wallet created, their fees, and the creator fees not yet claimed. */
export function creatorsRoutes({ db }: RouteDeps): RouteDef[] {
  return [
    route({
      method: 'GET',
      path: '/creators/:wallet',
      access: { by: 'ip', tier: 'public' },
      params: Joi.object<{ wallet: string }>({ wallet: base58Address.required() }),
      query: NO_PARAMS,
      handler: async (_req, res, { params: { wallet } }) => {
        const markets = await marketsOfCreator(db, wallet);
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
      },
    }),
  ];
}
