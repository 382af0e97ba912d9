import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { createMetrics } from '../../core/telemetry/metrics';
import { createLogger } from '../../core/telemetry/logger';
import { ADMIN_DATABASE_URL } from '../support/env';
import { attr, exportedSpans, startCollector } from '../support/otlp';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');
const CHILD = path.join(ROOT, 'test/fixtures/tracing-child.ts');

describe('metrics', () => {
  it('declares the six metric names of spec 4.9 in one registry', async () => {
    const m = createMetrics({ processMetrics: false });
    m.apiRequests.inc({ method: 'GET', route: '/api/v1/markets', status: '200' });
    const text = await m.registry.metrics();
    for (const name of [
      'service_indexer_transactions_processed_total',
      'service_indexer_slot_lag',
      'service_indexer_processing_duration_seconds',
      'service_api_requests_total',
      'service_api_request_duration_seconds',
      'service_rate_limit_exceeded_total',
    ]) {
      expect(text).toContain(`# TYPE ${name} `);
    }
    expect(text).toContain('service_api_requests_total{method="GET",route="/api/v1/markets",status="200"} 1');
  });

  it('keeps registries of two processes apart and adds process metrics when asked', async () => {
    const a = createMetrics();
    const b = createMetrics({ processMetrics: false });
    a.indexerSlotLag.set(7);
    expect(await a.registry.metrics()).toContain('process_cpu_user_seconds_total');
    expect(await b.registry.metrics()).toContain('service_indexer_slot_lag 0');
  });
});

describe('logger', () => {
  it('writes JSON lines with service, tenant, ISO time and level names, without auth secrets', () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'info', service: 'api', tenant: 'acme', destination: { write: (l: string) => void lines.push(l) } });
    logger.child({ requestId: 'r-1' }).info({ req: { headers: { authorization: 'Bearer s3cret', 'x-wallet-signature': 'sig' } } }, 'hello');
    logger.debug('not at info level');
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]!);
    expect(line).toMatchObject({ level: 'info', service: 'api', tenant: 'acme', requestId: 'r-1', msg: 'hello' });
    expect(new Date(line.time).toISOString()).toBe(line.time);
    expect(lines[0]).not.toContain('s3cret');
    expect(line.traceId).toBeUndefined();
  });
});

describe('tracing', () => {
  it('exports server spans over OTLP/HTTP when an endpoint is set, and logs carry the trace id', async () => {
    const collector = await startCollector();
    const callerTrace = '0af7651916cd43dd8448eb211c80319c';
    const callerSpan = 'b7ad6b7169203331';
    try {
      const { stdout } = await run(process.execPath, ['--import', 'tsx', CHILD], {
        cwd: ROOT,
        env: { PATH: process.env.PATH, DATABASE_URL: ADMIN_DATABASE_URL, OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, CALLER_TRACEPARENT: `00-${callerTrace}-${callerSpan}-01` },
      });
      const out = JSON.parse(stdout.trim().split('\n').pop()!);
      expect(out.enabled).toBe(true);
      expect(out.log.traceId).toMatch(/^[0-9a-f]{32}$/);
      // Traces only: metrics are Prometheus' (/metrics), logs are stdout's.
      expect(new Set(collector.requests.map((r) => r.url))).toEqual(new Set(['/v1/traces']));
      const { services, spans } = exportedSpans(collector);
      expect(services).toEqual(['tracing-child']);
      const server = spans.filter((s) => s.kind === 2);
      // One server span per request, none for the probe.
      expect(server).toHaveLength(3);
      const byPath = (p: string) => server.find((s) => attr(s, 'url.path') === p);
      const [first, second, broken] = [byPath('/api/v1/markets/42'), byPath('/api/v1/markets/43'), byPath('/api/v1/broken')];
      // Named by the route template once routing is done; the log line written inside the
      // request carries its trace id.
      expect(first).toMatchObject({ name: 'GET /api/v1/markets/:marketId', traceId: out.log.traceId });
      expect(attr(first!, 'http.route')).toBe('/api/v1/markets/:marketId');
      expect(attr(first!, 'http.request.method')).toBe('GET');
      expect(attr(first!, 'http.response.status_code')).toBe(200);
      expect(attr(first!, 'user_agent.original')).toBe('tracing-test');
      expect(first!.parentSpanId ?? '').toBe('');
      expect(first!.status?.code ?? 0).toBe(0);
      // The handler's query joins the request's trace.
      const query = spans.find((s) => s.name.startsWith('pg.query') && s.parentSpanId === first!.spanId);
      expect(query).toMatchObject({ traceId: first!.traceId, kind: 3 });
      expect(attr(query!, 'db.query.text')).toBe('SELECT 1 AS one');
      // A caller's traceparent makes the span its child.
      expect(second).toMatchObject({ traceId: callerTrace, parentSpanId: callerSpan });
      // 5xx is an error.
      expect(broken).toMatchObject({ name: 'GET /api/v1/broken', status: { code: 2 } });
      expect(attr(broken!, 'http.response.status_code')).toBe(500);
    } finally {
      collector.close();
    }
  });

  it('exports nothing and adds no trace ids without an endpoint', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', CHILD], { cwd: ROOT, env: { PATH: process.env.PATH, DATABASE_URL: ADMIN_DATABASE_URL } });
    const out = JSON.parse(stdout.trim().split('\n').pop()!);
    expect(out.enabled).toBe(false);
    expect(out.log.traceId).toBeUndefined();
  });
});
