import { METRIC_LABELS, METRIC_SERVICES, metricName, type MetricKey } from '../../core/telemetry/metrics';
import { WS_LIMIT_GAUGES } from '../../core/limits';
import { alertsOf, FIXED, RULE_DEFAULTS, type AlertName, type AlertRule, type RuleGroup } from './rules';

/**
 * Unit tests of the rules for `promtool test rules`, written from the catalogs: every alert
 * fires when it should and stays quiet when it should not. `promtoolTests` renders them for the
 * plain rules file (default thresholds, every tenant); the suite runs the result
 * (test/integration/kit-rules.test.ts) and `npm run generate` keeps a copy beside the rules
 * (observability/prometheus/rules.test.yaml) for `promtool test rules` by hand.
 */

export interface PromtoolAlert {
  exp_labels: Record<string, string>;
  exp_annotations: Record<string, string>;
}
export interface PromtoolTest {
  name: string;
  interval: string;
  input_series: { series: string; values: string }[];
  alert_rule_test: { eval_time: string; alertname: string; exp_alerts: PromtoolAlert[] }[];
}

/** What an alert is expected to be: its labels (severity and rule labels added) and `$value`. */
export interface Expected {
  labels: Record<string, string>;
  value?: number;
}
export interface Case {
  name: string;
  interval?: string;
  series: { metric: MetricKey | 'up'; suffix?: string; labels: Record<string, string>; values: string }[];
  checks: { at: string; alert: AlertName; expect: Expected[] }[];
}

/** Go's %.4g, as Prometheus' humanizePercentage uses it (values below 10,000 %). */
const g4 = (x: number) => String(Number(x.toPrecision(4)));

/**
 * The annotations Prometheus renders for an alert: the forms the rules use are `{{ $value }}`,
 * `{{ $value | humanizePercentage }}` and `{{ $labels.<name> }}`. Any other template fails here.
 */
export function expandAnnotation(template: string, labels: Record<string, string>, value: number | undefined): string {
  return template.replace(/\{\{\s*([^}]*?)\s*\}\}/g, (_all, body: string) => {
    if (body === '$value') return String(value);
    if (body === '$value | humanizePercentage') return `${g4((value ?? NaN) * 100)}%`;
    const label = /^\$labels\.([a-zA-Z_][a-zA-Z0-9_]*)$/.exec(body);
    if (label) return labels[label[1]!] ?? '';
    throw new Error(`annotation template not understood by the tests: {{ ${body} }}`);
  });
}

const S = METRIC_LABELS.service;
const T = METRIC_LABELS.tenant;
const indexer = (tenant: string, extra: Record<string, string> = {}) => ({ [S]: METRIC_SERVICES.indexer, [T]: tenant, instance: `${tenant}-indexer-0`, ...extra });
const api = (tenant: string, extra: Record<string, string> = {}) => ({ [S]: METRIC_SERVICES.api, [T]: tenant, instance: `${tenant}-api-0`, ...extra });
const route = { method: 'GET', route: '/api/v1/markets/current' };

/**
 * The cases, for the plain rules file: default thresholds (RULE_DEFAULTS, FIXED), any tenant,
 * scrape jobs named `market-indexer-api` and `market-indexer-indexer`.
 */
