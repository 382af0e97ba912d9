/**
 * The API plans of the appendix variant (issue 21), declared once: requests per minute and
 * WebSocket connections of each. Keys are created on a plan (`npm run keys`), the plan limiter
 * and the `/ws` connection limit read these, the docs list them.
 */
export const API_PLANS = [
  { name: 'free', requestsPerMinute: 60, wsConnections: 2 },
  { name: 'basic', requestsPerMinute: 300, wsConnections: 5 },
  { name: 'pro', requestsPerMinute: 1_000, wsConnections: 20 },
] as const;

export type PlanName = (typeof API_PLANS)[number]['name'];
export type Plan = (typeof API_PLANS)[number];
export const PLAN_NAMES = API_PLANS.map((p) => p.name) as readonly PlanName[];
/** Requests without a key are on this plan, counted per client IP. */
export const KEYLESS_PLAN: PlanName = 'free';
/** Plan limits count requests in windows of one minute. */
export const PLAN_WINDOW_MS = 60_000;

export const isPlanName = (s: string): s is PlanName => (PLAN_NAMES as readonly string[]).includes(s);
export const planOf = (name: PlanName): Plan => API_PLANS.find((p) => p.name === name)!;
