import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type http from 'node:http';
import { hostname } from 'node:os';
import { KubeConfig } from '@kubernetes/client-node';
import Ajv from 'ajv';
import { parse as parseYaml } from 'yaml';
import type { MarketIndexer } from '../cdk8s/lib/crd';
import { describeErrors } from '../cdk8s/lib/resolve';
import { deepPartial, OperatorPolicySchema, TenantValuesSchema, type TenantInput } from '../cdk8s/lib/values';
import type { Common } from '../core/common';
import type { Config } from '../core/config';
import { createCommon, exitWith } from '../core/process';
import { startInformers, type Caches } from './informers';
import { createIndexerStatusPoller } from './indexer-status';
import { createKubeClient, KubeError, type KubeClient } from './kube/client';
import { createLeaderElector } from './leader';
import { createOperatorHttp } from './http';
import { createWorkQueue, runWorker } from './queue';
import { createReconciler } from './reconcile';
import { effectivePolicy, type SpecPolicy } from './policy';

export const LEASE_NAME = 'market-indexer-operator';
const WORKERS = 4;

export interface OperatorDefaults {
  /** The environment's values for every tenant. */
  values: TenantInput;
  /** What a MarketIndexer may ask for beyond them (`policy` in the file; D-200). */
  policy: SpecPolicy;
}

/**
 * The environment's values for every tenant, validated like an environment file's, and the
 * policy on what a spec may ask (the file's `policy`, from `platform.operator.policy`).
 */
export function loadDefaults(file: string | undefined): OperatorDefaults {
  if (!file) return { values: {}, policy: effectivePolicy(undefined, {}) };
  let parsed: unknown;
  try {
    const text = readFileSync(file, 'utf8');
    parsed = file.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new Error(`${file}: cannot read: ${(err as Error).message.split('\n')[0]}`);
  }
  const { policy, ...values } = (parsed ?? {}) as Record<string, unknown>;
  const ajv = new Ajv({ allErrors: true, strict: false });
  const validate = ajv.compile(deepPartial(TenantValuesSchema));
  if (!validate(values)) throw new Error(`${file}: ${describeErrors(validate.errors).join('; ')}`);
  const validatePolicy = ajv.compile(deepPartial(OperatorPolicySchema));
  if (!validatePolicy(policy ?? {})) throw new Error(`${file}: ${describeErrors(validatePolicy.errors).map((e) => `policy.${e}`).join('; ')}`);
  return { values: values as TenantInput, policy: effectivePolicy(policy as Partial<SpecPolicy> | undefined, values as TenantInput) };
}

export function kubeConfigFrom(file: string | undefined): KubeConfig {
  const kc = new KubeConfig();
  if (file) kc.loadFromFile(file);
  else kc.loadFromDefault();
  return kc;
}

