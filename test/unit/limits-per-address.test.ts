import { addressTierSpecs, DEFAULT_RATE_LIMITS, RATE_LIMIT_TIERS } from '../../core/limits';
import { tenantAclRules } from '../../core/redis/acl';
import { createLru } from '../../server/limits/lru';

describe('per-address buckets of the signed tiers (D-187)', () => {
  it('hold RATE_LIMIT_WALLETS_PER_IP wallets\' worth of each tier, in its window', () => {
    const specs = addressTierSpecs(DEFAULT_RATE_LIMITS);
    expect(Object.fromEntries(RATE_LIMIT_TIERS.map((t) => [specs[t].name, specs[t].points]))).toEqual({
      public_read_per_ip: 1500,
      public_per_ip: 500,
      authenticated_per_ip: 1000,
      write_per_ip: 250,
      sensitive_per_ip: 100,
      compliance_per_ip: 25,
    });
    expect(addressTierSpecs({ ...DEFAULT_RATE_LIMITS, walletsPerIp: 1, windowMs: 10_000 }).sensitive).toEqual({ name: 'sensitive_per_ip', points: 20, windowMs: 10_000 });
  });
});

describe('the API-key caches\' LRU (D-189)', () => {
  it('drops the least recently used entry to make room; a read counts as a use', () => {
    const lru = createLru<number>(3);
    lru.set('a', 1);
    lru.set('b', 2);
    lru.set('c', 3);
    expect(lru.get('a')).toBe(1);
    lru.set('d', 4);
    expect([...lru.entries()].map(([k]) => k)).toEqual(['c', 'a', 'd']);
    expect(lru.get('b')).toBeUndefined();
    lru.set('c', 30);
    lru.delete('a');
    expect([...lru.entries()]).toEqual([
      ['d', 4],
      ['c', 30],
    ]);
    expect(lru.size).toBe(2);
    expect(() => createLru(0)).toThrow('at least one entry');
  });
});

describe('a tenant\'s Redis ACL rules (D-193)', () => {
  it('name its keys and channels, each subscribed pattern literally, and no admin or dangerous command', () => {
    const rules = tenantAclRules('acme');
    expect(rules.slice(0, 7)).toEqual(['reset', 'on', '~t:acme:*', 'resetchannels', '&t:acme:*', '&t:acme:ch:market:*', '&t:acme:ch:orderbook:*']);
    expect(rules.indexOf('-@dangerous')).toBeGreaterThan(rules.indexOf('+@keyspace'));
    expect(rules.slice(-14, -10)).toEqual(['-scan', '-randomkey', '+info', '+time']);
    // Issue 41: what names or acts on other tenants' keys, channels and scripts, after the categories.
    expect(rules.slice(-10)).toEqual(['-client|tracking', '-client|caching', '-pubsub', '-script|flush', '-script|kill', '-script|debug', '-function', '-fcall', '-fcall_ro', '-dbsize']);
  });
});
