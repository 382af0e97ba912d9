import { METRIC_LABELS, METRIC_SERVICES, METRICS } from '../../core/telemetry/metrics';
import { WS_LIMIT_GAUGES } from '../../core/limits';
import { SYNCED_MAX_SLOT_LAG } from '../../core/health';
import { eq, matchers, re, sel, SLO_ROUTES, type Matchers } from '../promql';

/**
 * The service's Prometheus rules, written from the catalogs: alerts (each with severity,
 * summary, description and a runbook in docs/runbooks/<alert>.md) and the recording rules of
 * the SLOs. One function renders them for one tenant (the kit's PrometheusRule, thresholds from
 * the tenant's `monitoring` values) or for every tenant at once (the plain rules file,
 * observability/prometheus/rules.yaml, for a Prometheus without the operator).
 */

export interface AlertRule {
  alert: string;
  expr: string;
  for: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}
export interface RecordingRule {
  record: string;
  expr: string;
  labels?: Record<string, string>;
}
export interface RuleGroup {
  name: string;
  interval?: string;
  rules: (AlertRule | RecordingRule)[];
}

/**
 * The tunable thresholds. Values are strings as they appear in PromQL and in the rule
 * (`"100"`, `"0.999"`, `"5m"`), so the Helm chart can render the same rules from a template
 * with placeholders (charts/market-indexer/files/rules.json).
 */
export interface RuleThresholds {
  slotLag: { warning: string; critical: string; for: string };
  slo: { availability: string; latency: string; latencyThreshold: string };
}

/** Where the rules look: one tenant, or all of them (plain file); and how scrape targets are selected. */
export interface RuleScope {
  /** Restricts every expression to one tenant and labels every alert with it. */
  tenant?: string;
  /** Labels every alert with the environment it pages for (one Prometheus may watch several). */
  environment?: string;
  /** Matchers of the `up` series of the API's and the indexer's scrape targets. */
  targets: { api: Matchers; indexer: Matchers };
}

/** Default thresholds (the kit's TENANT_DEFAULTS.monitoring and the plain rules file use them). */
export const RULE_DEFAULTS = {
  // Where /status stops calling the indexer synced (spec 4.9).
  slotLag: { warning: SYNCED_MAX_SLOT_LAG, critical: 1000, for: '5m' },
  slo: { availability: 0.999, latency: 0.99, latencyThreshold: 0.25 },
} as const;

export const asThresholds = (v: {
  slotLag: { warning: number | string; critical: number | string; for: string };
  slo: { availability: number | string; latency: number | string; latencyThreshold: number | string };
}): RuleThresholds => ({
  slotLag: { warning: String(v.slotLag.warning), critical: String(v.slotLag.critical), for: v.slotLag.for },
  slo: { availability: String(v.slo.availability), latency: String(v.slo.latency), latencyThreshold: String(v.slo.latencyThreshold) },
});

/** Where the runbooks are read (docs/runbooks/<alert>.md of the repository). */
export const RUNBOOK_BASE_URL = 'https://github.com/market-indexer/market-indexer/blob/main/docs/runbooks';
export const runbookUrl = (alert: string) => `${RUNBOOK_BASE_URL}/${alert}.md`;

/** Fixed thresholds, documented in the runbooks (not tenant values: they follow from the limits). */
export const FIXED = {
  /** `/ws` clients of a process, as a fraction of WS_MAX_CLIENTS. */
  wsClientsNearCap: 0.9,
  /** Backpressure closes per 15 minutes. */
  backpressureCloses: 10,
  /** Share of requests refused with 429, over 5 minutes, and at least this many per second. */
  rateLimitedRatio: 0.05,
  rateLimitedPerSecond: 1,
} as const;

/** SLO windows (SRE workbook, multi-window multi-burn-rate, table 5-8). */
export const BURN_RATES = {
  fast: [
    { long: '1h', short: '5m', factor: '14.4' },
    { long: '6h', short: '30m', factor: '6' },
  ],
  slow: [
    { long: '1d', short: '2h', factor: '3' },
    { long: '3d', short: '6h', factor: '1' },
  ],
} as const;
export const SLO_WINDOWS = ['5m', '30m', '1h', '2h', '6h', '1d', '3d'] as const;

