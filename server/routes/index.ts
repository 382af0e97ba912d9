import { API_PREFIX } from '../../core/constants';
import { v1ErrorBody } from '../http/errors';
import { achievementsRoutes } from './achievements';
import { adminRoutes } from './admin';
import { attestationsRoutes } from './attestations';
import { challengesRoutes } from './challenges';
import { configRoutes } from './config';
import { creatorsRoutes } from './creators';
import { feeConfigRoutes } from './fee-config';
import { leaderboardRoutes } from './leaderboard';
import { marketsRoutes } from './markets';
import { orderbookRoutes } from './orderbook';
import { ordersRoutes } from './orders';
import { positionsRoutes } from './positions';
import { referralsRoutes } from './referrals';
import { statsRoutes } from './stats';
import { statusRoutes } from './status';
import type { Presentation, RouteDeps, RouteDef } from './table';
import { tradesRoutes } from './trades';
import { txRoutes } from './tx';
import { walletRoutes } from './wallet';

/** Every route of the spec's interface (v1), one resource per file. */
export const v1Routes = (deps: RouteDeps): RouteDef[] => [
  ...marketsRoutes(deps),
  ...orderbookRoutes(deps),
  ...tradesRoutes(deps),
  ...configRoutes(deps),
  ...feeConfigRoutes(deps),
  ...ordersRoutes(deps),
  ...positionsRoutes(deps),
  ...statsRoutes(deps),
  ...leaderboardRoutes(deps),
  ...challengesRoutes(deps),
  ...walletRoutes(deps),
  ...achievementsRoutes(deps),
  ...referralsRoutes(deps),
  ...creatorsRoutes(deps),
  ...statusRoutes(deps),
  ...txRoutes(deps),
  ...attestationsRoutes(deps),
  ...adminRoutes(deps),
];

/** The spec's interface: `/api/v1`, bodies as each route writes them, errors as `{ error, code, details? }`. */
export const v1Presentation: Presentation = {
  prefix: API_PREFIX,
  routes: v1Routes,
  errorBody: v1ErrorBody,
};
