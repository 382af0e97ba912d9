import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../core/telemetry/logger';
import type { Metrics } from '../core/telemetry/metrics';
import { isConflict, isNotFound, type KubeClient, type KubeObject } from './kube/client';
import { LEASE } from '../cdk8s/lib/kinds';

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}
type Lease = KubeObject & { spec?: LeaseSpec };

const microTime = () => new Date().toISOString().replace('Z', '000Z');

/**
 * Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection does it:
 * a candidate takes the lease when it is free, or when its record has not changed for a whole
 * lease duration by the candidate's own clock (so clock skew between nodes does not matter); the
 * leader renews every third of it and gives up when it could not renew for two thirds; on
 * shutdown it releases the lease (empty holder, 1 s duration) so a standby takes over at once.
 * Updates carry the resourceVersion read, so two candidates never both win (409).
 */
export function createLeaderElector(opts: {
  kube: KubeClient;
  namespace: string;
  name: string;
  identity: string;
  leaseSeconds: number;
  logger: Logger;
  metrics: Metrics;
}) {
  const { kube, logger } = opts;
  const durationMs = opts.leaseSeconds * 1000;
  let observed: { record: string; at: number } | undefined;
  let leading = false;
  let lastRenew = 0;
  /** What the lease requests fail with, once logged: the same failure is not logged again. */
  let failing: string | undefined;

  /**
   * A failed lease request, logged once per distinct cause (a campaign retries several times a
   * second). A missing namespace is the usual first-run mistake outside a cluster: the error
   * names it and the fix, and the campaign goes on, so creating it is enough.
   */
  function report(err: unknown, retryMs: number): void {
    const message = (err as Error).message;
    if (message === failing) return;
    failing = message;
    if (isNotFound(err) && message.includes(`namespaces "${opts.namespace}" not found`)) {
      logger.error(
        { lease: `${opts.namespace}/${opts.name}`, retryMs },
        `the lease namespace "${opts.namespace}" does not exist: create it (kubectl create namespace ${opts.namespace}) or set OPERATOR_NAMESPACE to an existing namespace; retrying until then`,
      );
    } else {
      logger.warn({ err: message, retryMs }, 'lease request failed; retrying');
    }
  }

  async function tryAcquireOrRenew(): Promise<boolean> {
    const lease = (await kube.get(LEASE, opts.namespace, opts.name)) as Lease | undefined;
    const now = microTime();
    if (!lease) {
      await kube.create(LEASE, {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: opts.name, namespace: opts.namespace },
        spec: { holderIdentity: opts.identity, leaseDurationSeconds: opts.leaseSeconds, acquireTime: now, renewTime: now, leaseTransitions: 0 },
      });
      return true;
    }
    const spec = lease.spec ?? {};
    const record = JSON.stringify(spec);
    if (!observed || observed.record !== record) observed = { record, at: Date.now() };
    const held = !!spec.holderIdentity && spec.holderIdentity !== opts.identity;
    const expired = Date.now() - observed.at >= (spec.leaseDurationSeconds ?? opts.leaseSeconds) * 1000;
    if (held && !expired) return false;
    const mine = spec.holderIdentity === opts.identity;
    await kube.replace(LEASE, {
      ...lease,
      spec: {
        holderIdentity: opts.identity,
        leaseDurationSeconds: opts.leaseSeconds,
        acquireTime: mine ? spec.acquireTime : now,
        renewTime: now,
        leaseTransitions: (spec.leaseTransitions ?? 0) + (mine ? 0 : 1),
      },
    });
    return true;
  }

  return {
    get leading() {
      return leading;
    },
    /**
     * Campaigns until leading, then keeps renewing; resolves `false` when leadership is lost
     * (the caller stops working as leader) and `true` when the signal asks to stop.
     */
    async run(signal: AbortSignal, onLeading: () => void): Promise<boolean> {
      const retryMs = Math.max(200, Math.floor(durationMs / 5));
      const renewMs = Math.max(200, Math.floor(durationMs / 3));
      while (!signal.aborted) {
        let ok = false;
        try {
          ok = await tryAcquireOrRenew();
        } catch (err) {
          if (!isConflict(err)) report(err, retryMs);
        }
        if (ok) {
          if (failing) logger.info({ lease: `${opts.namespace}/${opts.name}` }, 'lease requests succeed again');
          failing = undefined;
          lastRenew = Date.now();
          if (!leading) {
            leading = true;
            opts.metrics.operatorIsLeader.set(1);
            logger.info({ identity: opts.identity, lease: `${opts.namespace}/${opts.name}` }, 'leading');
            onLeading();
          }
        } else if (leading && Date.now() - lastRenew > (durationMs * 2) / 3) {
          leading = false;
          opts.metrics.operatorIsLeader.set(0);
          logger.error({ identity: opts.identity }, 'lost the lease');
          return false;
        }
        // timers/promises takes its abort listener off the signal when the timer fires: a listener
        // added per renewal and never removed grew the process by one every few seconds for good.
        await sleep(leading ? renewMs : retryMs, undefined, { signal }).catch(() => {});
      }
      return true;
    },
    /** Gives the lease up (on shutdown), so a standby need not wait for it to expire. */
    async release(): Promise<void> {
      if (!leading) return;
      leading = false;
      opts.metrics.operatorIsLeader.set(0);
      try {
        const lease = (await kube.get(LEASE, opts.namespace, opts.name)) as Lease | undefined;
        if (lease?.spec?.holderIdentity !== opts.identity) return;
        await kube.replace(LEASE, { ...lease, spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: microTime() } });
        logger.info('lease released');
      } catch (err) {
        logger.warn({ err: (err as Error).message }, 'lease not released; it expires by itself');
      }
    },
  };
}