const T = METRIC_LABELS.tenant;
const by = `sum by (${T})`;

/** Recording-rule names (level:metric:operations). */
export const RECORDED = {
  requests: (w: string) => `${T}:market_indexer_api_requests:rate${w}`,
  errorRatio: (w: string) => `${T}:market_indexer_api_error_ratio:rate${w}`,
  slowRatio: (w: string) => `${T}:market_indexer_api_slow_ratio:rate${w}`,
};

export const ALERTS = [
  'MarketIndexerSlotLagHigh',
  'MarketIndexerSlotLagCritical',
  'MarketIndexerStalled',
  'MarketIndexerNoWriter',
  'MarketIndexerDeadLetters',
  'MarketIndexerBusPublishFailing',
  'MarketIndexerApiErrorBudgetBurnFast',
  'MarketIndexerApiErrorBudgetBurnSlow',
  'MarketIndexerApiLatencyBudgetBurnFast',
  'MarketIndexerApiLatencyBudgetBurnSlow',
  'MarketIndexerWsBackpressureCloses',
  'MarketIndexerWsClientsNearCap',
  'MarketIndexerRateLimitSurge',
  'MarketIndexerReadReplicaBehind',
  'MarketIndexerTargetDown',
  'MarketIndexerTargetAbsent',
] as const;
export type AlertName = (typeof ALERTS)[number];

