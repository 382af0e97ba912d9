import { getEventListeners } from 'node:events';
import { createLogger } from '../../core/telemetry/logger';
import { createMetrics } from '../../core/telemetry/metrics';
import { createLeaderElector } from '../../operator/leader';
import type { KubeClient, KubeObject } from '../../operator/kube/client';

// The leader renews its Lease every third of the lease for as long as the process lives: each
// wait between renewals must leave nothing behind on the shutdown signal (a listener per renewal
// grew the process for good, and Node warned of a leak after ten).
describe('operator leader election', () => {
  it('renews many times without adding to the shutdown signal, and stops when it is aborted', async () => {
    let lease: KubeObject | undefined;
    let renewals = 0;
    const kube = {
      get: async () => lease && structuredClone(lease),
      create: async (_: unknown, o: KubeObject) => (lease = o),
      replace: async (_: unknown, o: KubeObject) => ((renewals += 1), (lease = o)),
    } as unknown as KubeClient;
    const elector = createLeaderElector({
      kube,
      namespace: 'ns',
      name: 'market-indexer-operator',
      identity: 'me',
      leaseSeconds: 0.6, // a renewal every 200 ms, the elector's shortest wait
      logger: createLogger({ level: 'silent', service: 'test', tenant: 'test' }),
      metrics: createMetrics(),
    });
    const shutdown = new AbortController();
    let leading = 0;
    const stopped = elector.run(shutdown.signal, () => (leading += 1));
    const listeners: number[] = [];
    try {
      while (renewals < 12) {
        await new Promise((r) => setTimeout(r, 50));
        listeners.push(getEventListeners(shutdown.signal, 'abort').length);
      }
    } finally {
      shutdown.abort();
    }
    await expect(stopped).resolves.toBe(true);
    expect(leading).toBe(1);
    // At most the one wait in progress listens.
    expect(Math.max(...listeners)).toBeLessThanOrEqual(1);
  });
});
