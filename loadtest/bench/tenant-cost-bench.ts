// `npm run bench -- tenant-cost`: what one tenant's processes take. The tenant harness
// (local/tenant, docs/local-tenant.md) runs BENCH_ENV's BENCH_TENANT (default staging's alpha)
// from its rendered manifests, built as the image runs them (dist/ under plain node), with a
// simulator source so that its chain is a pod the kit renders and sizes too (the quota admitting
// its volume claim; the Secret's RPC_URL its Service). Once every pod is Ready and the writer
// indexer is at the chain's tip, and BENCH_WARMUP_SECONDS more (default 30), each pod's process
// is sampled from /proc/<pid>/status (VmRSS) and /proc/<pid>/stat (utime + stime) every second
// for BENCH_IDLE_SECONDS (default 60) with no client, then for BENCH_LOAD_SECONDS (default 60; 0
// skips it) under BENCH_LOAD_RPS (default 4, under the public-read limit of one address) reads
// through the Ingress. Printed per process: RSS (mean, max) and CPU millicores, against the
// requests and limits the kit renders; then what N tenants request, the platform included.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chainRpcUrl } from '../../cdk8s/lib/chain';
import { DEFAULT_SECRET_NAME } from '../../cdk8s/lib/defaults';
import { parseQuantity } from '../../cdk8s/lib/quantity';
import { toYaml } from '../../local/tenant/stores';
import { workloadsOf, type Container, type K8sObject } from '../../local/tenant/manifests';
import { startTenant, type RunningTenant } from '../../local/tenant/runner';
import type { Pod } from '../../local/tenant/pod';
import { ADMIN_URL, build, dbUrl, dropDatabase, REDIS_URL, ROOT } from './support';

const ENV = process.env.BENCH_ENV ?? 'staging';
const TENANT = process.env.BENCH_TENANT ?? 'alpha';
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 30);
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 60);
const LOAD_SECONDS = Number(process.env.BENCH_LOAD_SECONDS ?? 60);
const LOAD_RPS = Number(process.env.BENCH_LOAD_RPS ?? 4);
/** The writer is "at the tip" within this many slots of the chain. */
const TIP_SLOTS = 5;
const SETTLE_TIMEOUT_MS = 5 * 60_000;
const TENANT_COUNTS = [1, 10, 100, 1000];
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
const MiB = 2 ** 20;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Resources = { requests?: { cpu?: string; memory?: string }; limits?: { cpu?: string; memory?: string } };
const resourcesOf = (c: Container) => (c as Container & { resources?: Resources }).resources ?? {};

/** A process and its descendants (none under plain node; counted should a command ever fork). */
function tree(pid: number): number[] {
  let kids: number[] = [];
  try {
    kids = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    // gone, or a kernel without the children file: the process alone
  }
  return [pid, ...kids.flatMap(tree)];
}

/** RSS (bytes) and CPU time (ticks, user + system) of a process tree, or undefined once it is gone. */
function sample(pid: number): { rss: number; ticks: number } | undefined {
  let rss = 0;
  let ticks = 0;
  for (const p of tree(pid)) {
    try {
      rss += Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0) * 1024;
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      // Fields after the command's closing parenthesis, from field 3 (state): utime is 14, stime 15.
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(f[11]) + Number(f[12]);
    } catch {
      if (p === pid) return undefined;
    }
  }
  return { rss, ticks };
}

interface Row {
  process: string;
  pod: Pod;
  workload: string;
  container: Container;
}

interface Window {
  rssMean: number;
  rssMax: number;
  millicores: number;
  restarted: boolean;
}

/** Samples every row's process each second for `seconds`: RSS mean and max, CPU over the window. */
async function measure(rows: Row[], seconds: number): Promise<Map<Row, Window>> {
  const pidOf = (r: Row) => r.pod.pids()[r.pod.spec.containers.indexOf(r.container)]!;
  const first = new Map(rows.map((r) => [r, { pid: pidOf(r), at: process.hrtime.bigint(), s: sample(pidOf(r))! }]));
  const rss = new Map<Row, number[]>(rows.map((r) => [r, []]));
  const end = Date.now() + seconds * 1000;
  while (Date.now() < end) {
    await sleep(1000);
    for (const r of rows) {
      const s = sample(first.get(r)!.pid);
      if (s) rss.get(r)!.push(s.rss);
    }
  }
  return new Map(
    rows.map((r) => {
      const f = first.get(r)!;
      const last = sample(f.pid);
      const wallS = Number(process.hrtime.bigint() - f.at) / 1e9;
      const xs = rss.get(r)!;
      const restarted = !last || pidOf(r) !== f.pid;
      return [r, { rssMean: xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length), rssMax: Math.max(0, ...xs), millicores: last ? ((last.ticks - f.s.ticks) / CLK_TCK / wallS) * 1000 : NaN, restarted }];
    }),
  );
}