export function plainCases(jobs: { api: string; indexer: string }): Case[] {
  const d = RULE_DEFAULTS;
  return [
    {
      name: 'slot lag: warning above 100 after 5 minutes, critical above 1000, per tenant, as the indexer reports it or the API observes it',
      series: [
        // alpha: 300 behind from minute 2, 1500 from minute 12; beta stays close.
        { metric: 'indexerSlotLag', labels: indexer('alpha'), values: '0 0 300x9 1500x12' },
        { metric: 'indexerSlotLag', labels: indexer('beta'), values: '50x22' },
        // The API's observation from outside agrees (D-213).
        { metric: 'indexerSlotLag', labels: api('beta'), values: '50x22' },
        // gamma's indexer froze at minute 2: its own series is gone, the API's keeps growing.
        { metric: 'indexerSlotLag', labels: indexer('gamma'), values: '0 0' },
        { metric: 'indexerSlotLag', labels: api('gamma'), values: '0 0 300x20' },
      ],
      checks: [
        { at: '5m', alert: 'MarketIndexerSlotLagHigh', expect: [] },
        { at: '8m', alert: 'MarketIndexerSlotLagHigh', expect: [{ labels: { [T]: 'alpha' }, value: 300 }, { labels: { [T]: 'gamma' }, value: 300 }] },
        { at: '15m', alert: 'MarketIndexerSlotLagCritical', expect: [] },
        { at: '20m', alert: 'MarketIndexerSlotLagCritical', expect: [{ labels: { [T]: 'alpha' }, value: 1500 }] },
        { at: '20m', alert: 'MarketIndexerSlotLagHigh', expect: [{ labels: { [T]: 'alpha' }, value: 1500 }, { labels: { [T]: 'gamma' }, value: 300 }] },
      ],
    },
    {
      name: 'stalled: the writer\'s slot stands still while the lag grows; a moving or idle writer is not',
      series: [
        { metric: 'indexerLastProcessedSlot', labels: indexer('alpha'), values: '1000x25' },
        { metric: 'indexerSlotLag', labels: indexer('alpha'), values: '0+10x25' },
        { metric: 'indexerIsWriter', labels: indexer('alpha'), values: '1x25' },
        // beta advances with the chain.
        { metric: 'indexerLastProcessedSlot', labels: indexer('beta'), values: '1000+10x25' },
        { metric: 'indexerSlotLag', labels: indexer('beta'), values: '3x25' },
        { metric: 'indexerIsWriter', labels: indexer('beta'), values: '1x25' },
        // gamma's standby stands still too: it is not the writer.
        { metric: 'indexerLastProcessedSlot', labels: indexer('gamma', { instance: 'gamma-indexer-1' }), values: '0x25' },
        { metric: 'indexerSlotLag', labels: indexer('gamma', { instance: 'gamma-indexer-1' }), values: '0+10x25' },
        { metric: 'indexerIsWriter', labels: indexer('gamma', { instance: 'gamma-indexer-1' }), values: '0x25' },
        { metric: 'indexerIsWriter', labels: indexer('gamma'), values: '1x25' },
        { metric: 'indexerLastProcessedSlot', labels: indexer('gamma'), values: '0+10x25' },
        { metric: 'indexerSlotLag', labels: indexer('gamma'), values: '0x25' },
      ],
      checks: [
        { at: '3m', alert: 'MarketIndexerStalled', expect: [] },
        { at: '15m', alert: 'MarketIndexerStalled', expect: [{ labels: { [T]: 'alpha' }, value: 1 }] },
      ],
    },
    {
      name: 'no writer: every indexer on standby, or none scraped',
      series: [
        { metric: 'indexerIsWriter', labels: indexer('alpha'), values: '1x10' },
        { metric: 'indexerIsWriter', labels: indexer('alpha', { instance: 'alpha-indexer-1' }), values: '0x10' },
        { metric: 'indexerIsWriter', labels: indexer('beta'), values: '1 1 0x8' },
        { metric: 'indexerIsWriter', labels: indexer('beta', { instance: 'beta-indexer-1' }), values: '0x10' },
      ],
      checks: [
        { at: '3m', alert: 'MarketIndexerNoWriter', expect: [] },
        { at: '6m', alert: 'MarketIndexerNoWriter', expect: [{ labels: { [T]: 'beta' }, value: 0 }] },
      ],
    },
    {
      name: 'no writer: nothing scraped at all',
      series: [{ metric: 'up', labels: { job: jobs.api, instance: 'a' }, values: '1x10' }],
      checks: [{ at: '5m', alert: 'MarketIndexerNoWriter', expect: [{ labels: { [S]: METRIC_SERVICES.indexer }, value: 1 }] }],
    },
    {
      name: 'dead letters: the first one of a reason, and later ones; none without any',
      series: [
        { metric: 'indexerDeadLetters', labels: indexer('alpha', { reason: 'undecodable' }), values: '_x5 1x10 3x20' },
        { metric: 'indexerDeadLetters', labels: indexer('beta', { reason: 'undecodable' }), values: '0x36' },
      ],
      checks: [
        { at: '4m', alert: 'MarketIndexerDeadLetters', expect: [] },
        { at: '6m', alert: 'MarketIndexerDeadLetters', expect: [{ labels: { [T]: 'alpha' }, value: 1 }] },
        { at: '25m', alert: 'MarketIndexerDeadLetters', expect: [{ labels: { [T]: 'alpha' }, value: 2 }] },
        // More than fifteen minutes after the last one: quiet.
        { at: '32m', alert: 'MarketIndexerDeadLetters', expect: [] },
      ],
    },
    {
      name: 'bus publish: failing for 5 minutes fires, one failed publish does not',
      series: [
        { metric: 'busPublishFailures', labels: indexer('alpha'), values: '0+12x15' },
        { metric: 'busPublishFailures', labels: indexer('beta'), values: '0 1x15' },
      ],
      checks: [
        { at: '4m', alert: 'MarketIndexerBusPublishFailing', expect: [] },
        { at: '10m', alert: 'MarketIndexerBusPublishFailing', expect: [{ labels: { [T]: 'alpha' }, value: 60 }] },
      ],
    },
    {
      name: 'availability SLO: a 10 % error rate burns fast; errors of the probes do not count',
      series: [
        { metric: 'apiRequests', labels: api('alpha', { ...route, status: '200' }), values: '0+540x80' },
        { metric: 'apiRequests', labels: api('alpha', { ...route, status: '500' }), values: '0+60x80' },
        { metric: 'apiRequests', labels: api('beta', { ...route, status: '200' }), values: '0+600x80' },
        { metric: 'apiRequests', labels: api('beta', { method: 'GET', route: '/health', status: '503' }), values: '0+600x80' },
      ],
      checks: [
        { at: '1m', alert: 'MarketIndexerApiErrorBudgetBurnFast', expect: [] },
        { at: '70m', alert: 'MarketIndexerApiErrorBudgetBurnFast', expect: [{ labels: { [T]: 'alpha' }, value: 0.1 }] },
      ],
    },
    {
      name: 'availability SLO: 0.5 % errors for a day burns slowly, not fast; 0.05 % burns neither',
      interval: '10m',
      series: [
        { metric: 'apiRequests', labels: api('alpha', { ...route, status: '200' }), values: '0+5970x160' },
        { metric: 'apiRequests', labels: api('alpha', { ...route, status: '502' }), values: '0+30x160' },
        { metric: 'apiRequests', labels: api('beta', { ...route, status: '200' }), values: '0+5997x160' },
        { metric: 'apiRequests', labels: api('beta', { ...route, status: '500' }), values: '0+3x160' },
      ],
      checks: [
        { at: '25h', alert: 'MarketIndexerApiErrorBudgetBurnSlow', expect: [{ labels: { [T]: 'alpha' }, value: 0.005 }] },
        { at: '25h', alert: 'MarketIndexerApiErrorBudgetBurnFast', expect: [] },
      ],
    },
    {
      name: 'availability SLO: 0.05 % errors for a day (half the budget) burns neither',
      interval: '10m',
      series: [
        { metric: 'apiRequests', labels: api('beta', { ...route, status: '200' }), values: '0+5997x160' },
        { metric: 'apiRequests', labels: api('beta', { ...route, status: '500' }), values: '0+3x160' },
      ],
      checks: [
        { at: '25h', alert: 'MarketIndexerApiErrorBudgetBurnSlow', expect: [] },
        { at: '25h', alert: 'MarketIndexerApiErrorBudgetBurnFast', expect: [] },
      ],
    },
    {
      name: `latency SLO: 10 % of requests over ${d.slo.latencyThreshold} s burns fast; all under it does not`,
      series: [
        { metric: 'apiRequestDuration', suffix: '_bucket', labels: api('alpha', { ...route, status: '200', le: String(d.slo.latencyThreshold) }), values: '0+540x80' },
        { metric: 'apiRequestDuration', suffix: '_count', labels: api('alpha', { ...route, status: '200' }), values: '0+600x80' },
        { metric: 'apiRequestDuration', suffix: '_bucket', labels: api('beta', { ...route, status: '200', le: String(d.slo.latencyThreshold) }), values: '0+600x80' },
        { metric: 'apiRequestDuration', suffix: '_count', labels: api('beta', { ...route, status: '200' }), values: '0+600x80' },
      ],
      checks: [
        { at: '1m', alert: 'MarketIndexerApiLatencyBudgetBurnFast', expect: [] },
        { at: '70m', alert: 'MarketIndexerApiLatencyBudgetBurnFast', expect: [{ labels: { [T]: 'alpha' }, value: 0.1 }] },
      ],
    },
    {
      name: 'latency SLO: 4 % slow requests for a day burns slowly (budget 1 %), not fast',
      interval: '10m',
      series: [
        { metric: 'apiRequestDuration', suffix: '_bucket', labels: api('alpha', { ...route, status: '200', le: String(d.slo.latencyThreshold) }), values: '0+5760x160' },
        { metric: 'apiRequestDuration', suffix: '_count', labels: api('alpha', { ...route, status: '200' }), values: '0+6000x160' },
      ],
      checks: [
        { at: '25h', alert: 'MarketIndexerApiLatencyBudgetBurnSlow', expect: [{ labels: { [T]: 'alpha' }, value: 0.04 }] },
        { at: '25h', alert: 'MarketIndexerApiLatencyBudgetBurnFast', expect: [] },
      ],
    },
    {
      name: 'latency SLO: 0.5 % slow requests for a day (half the budget) burns neither',
      interval: '10m',
      series: [
        { metric: 'apiRequestDuration', suffix: '_bucket', labels: api('beta', { ...route, status: '200', le: String(d.slo.latencyThreshold) }), values: '0+5970x160' },
        { metric: 'apiRequestDuration', suffix: '_count', labels: api('beta', { ...route, status: '200' }), values: '0+6000x160' },
      ],
      checks: [
        { at: '25h', alert: 'MarketIndexerApiLatencyBudgetBurnSlow', expect: [] },
        { at: '25h', alert: 'MarketIndexerApiLatencyBudgetBurnFast', expect: [] },
      ],
    },
    {
      name: `/ws: more than ${FIXED.backpressureCloses} backpressure closes in 15 minutes; fewer are quiet`,
      series: [
        { metric: 'wsBackpressureCloses', labels: api('alpha'), values: '0+2x30' },
        { metric: 'wsBackpressureCloses', labels: api('beta'), values: '0+0.5x30' },
      ],
      checks: [
        { at: '10m', alert: 'MarketIndexerWsBackpressureCloses', expect: [] },
        { at: '25m', alert: 'MarketIndexerWsBackpressureCloses', expect: [{ labels: { [T]: 'alpha' }, value: 30 }] },
      ],
    },
    {
      name: '/ws: a replica above 90 % of WS_MAX_CLIENTS for 10 minutes; 80 % is quiet',
      series: [
        { metric: 'wsConnections', labels: api('alpha'), values: '950x20' },
        { metric: 'configuredLimit', labels: api('alpha', { limit: WS_LIMIT_GAUGES.wsClients.label }), values: '1000x20' },
        { metric: 'configuredLimit', labels: api('alpha', { limit: WS_LIMIT_GAUGES.wsConnectionsPerIp.label }), values: '10x20' },
        { metric: 'wsConnections', labels: api('beta'), values: '800x20' },
        { metric: 'configuredLimit', labels: api('beta', { limit: WS_LIMIT_GAUGES.wsClients.label }), values: '1000x20' },
      ],
      checks: [
        { at: '5m', alert: 'MarketIndexerWsClientsNearCap', expect: [] },
        { at: '15m', alert: 'MarketIndexerWsClientsNearCap', expect: [{ labels: { [T]: 'alpha', instance: 'alpha-api-0' }, value: 0.95 }] },
      ],
    },
    {
      name: 'read replica: serving on no API replica for 10 minutes fires; serving on one of two does not',
      series: [
        { metric: 'dbReplicaServing', labels: api('alpha'), values: '1x3 0x20' },
        { metric: 'dbReplicaServing', labels: api('beta'), values: '0x20' },
        { metric: 'dbReplicaServing', labels: { ...api('beta'), instance: 'beta-api-1' }, values: '1x20' },
      ],
      checks: [
        { at: '10m', alert: 'MarketIndexerReadReplicaBehind', expect: [] },
        { at: '16m', alert: 'MarketIndexerReadReplicaBehind', expect: [{ labels: { [T]: 'alpha' }, value: 0 }] },
      ],
    },
    {
      name: 'rate limits: 20 % of requests refused for 10 minutes; a high share of little traffic is quiet',
      series: [
        { metric: 'apiRequests', labels: api('alpha', { ...route, status: '200' }), values: '0+600x30' },
        { metric: 'rateLimitExceeded', labels: api('alpha', { tier: 'public_read' }), values: '0+120x30' },
        { metric: 'apiRequests', labels: api('beta', { ...route, status: '200' }), values: '0+30x30' },
        { metric: 'rateLimitExceeded', labels: api('beta', { tier: 'public_read' }), values: '0+30x30' },
      ],
      checks: [
        { at: '8m', alert: 'MarketIndexerRateLimitSurge', expect: [] },
        { at: '20m', alert: 'MarketIndexerRateLimitSurge', expect: [{ labels: { [T]: 'alpha' }, value: 0.2 }] },
      ],
    },
    {
      name: 'targets: one down for 5 minutes; a job with no target at all',
      series: [
        { metric: 'up', labels: { job: jobs.api, instance: 'api-0' }, values: '1 1 0x20' },
        { metric: 'up', labels: { job: jobs.api, instance: 'api-1' }, values: '1x22' },
      ],
      checks: [
        { at: '5m', alert: 'MarketIndexerTargetDown', expect: [] },
        { at: '10m', alert: 'MarketIndexerTargetDown', expect: [{ labels: { job: jobs.api, instance: 'api-0' }, value: 0 }] },
        { at: '5m', alert: 'MarketIndexerTargetAbsent', expect: [] },
        { at: '15m', alert: 'MarketIndexerTargetAbsent', expect: [{ labels: { job: jobs.indexer }, value: 1 }] },
      ],
    },
  ];
}

