import type { Bus } from '../core/redis/bus';
import type { Logger } from '../core/telemetry/logger';
import type { Metrics } from '../core/telemetry/metrics';
import type { BusMessage } from './project';

/**
 * Publishes a committed batch's changes. Each message is serialized once. A failed publish
 * loses no data (it is committed; clients reconcile with a REST snapshot after a gap) so it
 * is logged and counted, never retried into a later batch's order.
 */
export function createPublisher(opts: { bus: Bus | undefined; logger: Logger; metrics: Metrics }) {
  /** Resolves with the commit-to-publish latency in ms (0 when there was nothing to publish). */
  return async function publish(messages: BusMessage[], committedAt: number): Promise<number> {
    if (!opts.bus || !messages.length) return 0;
    const results = await Promise.allSettled(
      messages.map((m) => opts.bus!.publish(m.channel, JSON.stringify(m.data))),
    );
    const failed = results.filter((r) => r.status === 'rejected').length;
    if (failed) opts.logger.warn({ failed, total: messages.length }, 'bus publish failed');
    const ms = performance.now() - committedAt;
    opts.metrics.busPublishLatency.observe(ms / 1000);
    return ms;
  };
}