async function indexerHealth(p: Pod): Promise<{ role?: string; slotLag?: number } | undefined> {
  const c = p.spec.containers[0]!;
  try {
    const res = await fetch(`http://${p.ip}:${c.ports![0]!.containerPort}/health`, { signal: AbortSignal.timeout(2_000) });
    return (await res.json()) as { role?: string; slotLag?: number };
  } catch {
    return undefined;
  }
}

/** Every pod Ready, one writer within TIP_SLOTS of the chain's tip and every other indexer a standby. */
async function settle(t: RunningTenant, indexers: Pod[]): Promise<Map<Pod, string>> {
  const end = Date.now() + SETTLE_TIMEOUT_MS;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    t.allReady(),
    new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`not every pod Ready within ${SETTLE_TIMEOUT_MS / 1000} s: ${t.pods.filter((p) => !p.ready()).map((p) => p.name).join(', ')}`)), SETTLE_TIMEOUT_MS))),
  ]).finally(() => clearTimeout(timer));
  for (;;) {
    const health = await Promise.all(indexers.map(indexerHealth));
    const writers = health.filter((h) => h?.role === 'writer');
    if (writers.length === 1 && writers[0]!.slotLag! <= TIP_SLOTS && health.every((h) => h?.role === 'writer' || h?.role === 'standby')) {
      return new Map(indexers.map((p, i) => [p, health[i]!.role!]));
    }
    if (Date.now() > end) throw new Error(`the tenant did not settle within ${SETTLE_TIMEOUT_MS / 1000} s: indexers ${JSON.stringify(health)}`);
    await sleep(500);
  }
}

