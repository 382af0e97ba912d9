import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RELEASE_VERSION } from '../../core/release';
import { previousRelease, readChangelog } from '../../local/release/changelog';
import { readRenderedTenant, renderTenant, type RenderedTenant } from '../../local/tenant/manifests';
import { prepareRelease, type PreparedRelease } from '../../local/tenant/release';
import { rollTenant, type DeploymentRollout } from '../../local/tenant/rollout';
import { ROOT, startTenant, withHarnessOverlay, type RunningTenant } from '../../local/tenant/runner';
import { dropDatabase } from '../../local/tenant/stores';
import { ADMIN_DATABASE_URL } from '../support/env';
import { positionsSigner, resumingClient, steadyReader, storedUpdate, tablesAgainstUninterrupted, writerWatch, type ResumingClient } from './upgrade-clients';

/**
 * Day 2 on staging's tenant alpha (docs/deploy.md#upgrading): the tenant runs the previous
 * release (CHANGELOG.md's, built from a git worktree at its commit, its own rendered manifests),
 * is rolled to this release as the Deployment controller rolls it, then rolled back, with clients
 * connected throughout: a steady reader through the Ingress (no failed request), and 200 /ws
 * clients on order-book and positions channels that resume after the server closes them (every
 * seq exactly once, the final update the stream keeps). After each roll the tables equal the same
 * chain indexed without interruption.
 *
 * The values are what a tenant may set: limits that 200 clients from one address and a reader at
 * 10 requests a second do not reach (the Ingress's front is one address).
 */
const OVERLAY = {
  settings: { WS_MAX_CONNECTIONS_PER_IP: 1000, PUBLIC_READ_RATE_LIMIT_MAX_REQUESTS: 100000, RATE_LIMIT_MAX_REQUESTS: 100000, RATE_LIMIT_WALLETS_PER_IP: 1000 },
};
const DOMAIN = 'alpha.staging.markets.example';
const CLIENTS = 200;
const MIN = 60_000;

