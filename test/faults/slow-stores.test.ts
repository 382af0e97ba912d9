import { randomBytes } from 'node:crypto';
import { HIGH_LIMITS, testWallet, walletHeaders } from '../support/api';
import { createTestDatabase } from '../support/pg';
import { spawnApi, tenantEnv } from '../support/processes';
import { TEST_REDIS_URL } from '../support/redis';
import { waitFor } from '../support/tables';
import { startFreezableProxy } from '../support/tcp-proxy';
import { get, OUTAGE_MS, report, startLoad, until, type Outcome } from './support';

const TIMEOUT_MS = 2_000;
// Well under TIMEOUT_MS: a read waits up to this long on a hung Redis (its rate-limit command)
// before the per-process limiter answers, then queries PostgreSQL. With 1,000 against 1,500 a
// hung Redis turned reads into 504s here (they took 1.5–1.7 s): see docs/operations.md.
const REDIS_TIMEOUT_MS = 500;

it('latency and hung connections to PostgreSQL and Redis through a proxy: slow answers stay 200, hung PostgreSQL reads answer 504 TIMEOUT at REQUEST_TIMEOUT_MS, a hung Redis turns signed requests into 503 and leaves reads alone, and both pools recover', async () => {
  const tdb = await createTestDatabase();
  const pg = new URL(tdb.url);
  const pgProxy = await startFreezableProxy({ host: pg.hostname, port: Number(pg.port || 5432) });
  const redis = new URL(TEST_REDIS_URL);
  const redisProxy = await startFreezableProxy({ host: redis.hostname, port: Number(redis.port || 6379) });
  const dbUrl = new URL(tdb.url);
  dbUrl.port = new URL(pgProxy.url).port;
  const api = spawnApi(
    tenantEnv(dbUrl.toString(), { REDIS_URL: redisProxy.url, REQUEST_TIMEOUT_MS: String(TIMEOUT_MS), REDIS_COMMAND_TIMEOUT_MS: String(REDIS_TIMEOUT_MS), ...HIGH_LIMITS }),
  );
  try {
    const port = await api.port;
    const wallet = testWallet();
    const reads = startLoad(3, () => get(port, '/api/v1/markets?limit=5'));
    const signed = startLoad(1, () => get(port, '/api/v1/positions', walletHeaders(wallet, 'GET /positions', { nonce: randomBytes(12).toString('hex') })));
    const phase = async (name: string, ms: number, act: () => void) => {
      act();
      const from = Date.now();
      await until(ms);
      return { name, from, to: Date.now() };
    };
    const inPhase = (outcomes: Outcome[], p: { from: number; to: number }) => outcomes.filter((o) => o.at - o.ms > p.from && o.at <= p.to);

    const slow = await phase('latency', OUTAGE_MS / 2, () => {
      pgProxy.delay(100);
      redisProxy.delay(100);
    });
    const hungPg = await phase('PostgreSQL hung', OUTAGE_MS, () => {
      pgProxy.delay(0);
      redisProxy.delay(0);
      pgProxy.freeze();
    });
    const thawedPgAt = Date.now();
    pgProxy.thaw();
    const pgBack = await waitFor('a read answered 200', async () => reads.after(thawedPgAt).find((o) => o.status === 200 && o.at - o.ms >= thawedPgAt), 60_000);
    const hungRedis = await phase('Redis hung', OUTAGE_MS, () => redisProxy.freeze());
    const thawedRedisAt = Date.now();
    redisProxy.thaw();
    const redisBack = await waitFor('a signed request answered 200', async () => signed.after(thawedRedisAt).find((o) => o.status === 200 && o.at - o.ms >= thawedRedisAt), 60_000);
    const [readOutcomes, signedOutcomes] = [await reads.stop(), await signed.stop()];

    const all = [...readOutcomes, ...signedOutcomes];
    const slowOnes = inPhase(all, slow);
    const pgHung = inPhase(readOutcomes, hungPg);
    const redisHungReads = inPhase(readOutcomes, hungRedis);
    const redisHungSigned = inPhase(signedOutcomes, hungRedis);
    // Errors: anything the phase does not call for.
    const label = (phaseName: string, list: Outcome[]) => list.map((o) => ({ ...o, body: `${phaseName} (${Math.round(o.ms)} ms): ${o.body}` }));
    const errors = [
      ...label('latency', slowOnes.filter((o) => o.status !== 200)),
      // A read the hot cache still holds is served from memory (200) without touching PostgreSQL.
      ...label('PostgreSQL hung', pgHung.filter((o) => o.status !== 504 && o.status !== 200)),
      ...label('Redis hung, read', redisHungReads.filter((o) => o.status !== 200)),
      ...label('Redis hung, signed', redisHungSigned.filter((o) => o.status !== 503)),
    ];
    const timedOut = pgHung.filter((o) => o.status === 504);
    const slowest504 = Math.max(0, ...timedOut.map((o) => o.ms));
    report({
      scenario: 'Latency / hung PostgreSQL and Redis: 504 at timeout, 503 signed, recovery',
      requests: all.length,
      errors: errors.length,
      dataLost: 0,
      recoveryMs: Math.max(pgBack.at - thawedPgAt, redisBack.at - thawedRedisAt),
      note: `100 ms latency: ${slowOnes.length} answered 200; PG hung: ${timedOut.length}×504 (slowest ${Math.round(slowest504)} ms, REQUEST_TIMEOUT_MS ${TIMEOUT_MS}), ${pgHung.length - timedOut.length}×200 from the hot cache; Redis hung (REDIS_COMMAND_TIMEOUT_MS ${REDIS_TIMEOUT_MS}): ${redisHungSigned.length} signed 503, ${redisHungReads.length} reads 200`,
    });
    expect(errors.map((o) => `${o.status} ${o.body}`)).toEqual([]);
    expect(timedOut.length).toBeGreaterThan(0);
    expect(JSON.parse(timedOut[0]!.body)).toEqual({ error: expect.any(String), code: 'TIMEOUT' });
    expect(redisHungSigned.length).toBeGreaterThan(0);
    expect(redisHungReads.length).toBeGreaterThan(0);
  } finally {
    api.child.kill('SIGKILL');
    await api.exited;
    await Promise.all([pgProxy.close(), redisProxy.close()]);
    await tdb.drop();
  }
});
