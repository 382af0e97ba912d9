import { DatasourceVariableBuilder, QueryVariableBuilder, RowBuilder, VariableRefresh, VariableSort, type Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import { SYNCED_MAX_SLOT_LAG } from '../../core/health';
import { DEFAULT_RATE_LIMITS, RATE_LIMIT_TIERS, tierSpecs, WS_LIMIT_GAUGES, type WsLimitKey } from '../../core/limits';
import { METRIC_LABELS, METRIC_SERVICES, metricName, STORES } from '../../core/telemetry/metrics';
import { eq, re, sel, SLO_ROUTES, type Matchers } from '../promql';
import { RULE_DEFAULTS } from '../prometheus/rules';
import { K6, K6_LABELS } from './k6';
import { dashboard, DATASOURCE, q, SCOPE, timeseries, withScopeVariables } from './panels';

/**
 * The dashboards, as code over the catalogs (core/telemetry/metrics.ts, core/limits.ts): no
 * metric name or limit is typed here. `npm run generate` writes them to
 * observability/grafana/dashboards/<slug>.json and the Helm chart's files/dashboards/; the kit
 * ships them as ConfigMaps for Grafana's dashboard sidecar (cdk8s/lib/dashboards.ts).
 */

const R = '[$__rate_interval]';
const T = METRIC_LABELS.tenant;
const rate = (selector: string) => `rate(${selector}${R})`;
const quantiles = (bucket: string, by: string[], legend: (q: string) => string) =>
  ['0.5', '0.95', '0.99'].map((x) => q(`histogram_quantile(${x}, sum by (${['le', ...by].join(', ')}) (${rate(bucket)}))`, legend(`p${Number(x) * 100}`)));

const red = (value: number) => [{ value, color: 'red' }];
const orangeRed = (warn: number, crit: number) => [
  { value: warn, color: 'orange' },
  { value: crit, color: 'red' },
];

function overview(): Dashboard {
  const s = SCOPE;
  const byTenant = (x: string) => `sum by (${T}) (${x})`;
  const d = withScopeVariables(
    dashboard('market-indexer-overview', 'Market indexer: service overview', 'API, /ws, indexer, bus and stores of the chosen tenants (docs/observability.md).', ['overview']),
    metricName('apiRequests'),
  );
  const apiReq = (extra: Matchers = {}) => sel('apiRequests', s, { ...SLO_ROUTES, ...extra });
  d.withRow(new RowBuilder('API'))
    .withPanel(timeseries('Requests per second by route', [q(`sum by (${T}, route) (${rate(apiReq())})`, '{{tenant}} {{route}}')], { unit: 'reqps' }))
    .withPanel(
      timeseries(
        'Error ratio (5xx) by route',
        [q(`sum by (${T}, route) (${rate(apiReq({ status: re('5..') }))}) / sum by (${T}, route) (${rate(apiReq())})`, '{{tenant}} {{route}}')],
        { unit: 'percentunit', min: 0, thresholds: red(1 - RULE_DEFAULTS.slo.availability), description: 'Probes and scrapes excluded; the line is the default availability objective\'s error budget.' },
      ),
    )
    .withPanel(
      timeseries('Latency p50 / p95 / p99 by route', quantiles(sel('apiRequestDuration', s, SLO_ROUTES, '_bucket'), [T, 'route'], (p) => `${p} {{tenant}} {{route}}`), {
        unit: 's',
        thresholds: red(RULE_DEFAULTS.slo.latencyThreshold),
        description: 'The line is the default latency objective\'s threshold.',
      }),
    )
    .withPanel(timeseries('429s by tier', [q(`sum by (${T}, tier) (${rate(sel('rateLimitExceeded', s))})`, '{{tenant}} {{tier}}')], { unit: 'reqps' }))
    .withPanel(
      timeseries('Plan-limit refusals by plan (appendix variant)', [q(`sum by (${T}, plan, limit) (${rate(sel('planLimitRefusals', s))})`, '{{tenant}} {{plan}} {{limit}}')], {
        unit: 'ops',
        description: 'Requests and /ws upgrades refused because the caller had spent its API-key plan (D-154, D-161).',
      }),
    );
  d.withRow(new RowBuilder('WebSocket /ws'))
    .withPanel(
      timeseries('Connections and subscriptions', [
        q(byTenant(sel('wsConnections', s)), '{{tenant}} connections'),
        q(byTenant(sel('wsSubscriptions', s)), '{{tenant}} subscriptions'),
      ]),
    )
    .withPanel(
      timeseries(
        'Messages sent and skipped per second',
        [q(byTenant(rate(sel('wsMessagesSent', s))), '{{tenant}} sent'), q(byTenant(rate(sel('wsMessagesSkipped', s))), '{{tenant}} skipped')],
        { unit: 'ops' },
      ),
    )
    .withPanel(timeseries('Backpressure closes', [q(byTenant(`increase(${sel('wsBackpressureCloses', s)}${R})`), '{{tenant}}')], { unit: 'short' }))
    .withPanel(timeseries('Refusals by reason', [q(`sum by (${T}, reason) (${rate(sel('wsRefusals', s))})`, '{{tenant}} {{reason}}')], { unit: 'ops' }))
    .withPanel(timeseries('Connections by plan (appendix variant)', [q(`sum by (${T}, plan) (${sel('planWsConnections', s)})`, '{{tenant}} {{plan}}')]));
  d.withRow(new RowBuilder('Indexer'))
    .withPanel(
      timeseries('Slot lag', [q(`max by (${T}) (${sel('indexerSlotLag', s)})`, '{{tenant}}')], {
        thresholds: orangeRed(RULE_DEFAULTS.slotLag.warning, RULE_DEFAULTS.slotLag.critical),
        description: `Orange: /status stops calling the indexer synced (${SYNCED_MAX_SLOT_LAG}); red: the default critical alert.`,
      }),
    )
    .withPanel(timeseries('Last processed slot', [q(`max by (${T}) (${sel('indexerLastProcessedSlot', s)})`, '{{tenant}}')], { unit: 'none' }))
    .withPanel(
      timeseries(
        'Events and transactions per second',
        [
          q(`sum by (${T}, kind) (${rate(sel('indexerEventsApplied', s))})`, '{{tenant}} {{kind}}'),
          q(byTenant(rate(sel('indexerTransactionsProcessed', s))), '{{tenant}} transactions'),
        ],
        { unit: 'ops' },
      ),
    )
    .withPanel(timeseries('Batch duration p50 / p95 / p99', quantiles(sel('indexerProcessingDuration', s, {}, '_bucket'), [T], (p) => `${p} {{tenant}}`), { unit: 's' }))
    .withPanel(timeseries('Dead letters by reason', [q(`sum by (${T}, reason) (increase(${sel('indexerDeadLetters', s)}${R}))`, '{{tenant}} {{reason}}')]))
    .withPanel(timeseries('RPC errors by method and kind', [q(`sum by (${T}, method, kind) (${rate(sel('indexerRpcErrors', s))})`, '{{tenant}} {{method}} {{kind}}')], { unit: 'ops' }))
    .withPanel(
      timeseries('Writer and standbys', [q(`sum by (${T}, instance) (${sel('indexerIsWriter', s)})`, '{{tenant}} {{instance}}')], {
        min: 0,
        max: 1,
        description: '1: the process holds the tenant\'s writer lock; 0: hot standby. Exactly one 1 per tenant.',
      }),
    )
    .withPanel(timeseries('Row cache rows', [q(`max by (${T}) (${sel('indexerCachedRows', s)})`, '{{tenant}}')]));
  d.withRow(new RowBuilder('Bus and stores'))
    .withPanel(timeseries('Commit-to-publish latency p50 / p95 / p99', quantiles(sel('busPublishLatency', s, {}, '_bucket'), [T], (p) => `${p} {{tenant}}`), { unit: 's' }))
    .withPanel(timeseries('Redis publish failures', [q(byTenant(`increase(${sel('busPublishFailures', s)}${R})`), '{{tenant}}')]))
    .withPanel(
      timeseries(
        'PostgreSQL and Redis errors',
        [
          q(
            `sum by (${T}, service, store) (${rate(sel('storeErrors', s, { [METRIC_LABELS.service]: re([METRIC_SERVICES.api, METRIC_SERVICES.indexer].join('|')) }))})`,
            '{{tenant}} {{service}} {{store}}',
          ),
        ],
        { unit: 'ops', description: `store: ${Object.values(STORES).join(', ')}` },
      ),
    )
    // D-510, D-511: which pool served the API's reads, and how far the read replica trails.
    .withPanel(timeseries('API reads by pool', [q(`sum by (${T}, pool) (${rate(sel('dbReads', s))})`, '{{tenant}} {{pool}}')], { unit: 'ops', description: 'pool: primary, replica (DATABASE_READ_URL)' }))
    .withPanel(timeseries('Read replica lag (slots)', [q(`max by (${T}) (${sel('dbReplicaLagSlots', s)})`, '{{tenant}}')], { description: 'behind DATABASE_READ_MAX_LAG_SLOTS reads go to the primary' }));
  return d.build();
}

function limits(): Dashboard {
  const s = SCOPE;
  const d = withScopeVariables(
    dashboard(
      'market-indexer-limits',
      'Market indexer: limits',
      'Every documented limit (spec 8) as the processes enforce it, beside the live value closest to it (docs/observability.md).',
      ['limits'],
    ),
    metricName('apiRequests'),
  );
  const tiers = tierSpecs(DEFAULT_RATE_LIMITS);
  d.withRow(new RowBuilder('Rate limits (per client, per window)'));
  for (const tier of RATE_LIMIT_TIERS) {
    const t = { tier: eq(tier) };
    d.withPanel(
      timeseries(
        `${tier}: busiest client against the tier's max`,
        [
          q(`max by (${T}) (${sel('rateLimitPeak', s, t)})`, '{{tenant}} busiest client'),
          q(`max by (${T}) (${sel('rateLimitMax', s, t)})`, '{{tenant}} max per window'),
        ],
        {
          width: 8,
          thresholds: red(tiers[tier].points),
          description: `Requests one IP or wallet made in its window (counted across replicas) and the configured maximum; the line is the documented default, ${tiers[tier].points} per ${DEFAULT_RATE_LIMITS.windowMs / 1000} s.`,
        },
      ),
    );
  }
  d.withPanel(timeseries('429s by tier', [q(`sum by (${T}, tier) (${rate(sel('rateLimitExceeded', s))})`, '{{tenant}} {{tier}}')], { unit: 'reqps', width: 24 }));

  d.withRow(new RowBuilder('WebSocket /ws'));
  const ws = (title: string, key: WsLimitKey, live: string, unit = 'short', description = '') => {
    const g = WS_LIMIT_GAUGES[key];
    d.withPanel(
      timeseries(
        title,
        [q(live, '{{tenant}} {{instance}}'), q(`max by (${T}) (${sel('configuredLimit', s, { limit: eq(g.label) })})`, '{{tenant}} limit')],
        { unit, width: 8, thresholds: red(g.default), description: `${description}Limit: ${g.what}; the line is the documented ${g.default}.` },
      ),
    );
  };
  ws('/ws clients against the cap, per replica', 'wsClients', `max by (${T}, instance) (${sel('wsConnections', s)})`, 'short', 'Beyond the cap a replica answers upgrades with 503. ');
  ws('Connections of one client IP', 'wsConnectionsPerIp', `max by (${T}, instance) (${sel('wsIpConnectionsMax', s)})`, 'short', 'Per replica: the limit counts across replicas, so an IP may hold more in all. ');
  ws('Subscriptions of one client', 'wsSubscriptionsPerClient', `max by (${T}, instance) (${sel('wsClientSubscriptionsMax', s)})`);
  ws('Largest send buffer', 'wsSendBufferBytes', `max by (${T}, instance) (${sel('wsSendBufferMax', s)})`, 'bytes', 'Above it updates are skipped for the client. ');
  ws('Most consecutive skips of one client', 'wsConsecutiveSkips', `max by (${T}, instance) (${sel('wsConsecutiveSkipsMax', s)})`, 'short', 'At the limit the client is closed (1008). ');
  d.withPanel(timeseries('Refusals by reason', [q(`sum by (${T}, reason) (increase(${sel('wsRefusals', s)}${R}))`, '{{tenant}} {{reason}}')], { width: 8 }));
  return d.build();
}

/**
 * k6 results sent by Prometheus remote write (`k6 run -o experimental-prometheus-rw` with
 * `--tag testid=<run>`); the metrics are k6's own (./k6.ts), not the service's.
 */
function loadTest(): Dashboard {
  const run: Matchers = { [K6_LABELS.testid]: re('$testid') };
  const m = (name: string, extra: Matchers = {}) => `${name}{${Object.entries({ ...run, ...extra }).map(([k, v]) => `${k}${v}`).join(',')}}`;
  const d = dashboard('market-indexer-load-test', 'Market indexer: load test (k6)', 'k6 runs written by Prometheus remote write, by test id (docs/observability.md).', ['k6', 'load-test'])
    .withVariable(new DatasourceVariableBuilder('datasource').label('Data source').type('prometheus'));
  d.withVariable(
    new QueryVariableBuilder(K6_LABELS.testid)
      .label('Test run')
      .datasource(DATASOURCE)
      .query(`label_values(${K6.vus}, ${K6_LABELS.testid})`)
      .refresh(VariableRefresh.OnTimeRangeChanged)
      .sort(VariableSort.AlphabeticalDesc)
      .includeAll(true)
      .allValue('.*')
      .multi(true),
  );
  d.withRow(new RowBuilder('Load'))
    .withPanel(timeseries('Virtual users', [q(`sum by (${K6_LABELS.testid}) (${m(K6.vus)})`, '{{testid}} VUs'), q(`sum by (${K6_LABELS.testid}) (${m(K6.vusMax)})`, '{{testid}} max')]))
    .withPanel(timeseries('Requests per second by name', [q(`sum by (${K6_LABELS.testid}, ${K6_LABELS.name}) (rate(${m(K6.httpReqs)}${R}))`, '{{testid}} {{name}}')], { unit: 'reqps' }));
  d.withRow(new RowBuilder('Results'))
    .withPanel(
      timeseries(
        'Request duration p95 / p99 by name',
        [
          q(`max by (${K6_LABELS.testid}, ${K6_LABELS.name}) (${m(K6.httpReqDurationP95)})`, 'p95 {{testid}} {{name}}'),
          q(`max by (${K6_LABELS.testid}, ${K6_LABELS.name}) (${m(K6.httpReqDurationP99)})`, 'p99 {{testid}} {{name}}'),
        ],
        { unit: 's', thresholds: red(RULE_DEFAULTS.slo.latencyThreshold), description: 'k6 reports trends in seconds with the remote-write output; the line is the API latency objective.' },
      ),
    )
    .withPanel(timeseries('Failed requests (share)', [q(`max by (${K6_LABELS.testid}) (${m(K6.httpReqFailedRate)})`, '{{testid}}')], { unit: 'percentunit', min: 0 }))
    .withPanel(
      timeseries('Responses by status', [q(`sum by (${K6_LABELS.testid}, ${K6_LABELS.status}) (rate(${m(K6.httpReqs)}${R}))`, '{{testid}} {{status}}')], {
        unit: 'reqps',
        description: '429 is a documented limit answering (rate-limit tiers), 503 a /ws replica at its cap.',
      }),
    )
    .withPanel(timeseries('Checks passed (share)', [q(`max by (${K6_LABELS.testid}) (${m(K6.checksRate)})`, '{{testid}}')], { unit: 'percentunit', min: 0, max: 1 }))
    .withPanel(
      timeseries('WebSocket sessions and messages', [
        q(`sum by (${K6_LABELS.testid}) (rate(${m(K6.wsSessions)}${R}))`, '{{testid}} sessions/s'),
        q(`sum by (${K6_LABELS.testid}) (rate(${m(K6.wsMsgsReceived)}${R}))`, '{{testid}} messages received/s'),
      ], { unit: 'ops' }),
    )
    .withPanel(timeseries('Iterations per second', [q(`sum by (${K6_LABELS.testid}, ${K6_LABELS.scenario}) (rate(${m(K6.iterations)}${R}))`, '{{testid}} {{scenario}}')], { unit: 'ops' }));
  return d.build();
}

export interface DashboardSpec {
  /** File name (without .json) and ConfigMap suffix. */
  slug: string;
  build: () => Dashboard;
}

export const DASHBOARDS: DashboardSpec[] = [
  { slug: 'overview', build: overview },
  { slug: 'limits', build: limits },
  { slug: 'load-test', build: loadTest },
];

/** A dashboard as committed and shipped: Grafana's JSON model, stable formatting. */
export const dashboardJson = (d: DashboardSpec): string => `${JSON.stringify(d.build(), null, 2)}\n`;
