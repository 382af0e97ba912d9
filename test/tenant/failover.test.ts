import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { startHaPostgres, type HaPostgres } from '../../local/tenant/ha-postgres';
import { renderTenant } from '../../local/tenant/manifests';
import { startTenant, withHarnessOverlay, type RunningTenant } from '../../local/tenant/runner';
import { positionsSigner, resumingClient, steadyReader, storedUpdate, tablesAgainstUninterrupted, type ResumingClient } from './upgrade-clients';

/**
 * "The primary is lost" (docs/operations.md): staging's tenant alpha on a HA PostgreSQL
 * (local/tenant/ha-postgres.ts: Patroni + etcd + HAProxy, standing for CloudNativePG), the
 * indexer on its rw front, the API reading from its ro front (DATABASE_READ_URL, D-510), a
 * steady reader through the Ingress and 200 /ws clients, the writer indexing. The primary's node
 * is killed (Patroni, the postmaster and its backends SIGKILLed at once). Judged by what the
 * clients saw and by the tables; then the same on asynchronous replication, where what the
 * database lost is measured.
 */
const OVERLAY = {
  settings: { WS_MAX_CONNECTIONS_PER_IP: 1000, PUBLIC_READ_RATE_LIMIT_MAX_REQUESTS: 100000, RATE_LIMIT_MAX_REQUESTS: 100000, RATE_LIMIT_WALLETS_PER_IP: 1000 },
};
const DOMAIN = 'alpha.staging.markets.example';
const CLIENTS = 200;
const MIN = 60_000;
const LEASE_MS = 10_000;
const KUBELET_BACKOFF_MS = 10_000;

const cursorOn = async (url: string): Promise<{ slot: number; recovery: boolean } | undefined> => {
  const c = new Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
  c.on('error', () => {});
  try {
    await c.connect();
    const { rows } = await c.query<{ slot: string; r: boolean }>('SELECT last_processed_slot AS slot, pg_is_in_recovery() AS r FROM indexer_cursor WHERE id = 1');
    return rows[0] ? { slot: Number(rows[0].slot), recovery: rows[0].r } : undefined;
  } catch {
    return undefined;
  } finally {
    await c.end().catch(() => {});
  }
};