const seriesName = (s: Case['series'][number]) => (s.metric === 'up' ? 'up' : `${metricName(s.metric)}${s.suffix ?? ''}`);
const seriesText = (s: Case['series'][number]) => `${seriesName(s)}{${Object.entries(s.labels).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}}`;

/** A case as promtool's test format, the expected annotations rendered from the rules. */
export function promtoolTest(c: Case, groups: RuleGroup[]): PromtoolTest {
  const alerts = new Map(alertsOf(groups).map((a) => [a.alert, a]));
  return {
    name: c.name,
    interval: c.interval ?? '1m',
    input_series: c.series.map((s) => ({ series: seriesText(s), values: s.values })),
    alert_rule_test: c.checks.map((check) => {
      const rule = alerts.get(check.alert) as AlertRule;
      if (!rule) throw new Error(`no alert ${check.alert} in the rules`);
      return {
        eval_time: check.at,
        alertname: check.alert,
        exp_alerts: check.expect.map((e) => {
          const labels = { ...e.labels, ...rule.labels };
          return {
            exp_labels: labels,
            exp_annotations: Object.fromEntries(Object.entries(rule.annotations).map(([k, v]) => [k, expandAnnotation(v, labels, e.value)])),
          };
        }),
      };
    }),
  };
}

/** The promtool test file for a rules file. */
export function promtoolTests(ruleFile: string, groups: RuleGroup[], cases: Case[]) {
  return { rule_files: [ruleFile], evaluation_interval: '1m', tests: cases.map((c) => promtoolTest(c, groups)) };
}
