// The publisher of `npm run bench -- ws`, in its own process (as the indexer is): publishes
// `rate` updates/s for `seconds` on one tick per 10 ms and reports when each seq left. What is
// owed follows the clock, not the tick count, so a starved process (a loaded machine delays its
// ticks) still offers every target the same number of updates, in bursts.
import { createRedis, redisReady } from '../../core/redis/client';
import { createKeys } from '../../core/redis/keys';
import { createRedisUpdateLog } from '../../core/redis/updates';

export interface PublishJob {
  /** `api`: through the indexer's update log; `raw`: a pre-serialized frame on a plain channel. */
  mode: 'api' | 'raw';
  rate: number;
  seconds: number;
  firstSeq: number;
  channel: string;
  rawChannel: string;
  tenant: string;
}

const redis = createRedis(process.env.REDIS_URL!);
const now = () => performance.timeOrigin + performance.now();

process.on('message', async (job: PublishJob) => {
  await redisReady(redis);
  const updates = createRedisUpdateLog({ redis, keys: createKeys(job.tenant) });
  const sent: [number, number][] = [];
  let seq = job.firstSeq;
  const start = now();
  const total = Math.round(job.rate * job.seconds);
  await new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      const elapsed = now() - start;
      const due = Math.min(total, Math.floor((job.rate * elapsed) / 1000));
      const seqs: number[] = [];
      while (seq - job.firstSeq < due) seqs.push(seq++);
      if (elapsed >= job.seconds * 1000) {
        clearInterval(tick);
        resolve();
      }
      if (!seqs.length) return;
      const t = now();
      for (const s of seqs) sent.push([s, t]);
      const data = (s: number) => ({ marketId: '1', bestBid: 4000 + (s % 1000), bestAsk: 6000 });
      if (job.mode === 'api') {
        void updates.append(seqs.map((s) => ({ channel: job.channel, slot: s, data: data(s) })));
      } else {
        const p = redis.pipeline();
        for (const s of seqs) {
          p.publish(job.rawChannel, JSON.stringify({ type: 'update', channel: job.channel, data: data(s), timestamp: Date.now(), seq: s, slot: s }));
        }
        void p.exec();
      }
    }, 10);
  });
  process.send!({ type: 'done', sent, start });
});
process.on('disconnect', () => process.exit(0));
process.send!({ type: 'listening', port: 1 });
