/**
 * The `/ws` limits as the dashboards and alerts see them: each documented limit as enforced
 * here (service_configured_limit), the live value closest to it computed when /metrics is
 * scraped, and the refusal counter (service_ws_refusals_total) with its reasons.
 */
import type { Common } from '../../core/common';
import { WS_LIMIT_GAUGES, type WsLimitKey } from '../../core/limits';
import { API_PLANS } from '../../core/plans';
import { collectOnScrape } from '../../core/telemetry/metrics';
import type { Client } from './client';
import { MAX_SUBSCRIPTIONS } from './protocol';

/** Values of the `reason` label of service_ws_refusals_total. */
export const WS_REFUSAL_REASONS = [
  'shutting_down',
  'max_clients',
  'per_ip',
  'flood',
  'message_too_big',
  'max_subscriptions',
  'auth_failures',
  'unknown_markets',
  'invalid_api_key',
  'key_revoked',
] as const;
export type RefusalReason = (typeof WS_REFUSAL_REASONS)[number];

/** Publishes the limits and the live maxima over `clients`; returns the refusal counter. */
export function instrumentLimits(deps: {
  metrics: Common['metrics'];
  clients: ReadonlySet<Client>;
  limits: { maxClients: number; maxConnectionsPerIp: number; maxBufferedBytes: number; maxSkips: number };
  /** The appendix variant: connections are counted per plan too. */
  plans: boolean;
}): (reason: RefusalReason) => void {
  const { metrics, clients } = deps;
  // Computed when /metrics is scraped (a pass over at most WS_MAX_CLIENTS clients), not on every update.
  const limits: Record<WsLimitKey, number> = {
    wsClients: deps.limits.maxClients,
    wsConnectionsPerIp: deps.limits.maxConnectionsPerIp,
    wsSubscriptionsPerClient: MAX_SUBSCRIPTIONS,
    wsSendBufferBytes: deps.limits.maxBufferedBytes,
    wsConsecutiveSkips: deps.limits.maxSkips,
  };
  for (const key of Object.keys(limits) as WsLimitKey[]) metrics.configuredLimit.set({ limit: WS_LIMIT_GAUGES[key].label }, limits[key]);
  const most = (value: (c: Client) => number) => () => {
    let m = 0;
    for (const c of clients) m = Math.max(m, value(c));
    return m;
  };
  collectOnScrape(metrics.wsClientSubscriptionsMax, most((c) => c.subscriptions.size));
  collectOnScrape(metrics.wsSendBufferMax, most((c) => c.ws.bufferedAmount));
  collectOnScrape(metrics.wsConsecutiveSkipsMax, most((c) => c.skips));
  collectOnScrape(metrics.wsIpConnectionsMax, () => {
    const perIp = new Map<string, number>();
    let m = 0;
    for (const c of clients) {
      const n = (perIp.get(c.lease.ip) ?? 0) + 1;
      perIp.set(c.lease.ip, n);
      if (n > m) m = n;
    }
    return m;
  });
  // Every reason's counter exists from the start, so a rule sees its first increase.
  for (const reason of WS_REFUSAL_REASONS) metrics.wsRefusals.inc({ reason }, 0);
  if (deps.plans) for (const p of API_PLANS) metrics.planWsConnections.set({ plan: p.name }, 0);
  return (reason) => metrics.wsRefusals.inc({ reason });
}
