import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { METRICS, type MetricKey } from '../../core/telemetry/metrics';
import { tenantRules } from '../../cdk8s/lib/alerts';
import { TENANT_DEFAULTS } from '../../cdk8s/lib/defaults';
import { DASHBOARDS } from '../../observability/grafana/dashboards';
import { K6 } from '../../observability/grafana/k6';
import { EXTERNAL_LABELS, exprsOf, TARGET_LABELS, variableQueriesOf } from '../../observability/grafana/panels';
import { plainRuleGroups } from '../../observability/prometheus/plain';
import { type RuleGroup } from '../../observability/prometheus/rules';
import { PROGRAM_ID } from '../support/indexer';
import { createTestDatabase, type TestDatabase } from '../support/pg';
import { spawnApi, spawnIndexer } from '../support/processes';
import { parseExposition, problemsOf, type Exposition } from '../support/promql-check';
import { TEST_REDIS_URL, testTenant } from '../support/redis';
import { waitFor } from '../support/tables';
import { WsClient } from '../support/ws';

const run = promisify(execFile);

/** Grafana's variables, as a query would run: every tenant and environment, a typical interval. */
const resolveVariables = (expr: string) => expr.replace(/\$__rate_interval/g, '5m').replace(/\$\{?(environment|tenant|testid)\}?/g, '.*');

/**
 * The dashboards and the rules against real processes: an API and an indexer (both on real
 * PostgreSQL and Redis) are scraped, and every metric and label a panel or a rule reads must be
 * in what they expose; every expression must parse (promtool).
 */