describe('a release rolled out and rolled back under load (issue 38)', () => {
  const changelog = readChangelog(ROOT);
  const previous = previousRelease(changelog, RELEASE_VERSION);
  const database = `mi_e2e_upgrade_${process.pid}`;
  let runDir: string;
  let release: PreparedRelease;
  let older: RenderedTenant;
  let current: RenderedTenant;
  let t: RunningTenant;
  let clients: ResumingClient[] = [];
  let reader: ReturnType<typeof steadyReader> | undefined;
  let writer: ReturnType<typeof writerWatch> | undefined;
  let signer: ReturnType<typeof positionsSigner>;
  let channels: string[][] = [];

  beforeAll(async () => {
    runDir = mkdtempSync(path.join(os.tmpdir(), 'mi-upgrade-'));
    release = await prepareRelease({ root: ROOT, version: previous.version, commit: previous.commit!, cacheDir: path.join(ROOT, '.data', 'releases'), env: 'staging', overlay: withHarnessOverlay(OVERLAY) });
    older = readRenderedTenant(release.manifestsDir, 'alpha');
    current = renderTenant('staging', 'alpha', withHarnessOverlay(OVERLAY));
    t = await startTenant({ env: 'staging', tenant: 'alpha', manifestsDir: release.manifestsDir, code: release.code, runDir, database, fresh: true, adminDatabaseUrl: ADMIN_DATABASE_URL });
    await t.allReady();
  }, 10 * MIN);
  afterAll(async () => {
    clients.forEach((c) => c.stop());
    await reader?.stop();
    await writer?.stop();
    await t?.stop();
    await dropDatabase(ADMIN_DATABASE_URL, database);
    rmSync(runDir, { recursive: true, force: true });
  }, 2 * MIN);

  const wsUrl = () => `${t.frontUrl.replace('http', 'ws')}/ws`;
  const settings = (r: RenderedTenant) => (r.objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name.endsWith('-api')) as unknown as { data: Record<string, string> }).data;

  const programIdOf = (r: RenderedTenant) =>
    (r.objects.filter((o) => o.kind === 'ConfigMap') as unknown as { data?: Record<string, string> }[]).map((c) => c.data?.PROGRAM_ID).find((x) => x !== undefined)!;

  /** Rolls the tenant with every client connected; then judges the clients, the writer's hand-over and the tables. */
  async function rollAndJudge(phase: string, to: RenderedTenant, code: Parameters<typeof rollTenant>[0]['code'], revision: string) {
    const okBefore = reader!.ok();
    writer!.reset();
    const reconnectsBefore = clients.reduce((n, c) => n + c.reconnects(), 0);
    const rolled: DeploymentRollout[] = await rollTenant({ tenant: t, to, code, revision });
    // As rendered: API replicas 2, maxSurge 1, maxUnavailable 0 (never fewer than 2 Ready, never more than 3 pods).
    for (const r of rolled) {
      expect(r.mostPods).toBeLessThanOrEqual(r.replicas + r.maxSurge);
      expect(r.fewestReady).toBeGreaterThanOrEqual(r.replicas - r.maxUnavailable);
      expect(r.steps.filter((s) => s.action === 'create').length).toBe(r.replicas);
    }
    expect(t.pods.map((p) => p.name).sort()).toEqual(['market-indexer-api', 'market-indexer-indexer'].flatMap((d) => [0, 1].map((i) => `${d}-${revision}-${i}`)).sort());
    // The migration ran in each new API pod first (the second found nothing to do).
    expect(t.events.filter((e) => e.container === 'migrate' && e.type === 'Started' && e.pod.includes(`-${revision}-`)).map((e) => e.pod).sort()).toEqual([`market-indexer-api-${revision}-0`, `market-indexer-api-${revision}-1`]);
    await new Promise<void>((resolve, reject) => {
      const at = Date.now();
      const check = () => (reader!.ok() > okBefore + 20 ? resolve() : Date.now() - at > MIN ? reject(new Error('the reader stalled')) : setTimeout(check, 200));
      check();
    });

    // Every client reaches what the stream holds now, with every seq once, and ends on the update the stream keeps.
    const latest = new Map<string, { latestSeq: number; data: unknown }>();
    for (const c of [...new Set(channels.flat())]) {
      const mine = clients.filter((_, i) => channels[i]!.includes(c));
      const seq = Math.max(...mine.map((x) => x.last(c)));
      if (seq > 0) latest.set(c, await storedUpdate(wsUrl(), c, seq - 1, signer.sign(c)));
    }
    await new Promise<void>((resolve, reject) => {
      const at = Date.now();
      const behind = () => clients.some((c, i) => channels[i]!.some((ch) => latest.has(ch) && c.last(ch) < latest.get(ch)!.latestSeq));
      const check = () => (!behind() ? resolve() : Date.now() - at > MIN ? reject(new Error('some /ws clients never caught up')) : setTimeout(check, 200));
      check();
    });
    const tallies = clients.flatMap((c) => c.tally());
    const gaps = tallies.reduce((n, x) => n + x.gaps, 0);
    const duplicates = tallies.reduce((n, x) => n + x.duplicates, 0);
    const updates = tallies.reduce((n, x) => n + x.received, 0);
    const differentEnd = [...latest].filter(([, want]) => want.data !== undefined).flatMap(([ch, want]) =>
      clients.filter((c, i) => channels[i]!.includes(ch) && JSON.stringify(c.dataAt(ch, want.latestSeq)) !== JSON.stringify(want.data)).map(() => ch),
    );
    const reconnects = clients.reduce((n, c) => n + c.reconnects(), 0) - reconnectsBefore;
    const failedConnects = clients.reduce((n, c) => n + c.failedConnects(), 0);
    const overlaps = clients.reduce((n, c) => n + c.overlaps(), 0);
    const tables = await tablesAgainstUninterrupted({ databaseUrl: t.databaseUrl, chainDir: path.join(t.runDir, 'chain'), programId: programIdOf(to) });
    const took = Math.max(...rolled.flatMap((r) => r.steps.map((s) => s.at))) - Math.min(...rolled.flatMap((r) => r.steps.map((s) => s.at)));
    process.stdout.write(
      `${phase}: rolled in ${(took / 1000).toFixed(1)} s; REST ${reader!.ok()} ok, ${reader!.failures.length} failed; /ws ${CLIENTS} clients, ${reconnects} resumed (${failedConnects} attempts failed, ${overlaps} overlapping), ${updates} updates, ${gaps} gaps, ${duplicates} duplicates, ${differentEnd.length} ending elsewhere; writer hand-over ${writer!.longestGapMs()} ms (writers ${[...writer!.writers].join(', ')}); tables at slot ${tables.slot}: ${tables.differing.length} differing\n`,
    );
    const repeats = clients.flatMap((c) => c.repeats);
    if (repeats.length) process.stdout.write(`${phase}: repeated updates: ${repeats.slice(0, 20).join('; ')}\n`);
    expect(reader!.failures).toEqual([]);
    expect(clients.flatMap((c) => c.errors)).toEqual([]);
    expect(reconnects).toBeGreaterThanOrEqual(CLIENTS);
    expect({ gaps, duplicates, differentEnd, overlaps }).toEqual({ gaps: 0, duplicates: 0, differentEnd: [], overlaps: 0 });
    expect(tables.differing).toEqual([]);
  }

  it(`rolls ${previous.version} → ${RELEASE_VERSION} and back with clients connected: no failed request, every /ws seq once, the tables as an uninterrupted run`, async () => {
    expect(t.pods.map((p) => p.name).sort()).toEqual(['market-indexer-api-0', 'market-indexer-api-1', 'market-indexer-indexer-0', 'market-indexer-indexer-1']);
    const cfg = settings(older);
    signer = positionsSigner({ seed: 1, domain: cfg.PUBLIC_HOSTS?.split(',')[0] ?? DOMAIN, chain: cfg.CHAIN_ID ?? 'solana-mainnet' });
    // Order books of the markets of the next minutes (a market id is its epoch's minute) and one simulated trader's positions each.
    const epoch = Math.floor(Date.now() / MIN);
    channels = Array.from({ length: CLIENTS }, (_, i) => [...Array.from({ length: 8 }, (_, k) => `orderbook:${epoch + k}`), `positions:${signer.wallets[i % signer.wallets.length]}`]);
    clients = channels.map((chs) => resumingClient(wsUrl(), chs, signer.sign));
    for (let i = 0; i < clients.length; i += 20) await Promise.all(clients.slice(i, i + 20).map((c) => c.connect()));
    reader = steadyReader(`${t.frontUrl}/api/v1/markets?limit=1`);
    writer = writerWatch(() => t.podsOf('market-indexer-indexer'));

    await rollAndJudge(`upgrade ${previous.version} → ${RELEASE_VERSION}`, current, { root: ROOT }, 'r2');
    await rollAndJudge(`rollback ${RELEASE_VERSION} → ${previous.version}`, older, release.code, 'r3');
  }, 20 * MIN);
});
