import type { MarketIndexer } from '../cdk8s/lib/crd';
import { namespaceOf } from '../cdk8s/lib/names';
import type { TenantInput } from '../cdk8s/lib/values';
import type { Logger } from '../core/telemetry/logger';
import type { Metrics } from '../core/telemetry/metrics';
import { createTenantAccess } from './access';
import type { Caches } from './informers';
import { isForbidden, type KubeClient } from './kube/client';
import type { SpecPolicy } from './policy';
import { applyNamespace, applyObjects } from './reconcile/apply';
import { databaseCondition } from './reconcile/database';
import { checkClaim, createNamespace, desiredNamespace, liveNamespace } from './reconcile/claim';
import { addFinalizer, finalize } from './reconcile/finalizer';
import { lagCondition, observe, observedConditions, outcomeOf, problemConditions, PROBLEM_RETRY_MS, readingOf, recordedFigures } from './reconcile/observe';
import { fetchMarketIndexer, type IndexerReading, type Outcome, type Problem } from './reconcile/outcome';
import { prune } from './reconcile/prune';
import { projectionStatus, reindexCondition } from './reconcile/reindex';
import { checkSecrets } from './reconcile/secrets';
import { checkPolicy, render } from './reconcile/spec';
import { createStatusWriter, statusOf } from './reconcile/status';
import { createRenderCache } from './render';

export { holds } from './reconcile/apply';
export { FIELD_MANAGER, FINALIZER, type IndexerObservation, type IndexerReading, type IndexerUnavailable, type Outcome } from './reconcile/outcome';

export interface Reconciler {
  reconcile(name: string): Promise<Outcome>;
  /** The operator's binding in a namespace is gone (its requests there were refused): make it again. */
  forgetAccess(namespace: string): void;
}

/**
 * Level-triggered reconcile of one MarketIndexer: render the tenant with the kit's construct,
 * apply (server-side, one field manager) only the objects that differ from what the caches hold,
 * delete what it owns and no longer renders, and write the status only when it changed. A
 * MarketIndexer that cannot be served (an invalid spec, a missing Secret, a tenant another one
 * claims) is `Degraded` with a reason and an Event, and nothing else is touched. Each step is a
 * function of `operator/reconcile/` with its own unit test.
 */
export function createReconciler(deps: {
  kube: KubeClient;
  caches: Caches;
  logger: Logger;
  metrics: Metrics;
  environment: string;
  defaults: TenantInput;
  policy: SpecPolicy;
  platformNamespace: string;
  lagThreshold: number;
  observation(mi: MarketIndexer): IndexerReading | undefined;
  now?: () => string;
}): Reconciler {
  const { kube, caches, logger } = deps;
  const now = deps.now ?? (() => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'));
  const access = createTenantAccess({ kube, caches, platformNamespace: deps.platformNamespace });
  const status = createStatusWriter({ kube, logger, platformNamespace: deps.platformNamespace, now });
  const renders = createRenderCache();

  /** A step refused the resource: `Degraded` with its reason, and the rest is not touched. */
  async function degrade(mi: MarketIndexer, namespace: string, problem: Problem): Promise<Outcome> {
    logger.warn({ marketIndexer: mi.metadata.name, reason: problem.reason, message: problem.message }, 'MarketIndexer degraded');
    const at = now();
    const { reading: seen, observedAt } = recordedFigures(readingOf(deps.observation(mi), mi.status), mi.status, deps.lagThreshold, at);
    const projection = projectionStatus(seen, mi.status?.projection, at);
    const conditions = [...problemConditions(problem, lagCondition(seen, deps.lagThreshold)), reindexCondition(seen, projection)];
    await status.write(mi, statusOf(mi, namespace, conditions, seen, undefined, at, mi.status?.imageTag, projection, observedAt));
    return { result: 'degraded', reason: problem.reason, retryAfterMs: PROBLEM_RETRY_MS };
  }

  async function reconcileOnce(name: string): Promise<Outcome> {
    // Fetch (a copy of the cached resource); a deleted one runs its deletion policy.
    let mi = fetchMarketIndexer(caches.marketIndexers, name);
    if (!mi) {
      renders.forget(name);
      return { result: 'gone' };
    }
    if (mi.metadata.deletionTimestamp) return finalize({ kube, caches, access, logger }, mi);
    const namespace = namespaceOf(mi.spec.tenant);

    // Check the spec against the environment's policy, then render it.
    const refused = checkPolicy(mi, deps.policy);
    if (refused) return degrade(mi, namespace, refused);
    const out = render(mi, { environment: deps.environment, defaults: deps.defaults, platformNamespace: deps.platformNamespace }, renders.render);
    if ('problem' in out) return degrade(mi, namespace, out.problem);
    const { rendered } = out;

    // Claim the tenant: its namespace is this resource's, or nobody's yet.
    const live = await liveNamespace({ kube, namespaces: caches.namespaces }, namespace);
    const claimed = checkClaim(mi, namespace, live);
    if (claimed) return degrade(mi, namespace, claimed);
    mi = await addFinalizer(kube, mi);
    const ns = live ?? (await createNamespace(kube, rendered));
    if (live) access.adopt(namespace);

    // Bind the operator's tenant role there (and start that namespace's caches), then apply it.
    await access.ensure(mi, namespace, desiredNamespace(rendered).metadata.labels);
    await applyNamespace(kube, rendered, ns);

    // Nothing more until the Secrets it refers to are there.
    const missing = await checkSecrets(kube, rendered);
    if (missing) return degrade(mi, namespace, missing);

    // Apply what differs, prune what it owns and no longer renders.
    const unserved = await applyObjects({ kube, caches }, rendered);
    await prune({ kube, caches }, mi, rendered);

    // Observe the Deployments and the indexer, and write the status if it changed.
    const observed = observe(caches, namespace);
    const at = now();
    // The indexer's figures change at every read: recorded at most once a minute while only they do (D-443).
    const { reading: seen, observedAt } = recordedFigures(readingOf(deps.observation(mi), mi.status), mi.status, deps.lagThreshold, at);
    // A new image tag rolls both Deployments: Progressing names the tag it leaves and the one it takes.
    const tags = { running: mi.status?.imageTag, wanted: rendered.values.image.tag };
    // The re-index's figures change at every read: recorded at most once a minute (D-436).
    const projection = projectionStatus(seen, mi.status?.projection, at);
    // The CloudNativePG Cluster's phase, for a tenant on one (D-506); its status changes queue the tenant (it is watched as an owned kind).
    const database = databaseCondition(caches, namespace, rendered.values, unserved);
    const conditions = [...observedConditions(observed, unserved, lagCondition(seen, deps.lagThreshold), tags), reindexCondition(seen, projection), ...(database ? [database] : [])];
    await status.write(mi, statusOf(mi, namespace, conditions, seen, observed.apiReadyReplicas, at, observed.rolledOut ? tags.wanted : tags.running, projection, observedAt));
    return outcomeOf(observed, unserved);
  }

  return {
    async reconcile(name) {
      try {
        return await reconcileOnce(name);
      } catch (err) {
        // Refused in a tenant namespace: its binding there may be gone; the retry makes it again.
        const mi = caches.marketIndexers.get(name) as unknown as MarketIndexer | undefined;
        if (isForbidden(err) && mi) access.forget(namespaceOf(mi.spec.tenant));
        throw err;
      }
    },
    forgetAccess: (namespace) => access.forget(namespace),
  };
}