export function ruleGroups(scope: RuleScope, t: RuleThresholds): RuleGroup[] {
  const who = scope.tenant === undefined ? 'tenant {{ $labels.tenant }}' : `tenant ${scope.tenant}`;
  const s: Matchers = scope.tenant === undefined ? {} : { [T]: eq(scope.tenant) };
  const alert = (name: AlertName, severity: 'warning' | 'critical', expr: string, forDuration: string, summary: string, description: string): AlertRule => ({
    alert: name,
    expr,
    for: forDuration,
    labels: { severity, ...(scope.tenant === undefined ? {} : { [T]: scope.tenant }), ...(scope.environment === undefined ? {} : { environment: scope.environment }) },
    annotations: { summary, description, runbook_url: runbookUrl(name) },
  });

  // The indexer's own report and the API replicas' observation from outside (D-213): a frozen
  // indexer's series goes stale, the API's keeps growing.
  const lag = `max by (${T}) (${sel('indexerSlotLag', s, { [METRIC_LABELS.service]: re(`${METRIC_SERVICES.indexer}|${METRIC_SERVICES.api}`) })})`;
  const writer = sel('indexerIsWriter', s);

  const indexer: AlertRule[] = [
    alert(
      'MarketIndexerSlotLagHigh',
      'warning',
      `${lag} > ${t.slotLag.warning}`,
      t.slotLag.for,
      `Indexer of ${who} is more than ${t.slotLag.warning} slots behind the chain`,
      'Slot lag is {{ $value }}: /status reports synced=false and clients see stale data.',
    ),
    alert(
      'MarketIndexerSlotLagCritical',
      'critical',
      `${lag} > ${t.slotLag.critical}`,
      t.slotLag.for,
      `Indexer of ${who} is more than ${t.slotLag.critical} slots behind the chain`,
      "Slot lag is {{ $value }} and not recovering: check the RPC node, the indexer's RPC errors and its batch duration.",
    ),
    alert(
      'MarketIndexerStalled',
      'critical',
      // The writer's last processed slot has not moved for 10 minutes while its lag grew: the
      // chain advanced and the indexer did not follow.
      `max by (${T}) ((changes(${sel('indexerLastProcessedSlot', s)}[10m]) == 0) and (delta(${sel('indexerSlotLag', s)}[10m]) > 0) and (${writer} == 1))`,
      '5m',
      `Indexer of ${who} is stalled: its last processed slot has not advanced in 10 minutes while the chain did`,
      'The writer holds the lock but commits nothing: look at its logs, its RPC errors and PostgreSQL (a blocked commit).',
    ),
    alert(
      'MarketIndexerNoWriter',
      'critical',
      `${by} (${writer}) < 1 or absent(${writer})`,
      '2m',
      `No indexer of ${who} holds the writer lock`,
      'Nothing is being indexed: every indexer is down, on standby, or not scraped.',
    ),
    alert(
      'MarketIndexerDeadLetters',
      'warning',
      // A reason's series appears with its first dead letter, which increase() cannot see.
      `${by} (increase(${sel('indexerDeadLetters', s)}[15m])) > 0 or ${by} (${sel('indexerDeadLetters', s)} unless ${sel('indexerDeadLetters', s)} offset 15m) > 0`,
      '0m',
      `The indexer of ${who} stored dead letters`,
      '{{ $value }} events or transactions were not applied in the last 15 minutes (table dead_letters, reason in service_indexer_dead_letters_total).',
    ),
    alert(
      'MarketIndexerBusPublishFailing',
      'critical',
      `${by} (increase(${sel('busPublishFailures', s)}[5m])) > 0`,
      '5m',
      `The indexer of ${who} cannot publish live updates`,
      'Redis has refused or not answered every publish for 5 minutes: /ws clients get no updates (they catch up once Redis is back).',
    ),
  ];

  const requests = (w: string, extra: Matchers = {}) => `${by} (rate(${sel('apiRequests', s, { ...SLO_ROUTES, ...extra })}[${w}]))`;
  const recording: RecordingRule[] = SLO_WINDOWS.flatMap((w) => [
    { record: RECORDED.requests(w), expr: requests(w) },
    { record: RECORDED.errorRatio(w), expr: `${requests(w, { status: '=~"5.."' })} / ${requests(w)}` },
    {
      record: RECORDED.slowRatio(w),
      expr: `1 - (${by} (rate(${sel('apiRequestDuration', s, { ...SLO_ROUTES, le: eq(t.slo.latencyThreshold) }, '_bucket')}[${w}])) / ${by} (rate(${sel('apiRequestDuration', s, SLO_ROUTES, '_count')}[${w}])))`,
    },
  ]);
  const burn = (ratio: (w: string) => string, objective: string, pairs: readonly { long: string; short: string; factor: string }[]) =>
    pairs
      .map((p) => `(${ratio(p.long)}${matchers(s)} > (${p.factor} * (1 - ${objective})) and ${ratio(p.short)}${matchers(s)} > (${p.factor} * (1 - ${objective})))`)
      .join(' or ');
  const slo: AlertRule[] = [
    alert(
      'MarketIndexerApiErrorBudgetBurnFast',
      'critical',
      burn(RECORDED.errorRatio, t.slo.availability, BURN_RATES.fast),
      '2m',
      `The API of ${who} is spending its error budget fast (availability objective ${t.slo.availability})`,
      '{{ $value | humanizePercentage }} of requests fail with 5xx: at this rate a 30-day budget lasts less than 5 days.',
    ),
    alert(
      'MarketIndexerApiErrorBudgetBurnSlow',
      'warning',
      burn(RECORDED.errorRatio, t.slo.availability, BURN_RATES.slow),
      '15m',
      `The API of ${who} is spending its error budget (availability objective ${t.slo.availability})`,
      '{{ $value | humanizePercentage }} of requests fail with 5xx: at this rate the 30-day budget runs out before the month does.',
    ),
    alert(
      'MarketIndexerApiLatencyBudgetBurnFast',
      'critical',
      burn(RECORDED.slowRatio, t.slo.latency, BURN_RATES.fast),
      '2m',
      `The API of ${who} is too slow: more than its budget of requests take over ${t.slo.latencyThreshold} s`,
      '{{ $value | humanizePercentage }} of requests are slower than the objective: at this rate a 30-day budget lasts less than 5 days.',
    ),
    alert(
      'MarketIndexerApiLatencyBudgetBurnSlow',
      'warning',
      burn(RECORDED.slowRatio, t.slo.latency, BURN_RATES.slow),
      '15m',
      `The API of ${who} is slower than its objective (${t.slo.latency} of requests under ${t.slo.latencyThreshold} s)`,
      '{{ $value | humanizePercentage }} of requests are slower than the objective: at this rate the 30-day budget runs out before the month does.',
    ),
  ];

  const wsClientsLimit = sel('configuredLimit', s, { limit: eq(WS_LIMIT_GAUGES.wsClients.label) });
  const limitLabel = (METRICS.configuredLimit.labelNames as readonly string[])[0]!;
  const ws: AlertRule[] = [
    alert(
      'MarketIndexerWsBackpressureCloses',
      'warning',
      `${by} (increase(${sel('wsBackpressureCloses', s)}[15m])) > ${FIXED.backpressureCloses}`,
      '5m',
      `/ws of ${who} is closing many slow clients`,
      '{{ $value }} connections were closed in 15 minutes for reading too slowly (50 consecutive skipped updates): clients on poor links, or a replica too busy to write.',
    ),
    alert(
      'MarketIndexerWsClientsNearCap',
      'warning',
      `max by (${T}, instance) (${sel('wsConnections', s)} / ignoring(${limitLabel}) ${wsClientsLimit}) > ${FIXED.wsClientsNearCap}`,
      '10m',
      `An API replica of ${who} holds more than ${FIXED.wsClientsNearCap * 100} % of its /ws clients`,
      '{{ $labels.instance }} is at {{ $value | humanizePercentage }} of WS_MAX_CLIENTS: new connections get 503 there. Add replicas.',
    ),
    alert(
      'MarketIndexerReadReplicaBehind',
      'warning',
      // Not one API replica has had its read replica serving for 10 minutes (D-511): every read
      // lands on the primary, which the replica was there to relieve. Only tenants with
      // DATABASE_READ_URL export the gauge.
      `${by} (${sel('dbReplicaServing', s)}) < 1`,
      '10m',
      `The read replica of ${who} serves no reads`,
      'For 10 minutes the replica behind DATABASE_READ_URL has been unreachable or more than DATABASE_READ_MAX_LAG_SLOTS behind the primary: reads are served by the primary (correct, but the load the replica takes is back on it).',
    ),
    alert(
      'MarketIndexerRateLimitSurge',
      'warning',
      `(${by} (rate(${sel('rateLimitExceeded', s)}[5m])) / ${by} (rate(${sel('apiRequests', s)}[5m])) > ${FIXED.rateLimitedRatio}) and ${by} (rate(${sel('rateLimitExceeded', s)}[5m])) > ${FIXED.rateLimitedPerSecond}`,
      '10m',
      `The API of ${who} refuses many requests with 429`,
      '{{ $value | humanizePercentage }} of requests are rate limited: a client misbehaving, a crawl, or limits too low for real traffic.',
    ),
  ];

  const up = (m: Matchers) => `up${matchers(m)}`;
  const targets: AlertRule[] = [
    alert(
      'MarketIndexerTargetDown',
      'critical',
      `${up(scope.targets.api)} == 0 or ${up(scope.targets.indexer)} == 0`,
      '5m',
      `A scrape target of ${who} is down`,
      '{{ $labels.instance }} ({{ $labels.job }}) does not answer /metrics: the process is down, restarting, or unreachable from Prometheus.',
    ),
    alert(
      'MarketIndexerTargetAbsent',
      'critical',
      `absent(${up(scope.targets.api)}) or absent(${up(scope.targets.indexer)})`,
      '10m',
      `Prometheus scrapes no API or no indexer of ${who}`,
      'No target at all: the Deployment has no pods, or the ServiceMonitor is not selected by the Prometheus (monitoring.labels).',
    ),
  ];

  return [
    { name: 'market-indexer.indexer', rules: indexer },
    { name: 'market-indexer.slo-recording', rules: recording },
    { name: 'market-indexer.slo', rules: slo },
    { name: 'market-indexer.api', rules: [...ws, ...targets] },
  ];
}

/** Every alert of a rendering, by name. */
export const alertsOf = (groups: RuleGroup[]): AlertRule[] => groups.flatMap((g) => g.rules.filter((r): r is AlertRule => 'alert' in r));
