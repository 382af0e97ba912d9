import { API_PREFIX } from '../../../core/constants';
import type { Presentation, RouteDef, RouteDeps } from '../table';
import { legacyOrderbookRoutes, legacyPositionsRoutes, legacyTradesRoutes } from './book-positions-trades';
import { legacyErrorBody } from './envelope';
import { legacyMarketsRoutes } from './markets';
import { legacyOracleRoutes, legacyProtocolRoutes } from './oracle-protocol';
import { legacyV1Routes } from './v1-routes';

/** Every endpoint of the spec appendix's table (all GET), limited by API-key plan. */
export const legacyAppendixRoutes = (deps: RouteDeps): RouteDef[] => [
  ...legacyMarketsRoutes(deps),
  ...legacyOrderbookRoutes(deps),
  ...legacyPositionsRoutes(deps),
  ...legacyTradesRoutes(deps),
  ...legacyOracleRoutes(deps),
  ...legacyProtocolRoutes(deps),
];

/** The appendix's table, then issue 22's v1 routes in the variant's envelope (D-177). */
export const legacyRoutes = (deps: RouteDeps): RouteDef[] => [...legacyAppendixRoutes(deps), ...legacyV1Routes(deps)];

/**
 * The appendix variant (D-155): the same prefix and aliases as v1, its own routes and
 * envelopes; the v1-only paths are its 404 (and its paths are v1's 404 in a v1 tenant), except
 * issue 22's `/tx/*`, `/attestations` and `/admin/*`, served with the same route definitions (D-177).
 */
export const legacyPresentation: Presentation = {
  prefix: API_PREFIX,
  routes: legacyRoutes,
  errorBody: legacyErrorBody,
  openapi: 'openapi-legacy.yaml',
};