describe('dashboards and rules against a live /metrics (real processes)', () => {
  let tdb: TestDatabase;
  beforeAll(async () => {
    tdb = await createTestDatabase();
  });
  afterAll(async () => {
    await tdb.drop();
  });

  it('read only metrics and labels the API and the indexer expose, and every expression parses', async () => {
    const env = { DATABASE_URL: tdb.url, REDIS_URL: TEST_REDIS_URL, TENANT_ID: testTenant(), PROGRAM_ID };
    // An indexer that keeps running (one simulated slot per 400 ms) and an API serving it.
    const indexer = spawnIndexer(['--source', 'simulator', '--realtime', '--seed', '7', '--feeds', '1'], env);
    // Reads through a read replica too (D-510; the same database stands in), so the read-pool series exist.
    const api = spawnApi({ ...env, DATABASE_READ_URL: tdb.url });
    let client: WsClient | undefined;
    try {
      const [indexerPort, apiPort] = await Promise.all([indexer.port, api.port]);
      const base = `http://127.0.0.1:${apiPort}`;
      // Requests and a /ws client, so the labelled series of the request path exist.
      for (const p of ['/api/v1/status', '/api/v1/markets/current', '/api/v1/markets?limit=5', '/api/v1/nope']) await fetch(`${base}${p}`);
      client = await WsClient.open(`ws://127.0.0.1:${apiPort}/ws`);
      await client.next((m) => m.type === 'connected');
      // A marketId above any created yet: it subscribes whatever the indexer has written so far (D-352).
      await client.request({ type: 'subscribe', channel: 'market:99999999999' });
      const scrape = async (port: number) => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      // The indexer has committed a batch with events (the events-applied series exist).
      await waitFor('indexer committed events', async () => /^service_indexer_events_applied_total\{/m.test(await scrape(indexerPort)), 60_000);
      const texts = { api: await scrape(apiPort), indexer: await scrape(indexerPort) };
      const expositions = Object.fromEntries(Object.entries(texts).map(([k, t]) => [k, parseExposition(t)])) as Record<'api' | 'indexer', Exposition>;
      // One view of both processes (the same family from both merges its labels).
      const merged: Exposition = { families: new Map() };
      for (const e of Object.values(expositions)) {
        for (const [name, f] of e.families) {
          const m = merged.families.get(name) ?? { type: f.type, labels: new Set<string>(), samples: 0 };
          f.labels.forEach((l) => m.labels.add(l));
          m.samples += f.samples;
          merged.families.set(name, m);
        }
      }
      // Every catalog metric is exposed by a process that sets it (the catalog and the processes agree).
      for (const key of Object.keys(METRICS) as MetricKey[]) {
        expect([METRICS[key].name, merged.families.has(METRICS[key].name)]).toEqual([METRICS[key].name, true]);
      }

      const rules: RuleGroup[] = [...plainRuleGroups(), ...tenantRules('alpha', 'test', TENANT_DEFAULTS.monitoring)];
      const recorded = new Set(rules.flatMap((g) => g.rules.flatMap((r) => ('record' in r ? [r.record] : []))));
      const k6 = new Set<string>(Object.values(K6));
      const exprs = [
        ...rules.flatMap((g) => g.rules.map((r) => ({ where: `rule ${'alert' in r ? r.alert : r.record}`, expr: r.expr }))),
        ...DASHBOARDS.flatMap((d) => exprsOf(d.build()).map((e) => ({ where: `dashboard ${d.slug}: ${e.panel}`, expr: resolveVariables(e.expr) }))),
      ];
      expect(exprs.length).toBeGreaterThan(80);

      // Parsed by Prometheus itself: each expression as a recording rule, checked by promtool.
      const dir = mkdtempSync(path.join(os.tmpdir(), 'scrape-check-'));
      const file = path.join(dir, 'exprs.yaml');
      writeFileSync(file, stringify({ groups: [{ name: 'exprs', rules: exprs.map((e, i) => ({ record: `check:expr:${i}`, expr: e.expr })) }] }));
      const checked = await run('promtool', ['check', 'rules', file]).catch((err: { stdout: string; stderr: string }) => err);
      expect(`${checked.stdout}${checked.stderr}`).toContain(`SUCCESS: ${exprs.length} rules found`);

      const declared = (family: string) => {
        const spec = Object.values(METRICS).find((m) => m.name === family) as { labelNames?: readonly string[] } | undefined;
        return spec ? ['service', 'tenant', ...(spec.labelNames ?? [])] : undefined;
      };
      const opts = {
        extraLabels: [...TARGET_LABELS, 'namespace', ...Object.values(EXTERNAL_LABELS)],
        declared,
        skip: (m: string) => m === 'up' || recorded.has(m) || k6.has(m),
      };
      // The load-test dashboard reads k6's metrics (observability/grafana/k6.ts), not the processes': parsed only.
      const problems = exprs.filter((e) => !e.where.startsWith('dashboard load-test')).flatMap((e) => problemsOf(e.expr, merged, opts).map((p) => `${e.where}: ${p}`));
      expect(problems).toEqual([]);
      // The template variables read real labels of a real metric too.
      for (const d of DASHBOARDS.filter((x) => x.slug !== 'load-test')) {
        for (const v of variableQueriesOf(d.build())) {
          const m = /^label_values\((.+),\s*([a-zA-Z_]+)\)$/.exec(v)!;
          expect(problemsOf(resolveVariables(m[1]!), merged, opts)).toEqual([]);
          expect([...opts.extraLabels, ...merged.families.get(m[1]!.replace(/\{.*$/, ''))!.labels]).toContain(m[2]);
        }
      }
      // The service's metrics pass Prometheus' own lint.
      for (const text of Object.values(texts)) {
        const child = execFile('promtool', ['check', 'metrics']);
        const out: string[] = [];
        child.stdout!.on('data', (d: Buffer) => out.push(d.toString()));
        child.stderr!.on('data', (d: Buffer) => out.push(d.toString()));
        child.stdin!.end(text);
        await new Promise<number | null>((r) => child.once('exit', r));
        // prom-client's own Node.js metrics (nodejs_active_handles_total…) break a naming rule; ours must not.
        expect(out.join('').split('\n').filter((l) => l.startsWith('service_'))).toEqual([]);
      }
      client.assertValid();
    } finally {
      client?.ws.terminate();
      for (const c of [indexer, api]) c.child.kill('SIGKILL');
      await Promise.all([indexer.exited, api.exited]);
    }
  }, 120_000);
});
