import { storeHost, unreachableLine } from '../../core/store-reach';

describe('naming an unreachable store', () => {
  it('gives host:port of a URL and never its credentials', () => {
    expect(storeHost('DATABASE_URL', 'postgres://app:s3cret@db.internal/market')).toBe('db.internal:5432');
    expect(storeHost('DATABASE_URL', 'postgres://app@/market?host=/var/run/postgresql')).toBe('/var/run/postgresql:5432');
    expect(storeHost('REDIS_URL', 'rediss://mi-t:s3cret@redis.internal:6380/0')).toBe('redis.internal:6380');
    expect(storeHost('REDIS_URL', 'redis+cluster://mi-t:s3cret@a:7000,b:7001')).toBe('a:7000,b:7001');
    expect(storeHost('REDIS_URL', 'http://nope')).toBe('an invalid URL');
  });

  it('drops a URL\'s credentials that a driver message quotes', () => {
    const line = unreachableLine('DATABASE_URL', 'postgres://app:s3cret@db:5433/x', 'could not connect to postgres://app:s3cret@db:5433/x');
    expect(line).toBe('DATABASE_URL (db:5433) cannot be reached: could not connect to postgres://db:5433/x');
  });
});