/** The controller while this process leads: caches, queue, workers, resync, status polling. */
function startController(common: Common, kube: KubeClient, defaults: OperatorDefaults, signal: AbortSignal) {
  const { config, logger, metrics } = common;
  const o = config.operator;
  const queue = createWorkQueue();
  let caches: Caches;
  const poller = createIndexerStatusPoller({
    urlTemplate: o.statusUrl,
    intervalMs: o.statusSeconds * 1000,
    logger,
    list: () => (caches?.marketIndexers.list() ?? []) as unknown as MarketIndexer[],
    onChange: (name) => queue.add(name),
  });
  caches = startInformers({
    kube,
    logger,
    signal,
    onChange: (name) => queue.add(name),
    // Its binding in a namespace is gone: make it again, through the namespace's MarketIndexer.
    onForbidden: (namespace) => {
      reconciler.forgetAccess(namespace);
      const owner = caches.namespaces.get(namespace)?.metadata.ownerReferences?.find((r) => r.controller)?.name;
      if (owner) queue.add(owner);
    },
  });
  const reconciler = createReconciler({
    kube,
    caches,
    logger,
    metrics,
    environment: o.environment,
    defaults: defaults.values,
    policy: defaults.policy,
    platformNamespace: o.namespace,
    lagThreshold: o.lagThreshold,
    observation: (mi) => poller.get(mi),
  });

  const worker = () =>
    runWorker(queue, async (key) => {
      const end = metrics.operatorReconcileDuration.startTimer();
      try {
        const outcome = await reconciler.reconcile(key);
        metrics.operatorReconciles.inc({ result: outcome.result === 'degraded' ? 'degraded' : 'converged' });
        queue.forget(key);
        if (outcome.result === 'degraded') queue.addAfter(key, outcome.retryAfterMs);
      } catch (err) {
        metrics.operatorReconciles.inc({ result: 'error' });
        const e = err as Error;
        logger.warn({ marketIndexer: key, err: e.message, status: err instanceof KubeError ? err.status : undefined }, 'reconcile failed; retrying');
        queue.addRateLimited(key);
      } finally {
        end();
        metrics.operatorQueueDepth.set(queue.depth);
      }
    });

  let synced = false;
  const workers: Promise<void>[] = [];
  const resync = setInterval(() => {
    for (const mi of caches.marketIndexers.list()) queue.add(mi.metadata.name);
  }, o.resyncSeconds * 1000);
  resync.unref();
  void caches.synced.then(() => {
    if (signal.aborted) return;
    synced = true;
    logger.info({ marketIndexers: caches.marketIndexers.list().length }, 'caches synced; reconciling');
    for (let i = 0; i < WORKERS; i++) workers.push(worker());
    poller.start();
  });
  return {
    get synced() {
      return synced;
    },
    async stop() {
      clearInterval(resync);
      poller.stop();
      queue.shutDown();
      await caches.stop();
      await Promise.race([Promise.all(workers), new Promise((r) => setTimeout(r, 5_000).unref())]);
    },
  };
}

export async function runOperator(config: Config, opts: { kubeconfig?: string } = {}): Promise<void> {
  const common = createCommon(config, 'operator');
  const { logger, metrics, shutdown } = common;
  let kube: KubeClient;
  let defaults: OperatorDefaults;
  try {
    kube = createKubeClient(kubeConfigFrom(opts.kubeconfig ?? config.operator.kubeconfig), {
      platformNamespace: config.operator.namespace,
      onWrite: (w) => metrics.operatorWrites.inc({ verb: w.verb }),
    });
    defaults = loadDefaults(config.operator.defaultsFile);
  } catch (err) {
    exitWith(`operator: ${(err as Error).message}`);
  }
  const identity = `${hostname()}_${randomUUID().slice(0, 8)}`;
  const elector = createLeaderElector({
    kube,
    namespace: config.operator.namespace,
    name: LEASE_NAME,
    identity,
    leaseSeconds: config.operator.leaseSeconds,
    logger,
    metrics,
  });
  let controller: ReturnType<typeof startController> | undefined;
  const server: http.Server = createOperatorHttp(common, () => !elector.leading || controller?.synced === true);
  await new Promise<void>((resolve) => server.listen(config.operator.port, config.apiHost, resolve));
  const port = (server.address() as { port: number }).port;
  logger.info({ port, identity }, 'operator listening; campaigning for the lease');
  process.send?.({ type: 'listening', port });

  // Last added, first run: stop reconciling, give the lease up, then close the port.
  shutdown.add('http', () => new Promise<void>((resolve) => server.close(() => resolve())));
  shutdown.add('lease', () => elector.release());
  shutdown.add('controller', () => controller?.stop());

  const controllerSignal = new AbortController();
  shutdown.signal.addEventListener('abort', () => controllerSignal.abort(), { once: true });
  const stopped = await elector.run(shutdown.signal, () => {
    controller = startController(common, kube, defaults, controllerSignal.signal);
  });
  if (!stopped) {
    // Leadership lost while running: stop at once, as client-go's leaders do; the Deployment
    // starts a fresh process that campaigns again.
    controllerSignal.abort();
    await controller?.stop();
    logger.error('lost leadership; exiting');
    process.exit(1);
  }
}
