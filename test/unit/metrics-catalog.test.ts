import { METRICS, METRIC_LABELS, createMetrics, metricName, type MetricKey } from '../../core/telemetry/metrics';

describe('metric catalog', () => {
  const keys = Object.keys(METRICS) as MetricKey[];

  it('builds exactly the catalog into a registry: names, types, labels and buckets', async () => {
    const m = createMetrics({ processMetrics: false, defaultLabels: { [METRIC_LABELS.service]: 'api', [METRIC_LABELS.tenant]: 't1' } });
    const registered = await m.registry.getMetricsAsJSON();
    expect(registered.map((r) => r.name).sort()).toEqual(keys.map(metricName).sort());
    for (const key of keys) {
      const spec = METRICS[key];
      const got = registered.find((r) => r.name === spec.name)!;
      expect([spec.name, got.type]).toEqual([spec.name, spec.type]);
      expect([spec.name, got.help]).toEqual([spec.name, spec.help]);
      expect(m[key]).toBe(m.registry.getSingleMetric(spec.name));
    }
    // Labels and buckets reach the exposition.
    m.apiRequestDuration.observe({ method: 'GET', route: '/x', status: '200' }, 0.003);
    const text = await m.registry.metrics();
    for (const b of METRICS.apiRequestDuration.buckets) expect(text).toContain(`le="${b}"`);
    expect(text).toContain('service_api_request_duration_seconds_bucket{le="0.005",service="api",tenant="t1",method="GET",route="/x",status="200"} 1');
  });

  it('names are unique and follow Prometheus conventions', () => {
    const names = keys.map(metricName);
    expect(new Set(names).size).toBe(names.length);
    for (const key of keys) {
      const s = METRICS[key];
      expect(s.name).toMatch(/^service_[a-z_]+$/);
      if (s.type === 'counter') expect(s.name).toMatch(/_total$/);
      else expect(s.name).not.toMatch(/_total$/);
      for (const label of ('labelNames' in s ? s.labelNames : []) as readonly string[]) expect(Object.values(METRIC_LABELS)).not.toContain(label);
    }
  });
});
