/**
 * k6's metrics as its Prometheus remote-write output (`-o experimental-prometheus-rw`) names
 * them: the `k6_` prefix, counters with `_total`, rates with `_rate`, and each trend as one
 * gauge per statistic of K6_PROMETHEUS_RW_TREND_STATS (set it to `p(95),p(99)` for the
 * load-test dashboard). These are k6's, not the service's, so they are declared here once and
 * the live-scrape test leaves them out. The k6 scripts tag every sample with `testid`.
 */
export const K6 = {
  vus: 'k6_vus',
  vusMax: 'k6_vus_max',
  httpReqs: 'k6_http_reqs_total',
  httpReqFailedRate: 'k6_http_req_failed_rate',
  httpReqDurationP95: 'k6_http_req_duration_p95',
  httpReqDurationP99: 'k6_http_req_duration_p99',
  checksRate: 'k6_checks_rate',
  iterations: 'k6_iterations_total',
  wsSessions: 'k6_ws_sessions_total',
  wsMsgsReceived: 'k6_ws_msgs_received_total',
} as const;

/** Tags k6 writes as labels (`testid` is the run's, given with `--tag testid=<run>`). */
export const K6_LABELS = { testid: 'testid', name: 'name', status: 'status', scenario: 'scenario' } as const;

/** The trend statistics the dashboard reads, for K6_PROMETHEUS_RW_TREND_STATS. */
export const K6_TREND_STATS = 'p(95),p(99)';
