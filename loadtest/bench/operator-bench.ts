// `npm run bench -- operator`: for each size of BENCH_TENANTS (default 100; e.g. 100,300,1000,3000)
// MarketIndexers created at once against the test API server, in three processes so that each
// side's CPU is its own: the test API server (operator-apiserver.ts), the operator (as the image
// runs it) and the bench (the stand-in Deployment controller, readiness from watch events,
// operator-cluster.ts). Phases: create → applied → Ready; an idle resync; 10 tenants created one
// after another while the others exist; an operator restart. Per phase: CPU seconds of the
// operator and of the API server, the event-loop delay p99 of both, reconciles (count, p50, p99,
// the queue's depth over time), API requests by client and verb with their latency, open watches,
// the Ready count over time, the operator's heap and RSS, /healthz's slowest answer.
// BENCH_CPU_PROFILE=<dir> writes a V8 CPU profile of both processes there. The operator's memory
// is what docs/operator.md's sizing table gives for the size (BENCH_OPERATOR_MEMORY=<request>/<limit>
// sets another), and its heap cap the one the kit renders for that limit (D-420).
import { mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { synthEnvironment } from '../../cdk8s/synth';
import type { ApiServerStats } from './operator-apiserver';
import { cpuSecondsOf, createClient, reconcilesBetween, rssMbOf, scrapeOperator, startDeploymentController, trackReadiness, type OperatorMetrics } from './operator-cluster';
import { build, spawnImage, spawnListening } from './support';

const TOKEN = 'operator';
const PHASE_TIMEOUT_MS = Number(process.env.BENCH_PHASE_TIMEOUT_S ?? 600) * 1000;
const RESYNC_SECONDS = Number(process.env.BENCH_RESYNC_SECONDS ?? 20);
/** How often the operator reads each tenant indexer's /status here. */
const STATUS_SECONDS = 2;
const profileFlags = () => (process.env.BENCH_CPU_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.BENCH_CPU_PROFILE)}`] : []);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await sleep(100);
  }
}

function startApiServer() {
  const { child, port } = spawnListening(path.join(__dirname, 'operator-apiserver.ts'), {}, profileFlags());
  const ask = <T>(type: string, answer: string) =>
    new Promise<T>((resolve) => {
      const on = (m: { type: string; stats?: T }) => m.type === answer && (child.off('message', on), resolve(m.stats as T));
      child.on('message', on);
      child.send({ type });
    });
  return { child, port, mark: () => ask<void>('mark', 'marked'), stats: () => ask<ApiServerStats>('stats', 'stats') };
}

/**
 * The operator's memory request and limit for a number of tenants, as docs/operator.md's sizing
 * table gives them (D-420): the kit's defaults up to 1,000.
 */
function operatorMemoryFor(tenants: number): { request: string; limit: string } {
  const [request, limit] = (process.env.BENCH_OPERATOR_MEMORY ?? (tenants <= 1000 ? '384Mi/512Mi' : tenants <= 3000 ? '1Gi/1536Mi' : '1536Mi/3Gi')).split('/');
  return { request: request!, limit: limit! };
}

/** The node flags of the operator's container as the kit renders it with that memory: as a user would apply it. */
function renderedOperatorFlags(memory: { request: string; limit: string }): string[] {
  const env = { environment: 'bench', tenants: {}, platform: { operator: { resources: { requests: { memory: memory.request }, limits: { memory: memory.limit } } } } };
  const deployment = synthEnvironment(env, 'the operator bench')
    .flatMap((f) => f.objects as { kind: string; spec?: { template?: { spec?: { containers?: { name: string; command?: string[] }[] } } } }[])
    .find((o) => o.kind === 'Deployment' && o.spec?.template?.spec?.containers?.[0]?.name === 'operator');
  const command = deployment?.spec?.template?.spec?.containers?.[0]?.command;
  if (!command) throw new Error("the kit rendered no operator Deployment");
  return command.slice(1, -1);
}

function startOperator(kubeconfig: string, dir: string, statusPort: number, flags: string[]) {
  return spawnImage('operator', {
    LOG_LEVEL: 'warn',
    OPERATOR_PORT: '0',
    API_HOST: '127.0.0.1',
    OPERATOR_DEFAULTS_FILE: path.join(dir, 'defaults.yaml'),
    OPERATOR_STATUS_URL: `http://127.0.0.1:${statusPort}/{tenant}/status`,
    OPERATOR_STATUS_SECONDS: String(STATUS_SECONDS),
    OPERATOR_RESYNC_SECONDS: String(RESYNC_SECONDS),
  }, { args: ['--kubeconfig', kubeconfig], flags: [...flags, ...profileFlags()] });
}