const until = async <T>(what: string, check: () => Promise<T | undefined | false>, ms: number, everyMs = 100): Promise<T> => {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`gave up after ${ms / 1000} s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
};

describe.each([
  { replication: 'synchronous', synchronous: true },
  { replication: 'asynchronous', synchronous: false },
])('the primary is lost ($replication replication)', ({ replication, synchronous }) => {
  const database = `mi_failover_${synchronous ? 's' : 'a'}_${process.pid}`;
  let runDir: string;
  let ha: HaPostgres;
  let t: RunningTenant;
  let clients: ResumingClient[] = [];
  let reader: ReturnType<typeof steadyReader> | undefined;

  beforeAll(async () => {
    runDir = mkdtempSync(path.join(os.tmpdir(), 'mi-failover-'));
    ha = await startHaPostgres({ instances: 3, synchronous });
    await ha.healthy(2);
    t = await startTenant({
      env: 'staging',
      tenant: 'alpha',
      overlay: OVERLAY,
      runDir,
      database,
      fresh: true,
      adminDatabaseUrl: ha.rwUrl(),
      containerEnv: { api: { DATABASE_READ_URL: ha.roUrl(database) } },
    });
    await t.allReady();
  }, 5 * MIN);
  afterAll(async () => {
    clients.forEach((c) => c.stop());
    await reader?.stop();
    await t?.stop();
    await ha?.stop();
    rmSync(runDir, { recursive: true, force: true });
  }, 2 * MIN);

  it(`keeps serving reads and /ws, and the writer resumes on the promoted primary; the tables end as an uninterrupted run`, async () => {
    const wsUrl = `${t.frontUrl.replace('http', 'ws')}/ws`;
    const cfg = (renderTenant('staging', 'alpha', withHarnessOverlay(OVERLAY)).objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name.endsWith('-api')) as unknown as { data: Record<string, string> }).data;
    const signer = positionsSigner({ seed: 1, domain: cfg.PUBLIC_HOSTS?.split(',')[0] ?? DOMAIN, chain: cfg.CHAIN_ID ?? 'solana-mainnet' });
    const epoch = Math.floor(Date.now() / MIN);
    const channels = Array.from({ length: CLIENTS }, (_, i) => [...Array.from({ length: 4 }, (_, k) => `orderbook:${epoch + k}`), `positions:${signer.wallets[i % signer.wallets.length]}`]);
    clients = channels.map((chs) => resumingClient(wsUrl, chs, signer.sign));
    for (let i = 0; i < clients.length; i += 20) await Promise.all(clients.slice(i, i + 20).map((c) => c.connect()));
    reader = steadyReader(`${t.frontUrl}/api/v1/markets?limit=1`);

    // The writer indexing, on the primary, and the replicas following it.
    const first = await until('the writer committing', async () => {
      const c = await cursorOn(ha.rwUrl(database));
      return c && c.slot > 0 ? c : undefined;
    }, 2 * MIN);
    await until('a later commit', async () => ((await cursorOn(ha.rwUrl(database)))?.slot ?? 0) > first.slot && true, MIN);
    const okBefore = reader.ok();
    await until('reads served', async () => reader!.ok() > okBefore + 20, MIN, 200);

    // The primary's node is lost.
    const old = (await ha.leader())!;
    const lastSeen = (await cursorOn(ha.rwUrl(database)))!.slot;
    const killedAt = Date.now();
    ha.kill(old);
    // The promoted primary, as soon as it answers: what it holds is what survived.
    const promoted = await until('a standby promoted', async () => {
      const leader = await ha.leader();
      if (!leader || leader === old) return undefined;
      const c = await cursorOn(ha.rwUrl(database));
      return c && !c.recovery ? { leader, slot: c.slot, at: Date.now() } : undefined;
    }, 2 * MIN);
    const committedAgain = await until('the writer committing on the promoted primary', async () => {
      const c = await cursorOn(ha.rwUrl(database));
      return c && !c.recovery && c.slot > Math.max(promoted.slot, lastSeen) ? Date.now() : undefined;
    }, 3 * MIN);
    const readsAfter = reader.ok();
    await until('reads after the failover', async () => reader!.ok() > readsAfter + 20, MIN, 200);

    // Every client reaches what the stream holds now, with every seq once.
    const latest = new Map<string, { latestSeq: number; data: unknown }>();
    for (const c of [...new Set(channels.flat())]) {
      const seq = Math.max(...clients.filter((_, i) => channels[i]!.includes(c)).map((x) => x.last(c)));
      if (seq > 0) latest.set(c, await storedUpdate(wsUrl, c, seq - 1, signer.sign(c)));
    }
    await until('every /ws client caught up', async () => !clients.some((c, i) => channels[i]!.some((ch) => latest.has(ch) && c.last(ch) < latest.get(ch)!.latestSeq)), MIN, 200);
    const tallies = clients.flatMap((c) => c.tally());
    const gaps = tallies.reduce((n, x) => n + x.gaps, 0);
    const duplicates = tallies.reduce((n, x) => n + x.duplicates, 0);
    const updates = tallies.reduce((n, x) => n + x.received, 0);
    const tables = await tablesAgainstUninterrupted({ databaseUrl: ha.rwUrl(database), chainDir: path.join(t.runDir, 'chain'), programId: cfg.PROGRAM_ID! });
    const lost = Math.max(0, lastSeen - promoted.slot);
    process.stdout.write(
      `failover (${replication}): ${old} killed; ${promoted.leader} primary after ${((promoted.at - killedAt) / 1000).toFixed(1)} s, the writer committing on it after ${((committedAgain - killedAt) / 1000).toFixed(1)} s (TTL ${ha.ttlSeconds} s + lease ${LEASE_MS / 1000} s); committed slot before the kill ${lastSeen}, on the promoted primary ${promoted.slot} (${lost} slots lost at the database); REST ${reader.ok()} ok, ${reader.failures.length} failed; /ws ${CLIENTS} clients, ${updates} updates, ${gaps} gaps, ${duplicates} duplicates; tables at slot ${tables.slot}: ${tables.differing.length} differing\n`,
    );
    expect(reader.failures).toEqual([]);
    expect(clients.flatMap((c) => c.errors)).toEqual([]);
    expect({ gaps, duplicates }).toEqual({ gaps: 0, duplicates: 0 });
    // Synchronous: a commit returned only once a standby had it, so nothing committed is lost.
    if (synchronous) expect(lost).toBe(0);
    // Patroni's TTL, then the writer's lease; a writer that lost its session exits (D-110) and the
    // kubelet's first back-off (10 s) restarts it, which is what this measures beyond TTL + lease.
    expect(committedAgain - killedAt).toBeLessThanOrEqual(ha.ttlSeconds * 1000 + LEASE_MS + KUBELET_BACKOFF_MS);
    expect(tables.differing).toEqual([]);
  }, 10 * MIN);
});
