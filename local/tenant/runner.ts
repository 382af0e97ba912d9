import { fork, type ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import path from 'node:path';
import { deepMerge } from '../../cdk8s/lib/resolve';
import { SETTINGS } from '../../core/config/settings';
import { edgeOf, gatewayIdleTimeoutSeconds } from './edge-config';
import { startEdge } from './edge-nginx';
import { startServiceFront, type Endpoint, type ServiceFront } from './front';
import { localCommand, mapMounts, resolveEnv, resolveServiceHosts, serviceHostNames, type SecretStore } from './kubelet';
import { ofKind, readRenderedTenant, renderTenant, workloadsOf, type Container, type K8sObject, type RenderedTenant, type Workload } from './manifests';
import { alertmanagerConfig, prometheusConfig, rulesFile, startAlertmanager, startPrometheus, type ScrapeTarget, type Server } from './monitoring';
import { createPod, type Pod, type PodEvent } from './pod';
import { freePort } from './ports';
import { portOf } from './probes';
import { startRpcFaultProxy, type RpcFaultProxy } from './rpc-faults';
import { DEFAULT_ADMIN_DATABASE_URL, DEFAULT_REDIS_URL, ensureDatabase, localSecretsFile, readSecretsFile, secretStore, startAlertReceiver } from './stores';

export const ROOT = path.resolve(__dirname, '../..');
/** Where the fronts and the servers listen, and where the front connects to pods from. */
const FRONT_HOST = '127.0.0.1';
/** What the project's image is called in the kit (the harness runs only its containers). */
const PROJECT_IMAGE = /market-indexer(:|@|$)/;

export interface TenantRunOptions {
  env: string;
  tenant: string;
  /** An environment file's shape merged over the environment (`--values`). */
  overlay?: unknown;
  /** Rendered files to run instead of rendering in process (`--manifests`). */
  manifestsDir?: string;
  /** A secrets file of your own (`--secrets`); otherwise one is written in the run folder from the local stores. */
  secretsFile?: string;
  runDir?: string;
  /** Start over: a new database and chain. */
  fresh?: boolean;
  database?: string;
  adminDatabaseUrl?: string;
  redisUrl?: string;
  frontPort?: number;
  prometheusPort?: number;
  alertmanagerPort?: number;
  chainPort?: number;
  /**
   * The harness's chain serves its RPC as a provider's pool of nodes this many slots behind
   * (CHAIN_RPC_POOL_LAGS, D-460), so the tenant meets a provider as it is (D-476); `[]`: one node.
   */
  chainPoolLags?: readonly number[];
  /**
   * Variables added to the containers of this name (tests), for a setting the kit renders from
   * an object the harness does not run: `DATABASE_READ_URL` on the HA PostgreSQL's ro front,
   * where a cluster has CloudNativePG's `-ro` Service.
   */
  containerEnv?: Record<string, Record<string, string>>;
  /** The checkout the pods run (an earlier release's worktree, local/tenant/release.ts); this one by default. */
  code?: PodCode;
  log?: (line: string) => void;
}

/** The sources a pod's containers run: a checkout, from its sources (tsx) or from its own build. */
export interface PodCode {
  root: string;
  built?: boolean;
}

/** What a pod is made from: its workload as rendered, the objects it reads, the code it runs. */
export interface PodSource {
  configMaps: Record<string, Record<string, string>>;
  secrets: SecretStore;
  code: PodCode;
}

/**
 * What the harness merges over every environment it runs: the edge here is the harness's front,
 * on 127.0.0.1, so the API must trust it, as a cluster's tenant lists its Gateway's or ingress
 * controller's addresses (api.httpRoute.trustedProxies, api.ingress.trustedProxies, D-230). As
 * the tenant's own TRUST_PROXY, which every release's kit takes whatever its edge: an earlier
 * release's own synth gets the same (local/tenant/release.ts).
 */
export const withHarnessOverlay = (overlay: unknown): unknown => deepMerge({ settings: { TRUST_PROXY: FRONT_HOST } }, overlay ?? {});

interface ServiceObject extends K8sObject {
  spec: { selector?: Record<string, string>; ports: { name?: string; port: number; targetPort?: number | string }[] };
}

/** The harness chain's nodes: one up to date, two a few slots behind, as a provider's pool (D-476). */
export const HARNESS_POOL_LAGS: readonly number[] = [0, 2, 4];

/** A chain for the tenant when it does not render its own: `npm run chain`, as a child process. */
async function startChain(opts: { programId: string; dataDir: string; port: number; fresh: boolean; logFile: string; poolLags: readonly number[] }): Promise<{ url: string; child: ChildProcess }> {
  const log = openSync(opts.logFile, 'a');
  const child = fork(path.join(ROOT, 'simulator/main.ts'), ['--data-dir', opts.dataDir, '--port', String(opts.port), ...(opts.fresh ? ['--fresh'] : [])], {
    cwd: ROOT,
    detached: true,
    execArgv: ['--import', 'tsx'],
    env: { PATH: process.env.PATH, HOME: process.env.HOME, PROGRAM_ID: opts.programId, CHAIN_RPC_HOST: '127.0.0.1', LOG_LEVEL: 'info', ...(opts.poolLags.length ? { CHAIN_RPC_POOL_LAGS: opts.poolLags.join(',') } : {}) },
    stdio: ['ignore', log, log, 'ipc'],
  });
  closeSync(log);
  await new Promise<void>((resolve, reject) => {
    child.on('message', (m: { type?: string }) => m?.type === 'listening' && resolve());
    child.once('exit', (code) => reject(new Error(`the chain exited with code ${code} before listening`)));
  });
  return { url: `http://127.0.0.1:${opts.port}`, child };
}

/**
 * Runs one tenant as the kit deploys it (docs/local-tenant.md): its rendered workloads as local
 * processes, Services and the Ingress as local fronts, the local PostgreSQL and Redis as its
 * stores, a simulated chain behind a real Solana JSON-RPC, Prometheus and Alertmanager configured
 * from its ServiceMonitors and PrometheusRule. A test and demo harness, not a runtime.
 */
export async function startTenant(opts: TenantRunOptions) {
  const log = opts.log ?? (() => {});
  const overlay = withHarnessOverlay(opts.overlay);
  const rendered: RenderedTenant = opts.manifestsDir ? readRenderedTenant(opts.manifestsDir, opts.tenant) : renderTenant(opts.env, opts.tenant, overlay);
  const { objects, namespace } = rendered;
  const runDir = path.resolve(opts.runDir ?? path.join(ROOT, '.data', 'tenant', `${opts.env}-${opts.tenant}`));
  const logDir = path.join(runDir, 'logs');
  mkdirSync(logDir, { recursive: true });
  const stops: (() => Promise<void> | void)[] = [];
  const stop = async () => {
    for (const s of stops.reverse()) await s();
  };
  // The processes have process groups of their own: if the harness dies without stopping them,
  // they go with it (as far as an exiting process can still act).
  const owned: (() => (number | undefined)[])[] = [];
  const orphans = () => {
    for (const pid of owned.flatMap((f) => f())) {
      try {
        if (pid) process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  };
  process.on('exit', orphans);
  stops.push(() => void process.off('exit', orphans));

  try {
    // Pods and Services get addresses of their own, as in a cluster: one block of 127/8 per run.
    const block = `127.${randomInt(2, 250)}.${randomInt(0, 255)}`;
    const configMaps = Object.fromEntries(ofKind<K8sObject & { data?: Record<string, string> }>(objects, 'ConfigMap').map((c) => [c.metadata.name, c.data ?? {}]));
    const programId = Object.values(configMaps).find((d) => d.PROGRAM_ID)?.PROGRAM_ID;
    const workloads = workloadsOf(objects).filter((w) => w.pod.containers.every((c) => PROJECT_IMAGE.test(c.image)));

    // Stores.
    const adminUrl = opts.adminDatabaseUrl ?? process.env.TEST_DATABASE_URL ?? DEFAULT_ADMIN_DATABASE_URL;
    const databaseUrl = await ensureDatabase(adminUrl, opts.database ?? `mi_${opts.env}_${opts.tenant}`.replace(/-/g, '_'), opts.fresh ?? false);
    const redisUrl = opts.redisUrl ?? process.env.TEST_REDIS_URL ?? DEFAULT_REDIS_URL;

    // The chain: the tenant's own (a simulator tenant's pod), or one the harness starts, behind a faults switch.
    let chain: { url: string } | undefined;
    let faults: RpcFaultProxy | undefined;
    if (!workloads.some((w) => w.name.endsWith('-chain'))) {
      const c = await startChain({ programId: programId ?? '', dataDir: path.join(runDir, 'chain'), port: opts.chainPort ?? (await freePort('127.0.0.1')), fresh: opts.fresh ?? false, logFile: path.join(logDir, 'chain.log'), poolLags: opts.chainPoolLags ?? HARNESS_POOL_LAGS });
      owned.push(() => [c.child.exitCode === null ? c.child.pid : undefined]);
      stops.push(() => new Promise<void>((r) => (c.child.exitCode !== null ? r() : (c.child.once('exit', () => r()), c.child.kill('SIGTERM')))));
      faults = await startRpcFaultProxy({ upstream: c.url, host: '127.0.0.1' });
      stops.push(() => faults!.close());
      chain = { url: c.url };
    }

    // Secrets: the rendered ones, with the local file over them.
    const local: Record<string, string> = { DATABASE_URL: databaseUrl, REDIS_URL: redisUrl, ...(faults ? { RPC_URL: faults.url, RPC_WS_URL: faults.wsUrl } : {}) };
    const file: SecretStore = opts.secretsFile ? readSecretsFile(opts.secretsFile) : localSecretsFile(path.join(runDir, 'secrets.yaml'), objects, local);

    // Services: a cluster address each, its names resolved where processes read them.
    const services = ofKind<ServiceObject>(objects, 'Service').map((s, i) => ({ object: s, ip: `${block}.${200 + i}` }));
    const hosts: Record<string, string> = {};
    for (const s of services) for (const h of serviceHostNames(s.object.metadata.name, namespace)) hosts[h] = s.ip;

    // Pods.
    const pods: Pod[] = [];
    const events: PodEvent[] = [];
    const readyChanged: (() => void)[] = [];
    let podIps = 0;
    const sourceOf = (objs: K8sObject[], code: PodCode): PodSource => ({
      configMaps: Object.fromEntries(ofKind<K8sObject & { data?: Record<string, string> }>(objs, 'ConfigMap').map((c) => [c.metadata.name, c.data ?? {}])),
      secrets: secretStore(objs, file),
      code,
    });
    const initial = sourceOf(objects, opts.code ?? { root: ROOT });
    /** A pod of workload `w` as the kubelet would run it, added to the Services' endpoints (not started). */
    const addPod = (w: Workload, name: string, from: PodSource): Pod => {
      const ip = `${block}.${10 + podIps++}`;
      const mounts = Object.fromEntries(
        w.pod.containers.flatMap((c) => (c.volumeMounts ?? []).filter((m) => m.mountPath !== '/tmp').map((m) => [m.mountPath, path.join(runDir, 'volumes', name, m.name)])),
      );
      for (const dir of Object.values(mounts)) mkdirSync(dir, { recursive: true });
      const pod = createPod({
        name,
        ip,
        spec: w.pod,
        cwd: from.code.root,
        logDir,
        launch: (c: Container) => {
          const env = resolveEnv(c, { namespace, configMaps: from.configMaps, secrets: from.secrets, fields: { 'metadata.name': name, 'metadata.namespace': namespace, 'status.podIP': ip } });
          Object.assign(env, opts.containerEnv?.[c.name]);
          for (const [k, v] of Object.entries(env)) env[k] = mapMounts(resolveServiceHosts(v, hosts), mounts);
          const cmd = localCommand(c.command, c.args, from.code.root, { built: from.code.built });
          // A pod's processes listen on its own address: the one thing its network namespace would give them
          // (the chain's pod asks for every interface, which here would be the machine's).
          return { ...cmd, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env, API_HOST: ip, ...(env.CHAIN_RPC_HOST === undefined ? {} : { CHAIN_RPC_HOST: ip }) } };
        },
        onEvent: (e) => {
          events.push(e);
          log(`${e.pod}${e.container ? `/${e.container}` : ''} ${e.type}: ${e.message}`);
        },
        onReadyChange: () => readyChanged.forEach((f) => f()),
      });
      (pod as Pod & { workload?: string; labels?: Record<string, string> }).workload = w.name;
      (pod as Pod & { labels?: Record<string, string> }).labels = w.labels;
      pods.push(pod);
      return pod;
    };
    for (const w of workloads) for (let i = 0; i < w.replicas; i++) addPod(w, `${w.name}-${i}`, initial);
    const labelsOf = (p: Pod) => (p as Pod & { labels: Record<string, string> }).labels;
    const workloadOf = (p: Pod) => (p as Pod & { workload: string }).workload;
    const endpointsOf = (s: ServiceObject, port: ServiceObject['spec']['ports'][number]): Endpoint[] =>
      pods
        .filter((p) => Object.entries(s.spec.selector ?? {}).every(([k, v]) => labelsOf(p)[k] === v))
        .flatMap((p) => {
          const c = p.spec.containers.find((x) => x.ports?.some((cp) => cp.name === port.targetPort || cp.containerPort === port.targetPort || (port.targetPort === undefined && cp.containerPort === port.port)));
          return c ? [{ host: p.ip, port: portOf(c, port.targetPort ?? port.port), ready: () => p.ready() }] : [];
        });
    const fronts: ServiceFront[] = [];
    for (const s of services) {
      for (const port of s.object.spec.ports) fronts.push(await startServiceFront({ host: s.ip, port: port.port, endpoints: () => endpointsOf(s.object, port) }));
    }
    stops.push(async () => void (await Promise.all(fronts.map((f) => f.close()))));

    // The public front: nginx as the Gateway's data plane, configured from the tenant's HTTPRoute
    // (or an earlier release's Ingress), its upstreams the ready endpoints of the Services it names.
    const pingMs = Number(Object.values(configMaps).find((d) => d.WS_PING_INTERVAL_MS !== undefined)?.WS_PING_INTERVAL_MS ?? SETTINGS.WS_PING_INTERVAL_MS.default);
    const routes = edgeOf(objects, { idleTimeoutSeconds: gatewayIdleTimeoutSeconds(pingMs) });
    const edge = await startEdge({
      edge: routes,
      dir: path.join(runDir, 'edge'),
      host: FRONT_HOST,
      port: opts.frontPort ?? 0,
      endpoints: (upstream) => {
        const b = routes.backends[upstream]!;
        const s = services.find((x) => x.object.metadata.name === b.service);
        const port = s?.object.spec.ports.find((x) => x.port === b.port || x.name === b.port);
        return s && port ? endpointsOf(s.object, port).filter((e) => e.ready()).map((e) => `${e.host}:${e.port}`) : [];
      },
      // No DNS here: clients reach the edge by its address, which the tenant's servers answer too (D-491).
      aliases: [FRONT_HOST],
    });
    owned.push(() => [edge.child.exitCode === null ? -edge.pid : undefined]);
    stops.push(() => edge.stop());
    readyChanged.push(() => void edge.refresh());

    owned.push(() => pods.flatMap((p) => p.pids()));
    // Start the pods: Jobs to completion first, as a migration Job would gate a rollout.
    stops.push(async () => void (await Promise.all(pods.map((p) => p.stop()))));
    const jobs = pods.filter((p) => workloads.find((w) => w.name === workloadOf(p))?.kind === 'Job');
    await Promise.all(jobs.map((p) => p.start()));
    for (const p of pods.filter((x) => !jobs.includes(x))) void p.start();

    // Prometheus and Alertmanager.
    const targets: ScrapeTarget[] = services.flatMap((s) =>
      s.object.spec.ports.flatMap((port) =>
        pods
          .filter((p) => Object.entries(s.object.spec.selector ?? {}).every(([k, v]) => labelsOf(p)[k] === v))
          .flatMap((p) => {
            const c = p.spec.containers.find((x) => x.ports?.some((cp) => cp.name === port.targetPort || cp.containerPort === port.targetPort));
            return c ? [{ service: s.object.metadata.name, portName: port.name ?? '', pod: p.name, container: c.name, address: `${p.ip}:${portOf(c, port.targetPort ?? port.port)}` }] : [];
          }),
      ),
    );
    const receiver = await startAlertReceiver('127.0.0.1');
    stops.push(() => receiver.close());
    const amPort = opts.alertmanagerPort ?? (await freePort('127.0.0.1'));
    const alertmanager: Server = await startAlertmanager({ dir: path.join(runDir, 'alertmanager'), config: alertmanagerConfig(receiver.url), host: '127.0.0.1', port: amPort });
    owned.push(() => [alertmanager.child.exitCode === null ? alertmanager.child.pid : undefined]);
    stops.push(() => alertmanager.stop());
    const intervals = ofKind<K8sObject & { spec: { endpoints: { interval?: string }[] } }>(objects, 'ServiceMonitor').flatMap((m) => m.spec.endpoints.map((e) => e.interval ?? '30s'));
    const evaluationInterval = intervals.sort((x, y) => parseInt(x, 10) - parseInt(y, 10))[0] ?? '30s';
    const promPort = opts.prometheusPort ?? (await freePort('127.0.0.1'));
    const prometheus: Server = await startPrometheus({
      dir: path.join(runDir, 'prometheus'),
      config: prometheusConfig({ objects, namespace, targets, rulesFile: path.join(runDir, 'prometheus', 'rules.yaml'), alertmanager: `127.0.0.1:${amPort}`, evaluationInterval }),
      rules: rulesFile(objects),
      host: '127.0.0.1',
      port: promPort,
    });
    owned.push(() => [prometheus.child.exitCode === null ? prometheus.child.pid : undefined]);
    stops.push(() => prometheus.stop());

    return {
      tenant: rendered.tenant,
      environment: rendered.environment,
      namespace,
      rendered,
      runDir,
      databaseUrl,
      frontUrl: edge.url,
      /** The edge's nginx: what it logged of each request (the endpoints it tried), its reloads. */
      edge,
      rpcUrl: faults?.url ?? `http://${hosts['market-indexer-chain']}:8899`,
      chainUrl: chain?.url,
      faults,
      prometheusUrl: prometheus.url,
      alertmanagerUrl: alertmanager.url,
      notifications: receiver.notifications,
      events,
      pods,
      podsOf: (workload: string) => pods.filter((p) => workloadOf(p) === workload),
      /** The objects and code a pod of `objs` rendered for `code` is made from (a rollout's new revision). */
      podSource: sourceOf,
      addPod,
      /** Deletes a pod as the API server would: preStop, SIGTERM, the grace period; then out of the endpoints. */
      deletePod: async (p: Pod) => {
        await p.stop();
        pods.splice(pods.indexOf(p), 1);
        await edge.refresh();
      },
      /** Calls `f` on every readiness change of any pod; returns the function that stops it. */
      onReadyChange: (f: () => void) => {
        readyChanged.push(f);
        return () => void readyChanged.splice(readyChanged.indexOf(f), 1);
      },
      /** Resolves once every pod of every workload is ready and the edge sends to them. */
      allReady: () =>
        new Promise<void>((resolve) => {
          const check = () => pods.every((p) => p.ready() || jobs.includes(p)) && resolve();
          readyChanged.push(check);
          check();
        }).then(() => edge.refresh()),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

export type RunningTenant = Awaited<ReturnType<typeof startTenant>>;
