import type { ChannelUpdate, UpdateLog } from '../core/redis/updates';
import type { Logger } from '../core/telemetry/logger';
import type { Metrics } from '../core/telemetry/metrics';

/**
 * What one update sets: a market field, a market's top of book, or a wallet's position in one
 * market. A later update of the same key supersedes an earlier one.
 */
const stateKey = (u: ChannelUpdate) => `${u.channel}\u0000${String(u.data.field ?? '')}\u0000${String(u.data.marketId ?? '')}`;

/**
 * Publishes a committed batch's changes through the update log (sequenced, kept for
 * `resumeFrom`, then broadcast), in commit order. A publish that fails (Redis down or not
 * answering) is logged and counted, and the indexer goes on: the data is committed. Its
 * updates are not dropped: they are kept, reduced to the latest update of each key, and sent
 * ahead of the next batch's (or by the indexer's heartbeat, if that comes first), so once Redis
 * is back every /ws client ends on the committed values (unless this process stops first).
 * Left out instead, they would have no seq of their own: nothing would tell a client it missed
 * them. Memory is bounded by the keys that changed while Redis was away.
 */
export function createPublisher(opts: {
  updates: UpdateLog | undefined;
  /** The projection schema the indexer writes: its updates are sequenced under it (D-410). */
  schema: string;
  /**
   * Whether its updates reach anyone: a build not yet switched to publishes nothing (D-411), since
   * no API replica delivers its schema's updates and a backfill would flood the bus for nobody.
   */
  publishing?: () => boolean;
  logger: Logger;
  metrics: Metrics;
}) {
  const unsent = new Map<string, ChannelUpdate>();
  let failures = 0;
  const keep = (messages: ChannelUpdate[]) => {
    for (const m of messages) {
      const k = stateKey(m);
      // Re-inserted at the end: the map keeps the order of the latest updates.
      unsent.delete(k);
      unsent.set(k, m);
    }
  };
  /**
   * Resolves with the commit-to-publish latency in ms (0 when there was nothing to publish).
   * `traceparent` goes into the envelopes (the publish span's, D-86).
   */
  async function publish(messages: ChannelUpdate[], committedAt: number, traceparent?: string): Promise<number> {
    if (!opts.updates || (!messages.length && !unsent.size)) return 0;
    if (opts.publishing && !opts.publishing()) return 0;
    let batch = messages;
    if (unsent.size) {
      keep(messages);
      batch = [...unsent.values()];
    }
    try {
      await opts.updates.append(batch, traceparent, opts.schema);
      unsent.clear();
    } catch (err) {
      if (!unsent.size) keep(messages);
      failures += 1;
      opts.metrics.busPublishFailures.inc();
      opts.logger.warn({ err, total: messages.length, unsent: unsent.size }, 'bus publish failed; its updates go out with the next batch');
      return performance.now() - committedAt;
    }
    const ms = performance.now() - committedAt;
    opts.metrics.busPublishLatency.observe(ms / 1000);
    return ms;
  }
  /** `publish([])` sends what failed publishes kept; `unsent()` says how many updates that is. */
  return { publish, unsent: () => unsent.size, failures: () => failures };
}
