import type { ChannelUpdate, UpdateLog } from '../core/redis/updates';
import type { Logger } from '../core/telemetry/logger';
import type { Metrics } from '../core/telemetry/metrics';

/**
 * Publishes a committed batch's changes through the update log (sequenced, kept for
 * `resumeFrom`, then broadcast). A failed publish loses no data (it is committed; clients see
 * the seq gap and take a REST snapshot) so it is logged and counted, never retried into a
 * later batch's order.
 */
export function createPublisher(opts: { updates: UpdateLog | undefined; logger: Logger; metrics: Metrics }) {
  /** Resolves with the commit-to-publish latency in ms (0 when there was nothing to publish). */
  return async function publish(messages: ChannelUpdate[], committedAt: number): Promise<number> {
    if (!opts.updates || !messages.length) return 0;
    try {
      await opts.updates.append(messages);
    } catch (err) {
      opts.metrics.busPublishFailures.inc();
      opts.logger.warn({ err, total: messages.length }, 'bus publish failed');
      return performance.now() - committedAt;
    }
    const ms = performance.now() - committedAt;
    opts.metrics.busPublishLatency.observe(ms / 1000);
    return ms;
  };
}
