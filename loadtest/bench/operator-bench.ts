// `npm run bench -- operator`: BENCH_TENANTS (default 100) MarketIndexers created at once against
// the test API server; the time until every one is applied and Ready, the requests that took,
// writes per idle resync (0 is the design), and the operator's memory.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { marketIndexerCrd, type Condition } from '../../cdk8s/lib/crd';
import { startTestApiServer } from '../../local/kube-apiserver/server';
import type { Json } from '../../local/kube-apiserver/fields';
import { build, spawnImage } from './support';

const TOKEN = 'operator';

export async function run(): Promise<void> {
  const tenants = Number(process.env.BENCH_TENANTS ?? 100);
  const resyncSeconds = 5;
  const api = await startTestApiServer({ historySize: 100_000 });
  const s = api.store;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'operator-bench-'));
  writeFileSync(path.join(dir, 'kubeconfig'), api.kubeconfig(TOKEN));
  writeFileSync(path.join(dir, 'defaults.yaml'), stringify({ source: { type: 'simulator' }, devStores: { enabled: true }, monitoring: { enabled: false }, quota: { persistentVolumeClaims: 3 } }));
  s.create(s.typeOf('apiextensions.k8s.io', 'v1', 'customresourcedefinitions'), undefined, marketIndexerCrd(), 'bench');
  s.create(s.typeOf('', 'v1', 'namespaces'), undefined, { metadata: { name: 'market-indexer-system' } }, 'bench');
  const status = http.createServer((_req, res) => void res.end(JSON.stringify({ slotLag: 1, lastProcessedSlot: '10', writer: 'w:1', indexerRunning: true })));
  await new Promise<void>((r) => status.listen(0, '127.0.0.1', r));

  // As the image runs the operator (IMAGE.commands.operator: compiled, its heap cap).
  // BENCH_OPERATOR_HEAP_MB sets another cap (the last flag wins), to find what it needs rather than what it takes.
  build();
  const operator = spawnImage('operator', {
    LOG_LEVEL: 'warn',
    OPERATOR_PORT: '0',
    API_HOST: '127.0.0.1',
    OPERATOR_DEFAULTS_FILE: path.join(dir, 'defaults.yaml'),
    OPERATOR_STATUS_URL: `http://127.0.0.1:${(status.address() as AddressInfo).port}/{tenant}/status`,
    OPERATOR_STATUS_SECONDS: '2',
    OPERATOR_RESYNC_SECONDS: String(resyncSeconds),
  }, { args: ['--kubeconfig', path.join(dir, 'kubeconfig')], flags: process.env.BENCH_OPERATOR_HEAP_MB ? [`--max-old-space-size=${process.env.BENCH_OPERATOR_HEAP_MB}`] : [] });
  const child = operator.child;
  const port = await operator.port;
  const leases = s.typeOf('coordination.k8s.io', 'v1', 'leases');
  while (!s.find(leases, 'market-indexer-system', 'market-indexer-operator')) await new Promise((r) => setTimeout(r, 50));

  const mi = s.typeOf('marketindexer.dev', 'v1alpha1', 'marketindexers');
  const deployments = s.typeOf('apps', 'v1', 'deployments');
  const ready = (name: string) =>
    ((s.find(mi, undefined, name)?.status as Json | undefined)?.conditions as Condition[] | undefined)?.find((c) => c.type === 'Ready')?.status === 'True';
  const names = Array.from({ length: tenants }, (_, i) => `t${String(i).padStart(3, '0')}`);
  const markCreate = api.requests.length;
  const started = Date.now();
  for (const name of names) s.create(mi, undefined, { apiVersion: 'marketindexer.dev/v1alpha1', kind: 'MarketIndexer', metadata: { name }, spec: { tenant: name } }, 'bench');
  let appliedAt = 0;
  // The Deployment controller's part: roll out every Deployment as soon as it appears.
  while (!names.every(ready)) {
    for (const d of s.list(deployments, undefined, [])) {
      const m = d.metadata as Json & { name: string; namespace: string; generation: number };
      if ((d.status as Json | undefined)?.observedGeneration === m.generation) continue;
      const replicas = ((d.spec as Json).replicas as number | undefined) ?? 1;
      s.patch(deployments, m.namespace, m.name, (live) => ({ ...live, status: { observedGeneration: m.generation, replicas, updatedReplicas: replicas, availableReplicas: replicas, readyReplicas: replicas } }), 'deployment-controller', 'status');
    }
    if (!appliedAt && names.every((n) => s.list(deployments, `mi-${n}`, []).length === 2)) appliedAt = Date.now();
    if (Date.now() - started > 600_000) throw new Error('tenants did not converge in 10 minutes');
    await new Promise((r) => setTimeout(r, 100));
  }
  const convergedMs = Date.now() - started;
  const createRequests = api.requests.slice(markCreate).filter((r) => r.token === TOKEN && !['get', 'list', 'watch'].includes(r.verb) && r.resource !== 'leases').length;

  // Idle: once a whole resync period passed without an operator write (the last statuses and
  // their Events are out), count the writes of two more periods.
  const writesFrom = (mark: number) => api.requests.slice(mark).filter((r) => r.token === TOKEN && !['get', 'list', 'watch'].includes(r.verb) && r.resource !== 'leases').length;
  for (let quiet = false, tries = 0; !quiet && tries < 12; tries++) {
    const mark = api.requests.length;
    await new Promise((r) => setTimeout(r, resyncSeconds * 1000));
    quiet = writesFrom(mark) === 0;
  }
  const markIdle = api.requests.length;
  await new Promise((r) => setTimeout(r, 2 * resyncSeconds * 1000 + 500));
  const idle = api.requests.slice(markIdle).filter((r) => r.token === TOKEN && !['get', 'list', 'watch'].includes(r.verb) && r.resource !== 'leases');
  const idleWrites = idle.length;
  if (process.env.BENCH_DEBUG) {
    const evs = s.list(s.typeOf('', 'v1', 'events'), 'market-indexer-system', []).slice(-10).map((e) => `${(e.involvedObject as Json).name} ${e.reason} ${e.message}`);
    process.stdout.write(`${evs.join('\n')}\n`);
  }
  const byResource = Object.entries(idle.reduce<Record<string, number>>((m, r) => ((m[`${r.verb} ${r.resource}`] = (m[`${r.verb} ${r.resource}`] ?? 0) + 1), m), {}))
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const rss = Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
  const heap = Number(/^nodejs_heap_size_used_bytes\{[^}]*\} ([0-9.e+]+)$/m.exec(metrics)?.[1] ?? 0) / 2 ** 20;
  const objects = names.reduce((n, name) => n + s.allTypes().filter((t) => t.namespaced).reduce((m, t) => m + s.list(t, `mi-${name}`, []).length, 0), 0);

  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
  status.close();
  await api.close();
  process.stdout.write(`\noperator: ${tenants} MarketIndexers created at once (test API server, dev-store tenants)\n`);
  process.stdout.write(`| measure | value |\n|---|---|\n`);
  process.stdout.write(`| every tenant's objects applied | ${((appliedAt - started) / 1000).toFixed(1)} s |\n`);
  process.stdout.write(`| every tenant Ready (Deployments rolled out by the stand-in) | ${(convergedMs / 1000).toFixed(1)} s |\n`);
  process.stdout.write(`| objects in the tenant namespaces | ${objects} (${(objects / tenants).toFixed(0)} per tenant) |\n`);
  process.stdout.write(`| operator write requests until Ready (applies, creates, status, events) | ${createRequests} |\n`);
  process.stdout.write(`| operator write requests over two idle resyncs (${resyncSeconds} s each; leases aside) | ${idleWrites}${idleWrites ? ` (${byResource})` : ''} |\n`);
  process.stdout.write(`| operator RSS / JS heap with ${tenants} tenants${process.env.BENCH_OPERATOR_HEAP_MB ? ` (heap capped at ${process.env.BENCH_OPERATOR_HEAP_MB} MB)` : ''} | ${rss.toFixed(0)} MB / ${heap.toFixed(0)} MB |\n`);
}
