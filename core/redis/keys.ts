/**
 * Every Redis key and pub/sub channel of a tenant lives under `t:{tenant}:`, so tenants
 * sharing one Redis never see each other's nonces, counters or messages, and a tenant's
 * data can be found (and dropped) with one SCAN pattern.
 */
export function createKeys(tenant: string) {
  const prefix = `t:${tenant}:`;
  return {
    prefix,
    nonce: (scope: string, nonce: string) => `${prefix}nonce:${scope}:${nonce}`,
    /** The nonce store's marker: its id and the epoch of its last loss of state (D-102). */
    nonceEpoch: `${prefix}nonce-epoch`,
    channel: (name: string) => `${prefix}ch:${name}`,
    /** Inverse of channel(): the unprefixed name, or undefined for another tenant's channel. */
    channelName: (redisChannel: string) =>
      redisChannel.startsWith(`${prefix}ch:`) ? redisChannel.slice(prefix.length + 3) : undefined,
    rateLimitPrefix: (tier: string) => `${prefix}rl:${tier}`,
    wsConnections: (ip: string) => `${prefix}ws:ip:${ip}`,
    /**
     * A channel's update stream under the projection schema whose writer appends to it (D-410):
     * sequences start over with a schema's tables. `public` keeps the keys it always had, so a
     * running tenant's streams survive the upgrade. `{name}` is a hash tag, so the counter
     * (`streamSeq`) lives in the same Redis Cluster slot.
     */
    stream: (name: string, schema = 'public') => `${prefix}st:${schemaPart(schema)}{${name}}`,
    streamSeq: (name: string, schema = 'public') => `${prefix}st:${schemaPart(schema)}{${name}}:seq`,
  };
}

const schemaPart = (schema: string) => (schema === 'public' ? '' : `${schema}:`);

export type Keys = ReturnType<typeof createKeys>;