interface Phase {
  name: string;
  seconds: number;
  operatorCpu: number;
  api: ApiServerStats;
  operatorEventLoopP99Ms: number;
  healthzMaxMs: number;
  healthzLate: number;
  reconciles: ReturnType<typeof reconcilesBetween>;
  queueDepths: number[];
  readyCounts: number[];
  heapMb: number;
  rssMb: number;
  note: string;
}

async function runSize(tenants: number, flags: string[]): Promise<Phase[]> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'operator-bench-'));
  writeFileSync(path.join(dir, 'defaults.yaml'), stringify({ source: { type: 'simulator' }, devStores: { enabled: true }, monitoring: { enabled: false }, quota: { persistentVolumeClaims: 3 } }));
  const status = http.createServer((_req, res) => void res.end(JSON.stringify({ slotLag: 1, lastProcessedSlot: '10', writer: 'w:1', indexerRunning: true })));
  await new Promise<void>((r) => status.listen(0, '127.0.0.1', r));
  const statusPort = (status.address() as AddressInfo).port;
  const api = startApiServer();
  const apiUrl = `http://127.0.0.1:${await api.port}`;
  const kubeconfig = path.join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, stringify({
    apiVersion: 'v1', kind: 'Config',
    clusters: [{ name: 'bench', cluster: { server: apiUrl, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'bench', user: { token: TOKEN } }],
    contexts: [{ name: 'bench', context: { cluster: 'bench', user: 'bench' } }],
    'current-context': 'bench',
  }));
  const bench = createClient(apiUrl, 'bench');
  const controller = startDeploymentController(createClient(apiUrl, 'deployment-controller'));
  const readiness = trackReadiness(bench);
  let operator = startOperator(kubeconfig, dir, statusPort, flags);
  let opPort = await operator.port;
  await until(async () => (await bench.request('GET', '/apis/coordination.k8s.io/v1/namespaces/market-indexer-system/leases/market-indexer-operator')).status === 200, 30_000, 'the operator leads');

  // What the pollers see during a phase: /healthz (every 200 ms), the operator's metrics (every 2 s), the Ready count (every 5 s).
  let healthzMax = 0;
  let healthzLate = 0;
  let loopP99 = 0;
  let depths: number[] = [];
  let readyCounts: number[] = [];
  let polling = true;
  void (async () => {
    while (polling) {
      const t = performance.now();
      await fetch(`http://127.0.0.1:${opPort}/healthz`).then((r) => r.text()).catch(() => {});
      const ms = performance.now() - t;
      healthzMax = Math.max(healthzMax, ms);
      if (ms > 1000) healthzLate += 1;
      await sleep(200);
    }
  })();
  const metricsTimer = setInterval(() => void scrapeOperator(opPort).then((m) => {
    depths.push(m.queueDepth);
    loopP99 = Math.max(loopP99, m.eventLoopP99Ms);
  }).catch(() => {}), 2000);
  const readyTimer = setInterval(() => readyCounts.push(readiness.ready.size), 5000);

  const phases: Phase[] = [];
  let start = { at: 0, cpu: 0, metrics: undefined as unknown as OperatorMetrics };
  const begin = async () => {
    await api.mark();
    start = { at: performance.now(), cpu: cpuSecondsOf(operator.child.pid!), metrics: await scrapeOperator(opPort) };
    healthzMax = healthzLate = loopP99 = 0;
    depths = [];
    readyCounts = [];
  };
  const end = async (name: string, note = '') => {
    const m = await scrapeOperator(opPort);
    phases.push({
      name, note,
      seconds: (performance.now() - start.at) / 1000,
      operatorCpu: cpuSecondsOf(operator.child.pid!) - start.cpu,
      api: await api.stats(),
      operatorEventLoopP99Ms: Math.max(loopP99, m.eventLoopP99Ms),
      healthzMaxMs: healthzMax, healthzLate,
      reconciles: reconcilesBetween(start.metrics, m),
      queueDepths: depths, readyCounts,
      heapMb: m.heapMb, rssMb: rssMbOf(operator.child.pid!),
    });
  };
  const attempt = async (name: string, body: () => Promise<string | void>) => {
    try {
      await end(name, (await body()) ?? '');
      return true;
    } catch (err) {
      await end(name, `stopped: ${(err as Error).message}`);
      return false;
    }
  };
  const mi = (name: string) => ({ apiVersion: 'marketindexer.dev/v1alpha1', kind: 'MarketIndexer', metadata: { name }, spec: { tenant: name } });
  const names = Array.from({ length: tenants }, (_, i) => `t${String(i).padStart(4, '0')}`);

  // 1. Created at once → applied → Ready.
  await begin();
  await Promise.all(names.map((n) => bench.request('POST', '/apis/marketindexer.dev/v1alpha1/marketindexers', mi(n))));
  const created = performance.now();
  let appliedS = 0;
  const converged = await attempt('create → Ready', async () => {
    await until(() => names.every((n) => controller.deploymentsIn(`mi-${n}`) === 2), PHASE_TIMEOUT_MS, 'every tenant applied');
    appliedS = (performance.now() - created) / 1000;
    await readiness.waitFor(() => readiness.ready.size >= tenants, PHASE_TIMEOUT_MS, 'every tenant Ready');
    return `applied in ${appliedS.toFixed(1)} s${controller.retries() ? `; the stand-in Deployment controller retried ${controller.retries()} status patches` : ''}`;
  });

  if (converged) {
    // 2. Idle: once the operator has written nothing for a resync period, one more resync (every tenant reconciled).
    for (let tries = 0; tries < 10; tries++) {
      await api.mark();
      await sleep(RESYNC_SECONDS * 1000);
      if (!Object.keys((await api.stats()).operatorWrites).length) break;
    }
    await begin();
    await attempt('idle resync', async () => {
      await until(async () => (await scrapeOperator(opPort)).reconciles - start.metrics.reconciles >= tenants, RESYNC_SECONDS * 1000 + PHASE_TIMEOUT_MS, 'a full resync');
      await until(async () => (await scrapeOperator(opPort)).queueDepth === 0, PHASE_TIMEOUT_MS, 'the resync drained');
    });

    // 3. A new tenant while the others exist, 10 one after another.
    await begin();
    const each: number[] = [];
    await attempt('new tenant ×10', async () => {
      for (let i = 0; i < 10; i++) {
        const name = `n${String(i).padStart(4, '0')}`;
        const t = performance.now();
        await bench.request('POST', '/apis/marketindexer.dev/v1alpha1/marketindexers', mi(name));
        await readiness.waitFor(() => readiness.ready.has(name), PHASE_TIMEOUT_MS, `${name} Ready`);
        each.push((performance.now() - t) / 1000);
      }
      return `Ready in p50 ${[...each].sort((a, b) => a - b)[4]!.toFixed(2)} s, p99 (max of 10) ${Math.max(...each).toFixed(2)} s`;
    });

    // 4. Restart over a settled cluster: first the operator writes nothing for two status
    // intervals (the last tenants created have had their indexer's /status read and recorded, or
    // the new process would record it: a change, not a restart's cost). Then a fresh operator
    // reconciles every tenant once; converged when its queue is empty.
    for (let tries = 0; tries < 10; tries++) {
      await api.mark();
      await sleep(2 * STATUS_SECONDS * 1000);
      if (!Object.keys((await api.stats()).operatorWrites).length) break;
    }
    const exited = new Promise((r) => operator.child.once('exit', r));
    operator.child.kill('SIGTERM');
    await exited;
    await api.mark();
    const restartAt = performance.now();
    operator = startOperator(kubeconfig, dir, statusPort, flags);
    opPort = await operator.port;
    start = { at: restartAt, cpu: 0, metrics: await scrapeOperator(opPort) };
    healthzMax = healthzLate = loopP99 = 0;
    depths = [];
    readyCounts = [];
    await attempt('restart', async () => {
      await until(async () => {
        const m = await scrapeOperator(opPort);
        return m.reconciles >= tenants + 10 && m.queueDepth === 0;
      }, PHASE_TIMEOUT_MS, 'converged after the restart');
    });
  }

  polling = false;
  clearInterval(metricsTimer);
  clearInterval(readyTimer);
  const exited = new Promise((r) => operator.child.once('exit', r));
  operator.child.kill('SIGTERM');
  await exited;
  readiness.stop();
  controller.stop();
  bench.close();
  const apiExited = new Promise((r) => api.child.once('exit', r));
  api.child.kill('SIGTERM');
  await apiExited;
  status.close();
  return phases;
}

