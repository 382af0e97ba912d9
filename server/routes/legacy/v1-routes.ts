import type { Response } from 'express';
import { adminRoutes } from '../admin';
import { attestationsRoutes } from '../attestations';
import type { RouteDef, RouteDeps } from '../table';
import { txRoutes } from '../tx';

/**
 * The v1 routes the appendix variant serves as well (D-177): issue 22's `/tx/*`, `POST
 * /attestations` and the `/admin/*` routes work with either variant. The same `RouteDef`s
 * (access, admin gate, jurisdiction policy, body rules, handler), only their success bodies
 * written in the variant's envelope; their errors go through the variant's error writer as
 * every other error does.
 */
export const legacyV1Routes = (deps: RouteDeps): RouteDef[] => [...txRoutes(deps), ...attestationsRoutes(deps), ...adminRoutes(deps)].map(inLegacyEnvelope);

/**
 * A v1 route whose success answer is written as `{ success: true, data, timestamp }`.
 *
 * Every v1 handler answers `res.json({ data })` (after `res.status(202)` where it may accept,
 * D-164), so the wrapper overrides `json` on this one response before the handler runs: the
 * handlers stay as they are (no writer parameter threaded through five tx builders and eight
 * admin operations) and no other response is touched. Only a success status is wrapped: an
 * error written on the same response (the error writer's `res.status(4xx|5xx).json(...)`, a
 * timeout firing while the handler waits) is already in the variant's error shape.
 */
export function inLegacyEnvelope(def: RouteDef): RouteDef {
  return {
    ...def,
    handler: (req, res, input) => {
      const json = res.json.bind(res);
      res.json = ((body: { data?: unknown }) =>
        res.statusCode >= 400 ? json(body) : json({ success: true, data: body.data, timestamp: Date.now() })) as Response['json'];
      return def.handler(req, res, input);
    },
  };
}
