import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { ENVIRONMENTS } from '../../cdk8s/environments';
import { TENANT_DEFAULTS } from '../../cdk8s/lib/defaults';
import { RULE_DEFAULTS } from '../../observability/prometheus/rules';

// No collector binary runs here: the example is checked for what it must agree with.
const ROOT = path.resolve(__dirname, '../..');
const config = parse(readFileSync(path.join(ROOT, 'observability/otel/collector.yaml'), 'utf8')) as {
  receivers: { otlp: { protocols: { http: { endpoint: string } } } };
  processors: Record<string, { policies?: { name: string; type: string; [k: string]: unknown }[] }>;
  exporters: Record<string, unknown>;
  extensions?: Record<string, unknown>;
  service: { extensions?: string[]; pipelines: Record<string, { receivers: string[]; processors: string[]; exporters: string[] }> };
};

describe('OpenTelemetry collector example (observability/otel/collector.yaml)', () => {
  it('receives OTLP/HTTP on the port the kit opens and the environments send to', () => {
    const port = Number(config.receivers.otlp.protocols.http.endpoint.split(':').pop());
    expect(TENANT_DEFAULTS.networkPolicy.egress.otlp.ports).toContain(port);
    for (const env of Object.values(ENVIRONMENTS)) {
      const endpoint = env.settings?.OTEL_EXPORTER_OTLP_ENDPOINT;
      if (endpoint) expect(new URL(String(endpoint)).port).toBe(String(port));
    }
  });

  it('tail-samples: keeps errors and traces slower than the latency objective, then one in ten', () => {
    const policies = config.processors.tail_sampling!.policies!;
    expect(policies.find((p) => p.type === 'status_code')).toMatchObject({ status_code: { status_codes: ['ERROR'] } });
    expect(policies.find((p) => p.type === 'latency')).toMatchObject({ latency: { threshold_ms: RULE_DEFAULTS.slo.latencyThreshold * 1000 } });
    expect(policies.find((p) => p.type === 'probabilistic')).toMatchObject({ probabilistic: { sampling_percentage: 10 } });
  });

  it('has a traces pipeline whose every component is defined, tail sampling before batching', () => {
    const p = config.service.pipelines.traces!;
    for (const r of p.receivers) expect(Object.keys(config.receivers)).toContain(r);
    for (const x of p.processors) expect(Object.keys(config.processors)).toContain(x);
    for (const e of p.exporters) expect(Object.keys(config.exporters)).toContain(e);
    for (const e of config.service.extensions ?? []) expect(Object.keys(config.extensions ?? {})).toContain(e);
    expect(p.processors.indexOf('tail_sampling')).toBeLessThan(p.processors.indexOf('batch'));
    expect(p.processors[0]).toBe('memory_limiter');
  });
});