function print(tenants: number, memory: { request: string; limit: string }, flags: string[], phases: Phase[]): void {
  const out = (s: string) => process.stdout.write(`${s}\n`);
  const series = (xs: number[]) => (xs.length > 24 ? xs.filter((_, i) => i % Math.ceil(xs.length / 24) === 0) : xs).join(' ');
  out(`\noperator: ${tenants} MarketIndexers (test API server, dev-store tenants; resync every ${RESYNC_SECONDS} s; operator memory ${memory.request} requested, ${memory.limit} limit, ${flags.join(' ')}; load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')})`);
  out('| phase | wall | operator CPU | API server CPU | event-loop p99 operator / API server | /healthz slowest (late > 1 s) | reconciles (p50, p99) | operator writes | operator heap / RSS | API server RSS | watches | note |');
  out('|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const p of phases) {
    // A handful of writes (a restart's) is named: which objects, so that a stray write says why.
    const few = Object.values(p.api.operatorWrites).reduce((a, b) => a + b, 0) <= 20;
    const writes = Object.entries(p.api.operatorWrites).map(([k, n]) => `${k} ${n}${few ? ` (${(p.api.operatorWriteNames[k] ?? []).join(', ')})` : ''}`).join(', ') || '0';
    out(`| ${p.name} | ${p.seconds.toFixed(1)} s | ${p.operatorCpu.toFixed(1)} s | ${p.api.cpuSeconds.toFixed(1)} s | ${p.operatorEventLoopP99Ms.toFixed(0)} / ${p.api.eventLoopP99Ms.toFixed(0)} ms | ${p.healthzMaxMs.toFixed(0)} ms (${p.healthzLate}) | ${p.reconciles.count} (${p.reconciles.p50}, ${p.reconciles.p99}) | ${writes} | ${p.heapMb.toFixed(0)} / ${p.rssMb.toFixed(0)} MB | ${p.api.rssMb.toFixed(0)} MB | ${p.api.openWatches} | ${p.note} |`);
  }
  for (const p of phases) {
    out(`\n${p.name}: queue depth every 2 s: ${series(p.queueDepths) || '-'}; Ready every 5 s: ${series(p.readyCounts) || '-'}`);
    out(`  API requests (client verb: count, p50 / p99 ms): ${Object.entries(p.api.requests).map(([k, v]) => `${k}: ${v.count}, ${v.p50Ms.toFixed(1)} / ${v.p99Ms.toFixed(1)}`).join('; ')}`);
  }
}

export async function run(): Promise<void> {
  build();
  for (const tenants of (process.env.BENCH_TENANTS ?? '100').split(',').map(Number)) {
    const memory = operatorMemoryFor(tenants);
    const flags = renderedOperatorFlags(memory);
    print(tenants, memory, flags, await runSize(tenants, flags));
  }
}
