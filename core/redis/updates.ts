import type { Bus } from './bus';
import { sendInOrder, type Redis } from './client';
import type { Keys } from './keys';

/** One live change of a channel, as the indexer produces it after a commit. */
export interface ChannelUpdate {
  channel: string;
  /** Highest slot the change reflects. */
  slot: number;
  data: Record<string, unknown>;
}

/**
 * What travels on the bus and sits in a channel's stream: `{"seq":N,"slot":S,"data":{...}}`.
 * `seq` is per channel and grows by exactly 1 per update, so a client can see a gap. With
 * tracing on, `tp` is the W3C `traceparent` of the indexer's publish span, so each API
 * replica's fan-out of the update joins the trace of the commit that produced it (D-86);
 * clients never see it.
 */
export interface UpdateEnvelope {
  seq: number;
  slot: number;
  tp?: string;
  /**
   * The projection schema whose writer sent it, when not `public` (D-410): an API replica
   * delivers only the live schema's updates, so a writer still running on the schema switched
   * away from never mixes its sequence into the new one. Clients never see it.
   */
  p?: string;
  data: Record<string, unknown>;
}

export type ResumeResult =
  /** Every update after the resume point (possibly none), oldest first. */
  | { ok: true; entries: UpdateEnvelope[]; latest: number }
  /** The stream no longer holds the updates right after the resume point (or never did). */
  | { ok: false; latest: number };

/**
 * Sequenced live updates (decision D-53): the single writer appends; every API replica
 * receives them on the bus and can replay a channel's recent past for `resumeFrom`.
 */
export interface UpdateLog {
  /**
   * Numbers each update within its channel, keeps it in the channel's capped stream and
   * publishes it, in order; `traceparent` (of the publishing span) goes into every envelope.
   */
  append(updates: ChannelUpdate[], traceparent?: string, schema?: string): Promise<void>;
  /** The updates of `channel` with seq greater than `after`, in the log's schema. */
  since(channel: string, after: number): Promise<ResumeResult>;
}

export interface UpdateLogOptions {
  /** Updates kept per channel for `resumeFrom` (at least; Redis trims approximately). */
  keep: number;
  /** A channel quiet for this long forgets its stream and restarts at seq 1. */
  idleTtlSeconds: number;
  /**
   * The projection schema whose sequences `since` reads and `append` writes unless told
   * otherwise (D-410): the API's is the live schema (it follows the pointer), an indexer
   * appends under the schema it writes. `public` by default.
   */
  schema: () => string;
}

export const DEFAULT_UPDATE_LOG: UpdateLogOptions = { keep: 1_000, idleTtlSeconds: 86_400, schema: () => 'public' };

/** The schema an envelope was sent under. */
export const envelopeSchema = (e: UpdateEnvelope): string => e.p ?? 'public';

const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;
const SCHEMA = /^(public|p[1-9][0-9]{0,8})$/;

/** A schema name goes into the JSON the script writes and into keys: only projection schemas' names. */
function checkedSchema(schema: string): string {
  if (!SCHEMA.test(schema)) throw new Error(`not a projection schema: ${JSON.stringify(schema)} (public or p<version>)`);
  return schema;
}

export function parseEnvelope(message: string): UpdateEnvelope | undefined {
  try {
    const v = JSON.parse(message) as Partial<UpdateEnvelope>;
    if (typeof v.seq === 'number' && typeof v.slot === 'number' && v.data && typeof v.data === 'object' && (v.tp === undefined || typeof v.tp === 'string') && (v.p === undefined || typeof v.p === 'string')) {
      return v as UpdateEnvelope;
    }
  } catch {
    // not ours: ignored by the caller
  }
  return undefined;
}

// Counter, stream entry and PUBLISH happen in one atomic script so that the seq order, the
// stream order and the delivery order are the same on every replica. The stream entry id is
// `<seq>-0`, which lets XRANGE answer "after seq N" directly. If the counter vanished while
// the stream survived (a manual DEL, an eviction), the stale stream is dropped rather than
// refusing the write: subscribers see seq go back and treat it as a gap. The two keys share a
// hash tag (one Redis Cluster slot); the pub/sub channel is an argument, not a key.
const APPEND_SCRIPT = `
local seq = redis.call('INCR', KEYS[1])
local tp = ''
if ARGV[6] ~= '' then tp = ',"tp":"' .. ARGV[6] .. '"' end
local p = ''
if ARGV[7] ~= '' then p = ',"p":"' .. ARGV[7] .. '"' end
local env = '{"seq":' .. seq .. ',"slot":' .. ARGV[1] .. tp .. p .. ',"data":' .. ARGV[2] .. '}'
local added = redis.pcall('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], seq .. '-0', 'u', env)
if type(added) == 'table' and added.err then
  redis.call('DEL', KEYS[2])
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], seq .. '-0', 'u', env)
end
redis.call('EXPIRE', KEYS[1], ARGV[4])
redis.call('EXPIRE', KEYS[2], ARGV[4])
redis.call('PUBLISH', ARGV[5], env)
return seq
`;

