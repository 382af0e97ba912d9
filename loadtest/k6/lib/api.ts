import http, { type RefinedParams, type RefinedResponse, type ResponseType } from 'k6/http';
import { API_PREFIX, OPS_PATHS, RATE_LIMIT_TIERS, ROUTES, SERVICE_METRICS, WS_LIMIT_LABELS, type RouteTemplate, type Tier } from './generated';
import type { Target } from './env';

export type Params = Record<string, string | number>;

/** `/markets/{marketId}` with its parameters filled in (encoded), plus a query string. */
export function fill(template: RouteTemplate, params: Params = {}, query: Params = {}): string {
  const p = template.replace(/\{(\w+)\}/g, (_, k: string) => {
    const v = params[k];
    if (v === undefined) throw new Error(`${template} needs ${k}`);
    return encodeURIComponent(String(v));
  });
  const q = Object.entries(query)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
    .join('&');
  return `${API_PREFIX}${p}${q ? `?${q}` : ''}`;
}

/**
 * A request to a catalog route, tagged `name` with the route template (the `route` label of
 * the service's own metrics, so k6's results and the service's line up on the dashboards) and
 * `route_group` with the route group of the thresholds (k6 reserves `group` for group()).
 */
export function call(
  t: Target,
  method: 'GET' | 'POST',
  template: RouteTemplate,
  opts: { params?: Params; query?: Params; headers?: Record<string, string>; group?: string; body?: string } = {},
): RefinedResponse<ResponseType> {
  const url = `${t.baseUrl}${fill(template, opts.params, opts.query)}`;
  const params: RefinedParams<ResponseType> = {
    headers: opts.headers ?? {},
    tags: { name: ROUTES[template].name, route_group: opts.group ?? 'other', tenant: t.tenant },
  };
  return http.request(method, url, opts.body ?? null, params);
}

/** The JSON body's `code`, or undefined. */
export function errorCode(r: RefinedResponse<ResponseType>): string | undefined {
  try {
    const b = r.json() as { code?: unknown } | null;
    return b && typeof b.code === 'string' ? b.code : undefined;
  } catch {
    return undefined;
  }
}

export interface ConfiguredLimits {
  tiers: Record<Tier, { max: number; windowSeconds: number }>;
  ws: Record<keyof typeof WS_LIMIT_LABELS, number>;
}

/** `name{label="value"} number` lines of a Prometheus text exposition. */
function gauge(text: string, metric: string, label: string, value: string): number | undefined {
  const re = new RegExp(`^${metric}\\{[^}]*\\b${label}="${value}"[^}]*\\} ([0-9.e+]+)$`, 'm');
  const m = re.exec(text);
  return m && m[1] !== undefined ? Number(m[1]) : undefined;
}

/**
 * The limits the running service enforces, as its `/metrics` publishes them (the configured
 * rate-limit tiers and /ws limits), so no script hard-codes what a deployment can change.
 */
export function configuredLimits(t: Target): ConfiguredLimits {
  const r = http.get(`${t.baseUrl}${OPS_PATHS.metrics}`, { tags: { name: OPS_PATHS.metrics, route_group: 'ops', tenant: t.tenant } });
  if (r.status !== 200 || typeof r.body !== 'string') throw new Error(`GET ${OPS_PATHS.metrics} answered ${r.status}: the limits cannot be read`);
  const text = r.body;
  const need = (metric: string, label: string, value: string) => {
    const v = gauge(text, metric, label, value);
    if (v === undefined) throw new Error(`${metric}{${label}="${value}"} is missing from ${OPS_PATHS.metrics}`);
    return v;
  };
  const tiers = {} as ConfiguredLimits['tiers'];
  for (const tier of RATE_LIMIT_TIERS) {
    tiers[tier] = { max: need(SERVICE_METRICS.rateLimitMax, 'tier', tier), windowSeconds: need(SERVICE_METRICS.rateLimitWindow, 'tier', tier) };
  }
  const ws = {} as ConfiguredLimits['ws'];
  for (const [key, label] of Object.entries(WS_LIMIT_LABELS) as [keyof typeof WS_LIMIT_LABELS, string][]) {
    ws[key] = need(SERVICE_METRICS.configuredLimit, 'limit', label);
  }
  return { tiers, ws };
}

/**
 * The chain identifier signed messages must carry: CHAIN_ID from the environment, else the
 * deployment's own (`GET /config`, a public market read of this address).
 */
export function chainId(t: Target): string {
  if (__ENV.CHAIN_ID) return __ENV.CHAIN_ID;
  const r = call(t, 'GET', '/config', { group: 'setup' });
  if (r.status === 429) throw new Error(`GET /config answered 429: this address spent its public read window (limits-rest?); wait ${r.headers['Retry-After']} s or set CHAIN_ID`);
  const id = (r.status === 200 ? (r.json() as { chainId?: unknown }) : {}).chainId;
  if (typeof id !== 'string') throw new Error(`GET /config answered ${r.status} without chainId`);
  return id;
}
