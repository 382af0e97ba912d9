import { isValidFeeSplit } from '../../core/domain';
import { NO_PARAMS } from '../http/validate';
import { feeConfigHistory, feeSplits } from '../read/queries/config';
import { feeConfigRow } from '../read/serialize';
import { route, type RouteDef, type RouteDeps } from './table';

const FEE_HISTORY = 25;

/** `/v2/fee-config`: the fee configuration, its recent history, and whether every split ever set was valid. */
export function feeConfigRoutes({ db }: RouteDeps): RouteDef[] {
  return [
    route({
      method: 'GET',
      path: '/v2/fee-config',
      access: { by: 'ip', tier: 'public' },
      query: NO_PARAMS,
      handler: async (_req, res) => {
        const [history, splits] = await Promise.all([feeConfigHistory(db, FEE_HISTORY), feeSplits(db)]);
        const invalidFeeSplitRows = splits.filter(
          (x) => !isValidFeeSplit({ protocolShareBps: Number(x.protocol_share_bps), creatorShareBps: Number(x.creator_share_bps), referralShareBps: Number(x.referral_share_bps) }),
        ).length;
        res.json({
          current: history[0] ? feeConfigRow(history[0]) : null,
          history: history.map(feeConfigRow),
          invariants: { feeSplitValid: invalidFeeSplitRows === 0, invalidFeeSplitRows },
        });
      },
    }),
  ];
}