type RedisWithAppend = Redis & {
  appendUpdate(seqKey: string, streamKey: string, slot: string, data: string, keep: string, ttl: string, channel: string, traceparent: string, schema: string): Promise<number>;
};

export function createRedisUpdateLog(opts: { redis: Redis; keys: Keys } & Partial<UpdateLogOptions>): UpdateLog {
  const { keys } = opts;
  const keep = String(opts.keep ?? DEFAULT_UPDATE_LOG.keep);
  const ttl = String(opts.idleTtlSeconds ?? DEFAULT_UPDATE_LOG.idleTtlSeconds);
  const redis = opts.redis as RedisWithAppend;
  if (typeof redis.appendUpdate !== 'function') redis.defineCommand('appendUpdate', { numberOfKeys: 2, lua: APPEND_SCRIPT });
  const logSchema = opts.schema ?? DEFAULT_UPDATE_LOG.schema;

  return {
    async append(updates, traceparent, inSchema) {
      if (!updates.length) return;
      // Hex digits and dashes only: safe inside the JSON the script writes.
      const tp = traceparent && TRACEPARENT.test(traceparent) ? traceparent : '';
      const schema = checkedSchema(inSchema ?? logSchema());
      const p = schema === 'public' ? '' : schema;
      // One pipeline per batch on one Redis: one round trip, and Redis runs the scripts in this
      // order. On a Cluster each channel's scripts still run in order (same key, same node).
      await sendInOrder<Pick<RedisWithAppend, 'appendUpdate'>>(
        redis,
        updates.map((u) => (c) => c.appendUpdate(keys.streamSeq(u.channel, schema), keys.stream(u.channel, schema), String(u.slot), JSON.stringify(u.data), keep, ttl, keys.channel(u.channel), tp, p)),
      );
    },
    async since(channel, after) {
      const schema = logSchema();
      const [[, latestRaw], [, first], [, rest]] = (await redis
        .multi()
        .get(keys.streamSeq(channel, schema))
        .xrange(keys.stream(channel, schema), '-', '+', 'COUNT', 1)
        .xrange(keys.stream(channel, schema), `(${after}-0`, '+')
        .exec()) as [[null, string | null], [null, [string, string[]][]], [null, [string, string[]][]]];
      const latest = Number(latestRaw ?? 0);
      if (after >= latest) return after === latest ? { ok: true, entries: [], latest } : { ok: false, latest };
      const oldest = first[0] ? Number(first[0][0].split('-')[0]) : Infinity;
      if (oldest > after + 1) return { ok: false, latest };
      const entries = rest.map(([, fields]) => parseEnvelope(fields[1] ?? '')).filter((e): e is UpdateEnvelope => e !== undefined);
      return { ok: true, entries, latest };
    },
  };
}

/** Single-process twin (embedded mode): the same contract over the in-memory bus. */
export function createMemoryUpdateLog(opts: { bus: Bus } & Partial<UpdateLogOptions>): UpdateLog {
  const keep = opts.keep ?? DEFAULT_UPDATE_LOG.keep;
  const idleMs = (opts.idleTtlSeconds ?? DEFAULT_UPDATE_LOG.idleTtlSeconds) * 1000;
  const logSchema = opts.schema ?? DEFAULT_UPDATE_LOG.schema;
  // Keyed by schema and channel, as the Redis keys are.
  const channels = new Map<string, { seq: number; entries: UpdateEnvelope[]; lastAt: number }>();
  const keyOf = (schema: string, channel: string) => `${schema}\u0000${channel}`;
  let sweptAt = Date.now();
  // Like the Redis TTL: a quiet channel (a wallet that stopped trading) is forgotten.
  const sweep = (now: number) => {
    if (now - sweptAt < Math.min(idleMs, 60_000)) return;
    sweptAt = now;
    for (const [name, c] of channels) if (now - c.lastAt > idleMs) channels.delete(name);
  };
  return {
    async append(updates, traceparent, inSchema) {
      const now = Date.now();
      sweep(now);
      const schema = checkedSchema(inSchema ?? logSchema());
      for (const u of updates) {
        const key = keyOf(schema, u.channel);
        let c = channels.get(key);
        if (!c) channels.set(key, (c = { seq: 0, entries: [], lastAt: now }));
        c.lastAt = now;
        const env: UpdateEnvelope = { seq: ++c.seq, slot: u.slot, ...(traceparent ? { tp: traceparent } : {}), ...(schema === 'public' ? {} : { p: schema }), data: u.data };
        c.entries.push(env);
        if (c.entries.length > keep) c.entries.splice(0, c.entries.length - keep);
        await opts.bus.publish(u.channel, JSON.stringify(env));
      }
    },
    async since(channel, after) {
      const c = channels.get(keyOf(logSchema(), channel));
      const latest = c?.seq ?? 0;
      if (after >= latest) return after === latest ? { ok: true, entries: [], latest } : { ok: false, latest };
      const oldest = c?.entries[0]?.seq ?? Infinity;
      if (oldest > after + 1) return { ok: false, latest };
      return { ok: true, entries: c!.entries.filter((e) => e.seq > after), latest };
    },
  };
}