/** LOAD_RPS public reads a second through the Ingress until `stop`: the answers' statuses counted. */
function readLoad(frontUrl: string): { stop: () => Promise<Record<string, number>> } {
  const statuses: Record<string, number> = {};
  const paths = ['/api/v1/markets?limit=20', '/api/v1/status', '/api/v1/config'];
  let running = true;
  let i = 0;
  const inflight = new Set<Promise<void>>();
  const loop = (async () => {
    while (running) {
      const p = fetch(`${frontUrl}${paths[i++ % paths.length]}`, { signal: AbortSignal.timeout(10_000) })
        .then(async (res) => void (await res.arrayBuffer(), (statuses[res.status] = (statuses[res.status] ?? 0) + 1)))
        .catch(() => void (statuses.failed = (statuses.failed ?? 0) + 1));
      inflight.add(p);
      void p.finally(() => inflight.delete(p));
      await sleep(1000 / LOAD_RPS);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      await Promise.all(inflight);
      return statuses;
    },
  };
}

const mib = (bytes: number) => Math.round(bytes / MiB);
const q = (v: string | undefined) => (v === undefined ? 0 : parseQuantity(v));
const cpuText = (cores: number) => (cores < 10 ? `${Math.round(cores * 1000)}m` : `${cores.toFixed(1)} cores`);
const memText = (bytes: number) => `${(bytes / 2 ** 30).toFixed(bytes >= 10 * 2 ** 30 ? 1 : 2)} GiB`;

/** What a workload's pods request in all (its containers; replicas as rendered, or the autoscaler's minimum). */
const requestsOf = (objects: K8sObject[]) =>
  workloadsOf(objects)
    .filter((w) => w.kind !== 'Job')
    .reduce(
      (a, w) => {
        const c = w.pod.containers.reduce((s, x) => ({ cpu: s.cpu + q(resourcesOf(x).requests?.cpu), memory: s.memory + q(resourcesOf(x).requests?.memory) }), { cpu: 0, memory: 0 });
        return { cpu: a.cpu + c.cpu * w.replicas, memory: a.memory + c.memory * w.replicas, pods: a.pods + w.replicas };
      },
      { cpu: 0, memory: 0, pods: 0 },
    );

export async function run(): Promise<void> {
  build();
  const load0 = execFileSync('uptime').toString().trim();
  const runDir = mkdtempSync(path.join(os.tmpdir(), 'mi-tenant-cost-'));
  const database = `mi_bench_cost_${process.pid}`;
  // The tenant's Secret as a user creates it for a simulator tenant: its RPC is the chain's Service.
  const secretsFile = path.join(runDir, 'secrets.yaml');
  writeFileSync(secretsFile, toYaml({ [DEFAULT_SECRET_NAME]: { DATABASE_URL: dbUrl(database), REDIS_URL, RPC_URL: chainRpcUrl() } }));
  const t = await startTenant({
    env: ENV,
    tenant: TENANT,
    overlay: { source: { type: 'simulator' }, quota: { persistentVolumeClaims: 1 } },
    code: { root: ROOT, built: true },
    runDir,
    database,
    fresh: true,
    adminDatabaseUrl: ADMIN_URL,
    redisUrl: REDIS_URL,
    secretsFile,
    // What goes wrong on the way up is worth seeing; the rest is the pods' own logs in the run folder.
    log: (line) => /Failed|BackOff|Unhealthy|Exited/.test(line) && process.stderr.write(`  ${line}\n`),
  });
  try {
    const workloads = workloadsOf(t.rendered.objects).filter((w) => w.kind !== 'Job');
    const indexers = workloads.filter((w) => w.name.endsWith('-indexer')).flatMap((w) => t.podsOf(w.name));
    const t0 = Date.now();
    const roles = await settle(t, indexers);
    process.stdout.write(`settled in ${((Date.now() - t0) / 1000).toFixed(1)} s (every pod Ready, the writer within ${TIP_SLOTS} slots of the tip)\n`);
    const rows: Row[] = workloads.flatMap((w) =>
      t.podsOf(w.name).flatMap((pod) =>
        pod.spec.containers.map((container) => ({ process: `${pod.name.replace(/^market-indexer-/, '')}${roles.has(pod) ? ` (${roles.get(pod)})` : ''}`, pod, workload: w.name, container })),
      ),
    );

    // Past the start's own work (compiling hot code, the first caches), which is not what idle costs.
    await sleep(WARMUP_SECONDS * 1000);
    const idle = await measure(rows, IDLE_SECONDS);
    const load0b = execFileSync('uptime').toString().trim();
    let loaded: Map<Row, Window> | undefined;
    let statuses: Record<string, number> = {};
    if (LOAD_SECONDS > 0) {
      const reads = readLoad(t.frontUrl);
      loaded = await measure(rows, LOAD_SECONDS);
      statuses = await reads.stop();
    }
    const load1 = execFileSync('uptime').toString().trim();

    console.table(
      rows.map((r) => {
        const res = resourcesOf(r.container);
        const i = idle.get(r)!;
        const l = loaded?.get(r);
        return {
          process: r.process,
          'idle RSS MiB (mean/max)': `${mib(i.rssMean)}/${mib(i.rssMax)}${i.restarted ? ' restarted' : ''}`,
          'idle CPU m': Math.round(i.millicores),
          ...(l ? { [`${LOAD_RPS} reads/s RSS max MiB`]: `${mib(l.rssMax)}${l.restarted ? ' restarted' : ''}`, [`${LOAD_RPS} reads/s CPU m`]: Math.round(l.millicores) } : {}),
          'memory request/limit': `${res.requests?.memory ?? '-'}/${res.limits?.memory ?? '-'}`,
          'cpu request/limit': `${res.requests?.cpu ?? '-'}/${res.limits?.cpu ?? '-'}`,
          'idle RSS / request': res.requests?.memory ? (i.rssMax / q(res.requests.memory)).toFixed(2) : '-',
        };
      }),
    );
    if (loaded) process.stdout.write(`reads through the Ingress: ${JSON.stringify(statuses)}\n`);

    const tenant = requestsOf(t.rendered.objects);
    const platform = requestsOf(t.rendered.platform);
    const measuredRss = rows.reduce((a, r) => a + idle.get(r)!.rssMax, 0);
    const measuredCpu = rows.reduce((a, r) => a + idle.get(r)!.millicores, 0);
    process.stdout.write(
      `one tenant (${tenant.pods} pods): requests ${cpuText(tenant.cpu)} CPU, ${mib(tenant.memory)} MiB; measured idle ${Math.round(measuredCpu)}m CPU, ${mib(measuredRss)} MiB RSS\n` +
        `the platform (${platform.pods} pods: the operator): requests ${cpuText(platform.cpu)} CPU, ${mib(platform.memory)} MiB\n`,
    );
    console.table(
      TENANT_COUNTS.map((n) => ({
        tenants: n,
        pods: n * tenant.pods + platform.pods,
        'CPU requested': cpuText(n * tenant.cpu + platform.cpu),
        'memory requested': memText(n * tenant.memory + platform.memory),
      })),
    );
    process.stdout.write(`load before: ${load0}\nload idle end: ${load0b}\nload after: ${load1}\n`);
  } finally {
    await t.stop();
    await dropDatabase(database);
    rmSync(runDir, { recursive: true, force: true });
  }
}
