import { OPS_PATHS } from '../core/constants';
import { METRIC_LABELS, METRIC_SERVICES, METRICS, metricName, type MetricKey } from '../core/telemetry/metrics';

/**
 * PromQL selectors written from the metric catalog (core/telemetry/metrics.ts): the dashboards
 * and the alert rules name no metric or label of their own, so a renamed metric changes them
 * (and the live-scrape test checks every expression against real processes).
 */

/** Label matchers: `{ tenant: '"alpha"' }` is written as is, so callers choose `=`, `=~` or `!~`. */
export type Matchers = Record<string, string>;

const PROCESS_OF: Record<'api' | 'indexer', string> = { api: METRIC_SERVICES.api, indexer: METRIC_SERVICES.indexer };

/** Which process a metric is read from: the indexer's slot lag, not the API's copy of it. */
export function processOf(key: MetricKey): 'api' | 'indexer' {
  return (METRICS[key].services as readonly string[]).includes(METRIC_SERVICES.indexer) ? 'indexer' : 'api';
}

/** `{a="1",b=~"x"}`; the matchers' values are written as given (quoted by `eq`/`re`). */
export function matchers(m: Matchers): string {
  const parts = Object.entries(m).map(([k, v]) => `${k}${v}`);
  return parts.length ? `{${parts.join(',')}}` : '';
}

export const eq = (v: string) => `=${JSON.stringify(v)}`;
export const re = (v: string) => `=~${JSON.stringify(v)}`;
export const nre = (v: string) => `!~${JSON.stringify(v)}`;

/**
 * A selector of a catalog metric, restricted to the process that sets it (`service` label) and
 * to the given scope (a tenant, dashboard variables). `suffix` picks a histogram's series.
 */
export function sel(key: MetricKey, scope: Matchers, extra: Matchers = {}, suffix: '' | '_bucket' | '_sum' | '_count' = ''): string {
  return `${metricName(key)}${suffix}${matchers({ [METRIC_LABELS.service]: eq(PROCESS_OF[processOf(key)]), ...scope, ...extra })}`;
}

/** Requests the SLOs count: every route but the probes and the scrape. */
export const SLO_ROUTES: Matchers = { route: nre(Object.values(OPS_PATHS).join('|')) };

/** The labels a metric of the catalog carries (default labels, its own, `le` for histograms). */
export function labelsOf(key: MetricKey): string[] {
  const spec = METRICS[key] as { labelNames?: readonly string[]; type: string };
  return [...Object.values(METRIC_LABELS), ...(spec.labelNames ?? []), ...(spec.type === 'histogram' ? ['le'] : [])];
}
