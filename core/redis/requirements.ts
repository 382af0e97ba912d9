import type { Redis } from './client';

/**
 * What the service needs of its Redis (decision D-104, docs/security.md): used nonces, `/ws`
 * leases and the nonce store's marker must not be dropped to make room, and a restart must
 * bring back either everything acknowledged or nothing (a total loss is detected, D-102; a
 * partial one, such as an older snapshot, is not).
 */
export interface RedisRequirementCheck {
  /** False when Redis would not say (CONFIG refused, as managed services often do). */
  checked: boolean;
  /** What does not meet the requirements, one sentence each, saying what to set. */
  problems: string[];
}

export async function checkRedisRequirements(redis: Redis): Promise<RedisRequirementCheck> {
  let config: Record<string, string>;
  try {
    const pairs = (await redis.call('CONFIG', 'GET', '*')) as string[];
    config = {};
    for (let i = 0; i + 1 < pairs.length; i += 2) config[pairs[i]!] = pairs[i + 1]!;
  } catch {
    return { checked: false, problems: [] };
  }
  const problems: string[] = [];
  const policy = config['maxmemory-policy'];
  if (policy !== undefined && policy !== 'noeviction') {
    problems.push(`maxmemory-policy is ${policy}: set noeviction, or Redis may evict used nonces, /ws leases or the nonce store's marker under memory pressure`);
  }
  const aof = config.appendonly === 'yes';
  const fsync = config.appendfsync;
  const snapshots = (config.save ?? '').trim() !== '';
  if (aof && fsync !== 'always') {
    problems.push(`appendonly yes with appendfsync ${fsync}: a crash loses the last writes while keeping the nonce store's marker, so replays of those nonces go undetected; set appendfsync always, or run without persistence`);
  } else if (!aof && snapshots) {
    problems.push(`RDB snapshots (save "${config.save}") without an always-synced AOF: a restart restores an older state that keeps the marker; disable them (save "") or use appendonly yes with appendfsync always`);
  }
  return { checked: true, problems };
}
