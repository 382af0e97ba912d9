import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { checkTenant } from '../../check/tenant-check';
import { ALERTS, type AlertName } from '../../observability/prometheus/rules';
import { createWalletClient, generateWalletKey, type WalletClient } from '../../local/wallet/client';
import { tradingMarket, until } from '../../local/wallet/trade';
import { startTenant, type RunningTenant } from '../../local/tenant/runner';
import { dropDatabase, type AlertNotification } from '../../local/tenant/stores';
import { buildK6 } from '../../loadtest/k6-build';
import { failedChecks, runK6Script } from '../support/k6/adapter';
import { ADMIN_DATABASE_URL } from '../support/env';
import { WsClient } from '../support/ws';
import { alerts, dashboardQueries, eventually, query, runbookExists, withVariables } from './support';

/**
 * The users' journeys on one tenant run the way the kit deploys it (`npm run tenant`, D-216):
 * staging's tenant alpha, rendered by the kit, its processes started from the rendered
 * containers, behind the edge (real nginx), on the local stores and a simulated chain behind its
 * JSON-RPC, watched by a real Prometheus and Alertmanager. `npm run test:tenant` runs it.
 *
 * The values below are what a tenant may set (monitoring values), so alerts fire in seconds
 * instead of minutes: a 5 s scrape, and slot-lag thresholds of 25 (warning) and 150 (critical)
 * slots held for 15 s. Every other rule is as rendered.
 */
const OVERLAY = { monitoring: { interval: '5s', slotLag: { warning: 25, critical: 150, for: '15s' } } };
const DOMAIN = 'alpha.staging.markets.example';
const MIN = 60_000;

/**
 * Alerts this suite does not cause, and why. Every one of them is unit-tested with promtool
 * against series of its own (test/integration/kit-rules.test.ts).
 */
const NOT_CAUSED: Partial<Record<AlertName, string>> = {
  MarketIndexerSlotLagCritical: 'the freeze pages at the warning threshold first; the critical one is the same expression at a higher threshold (promtool)',
  MarketIndexerReadReplicaBehind: 'alpha reads from its primary alone (DATABASE_READ_URL unset); the failover journey reads through a replica (test/tenant/failover.test.ts), the rule\'s firing is promtool\'s case',
  MarketIndexerStalled: 'needs 10 minutes without a committed slot while the writer reports itself: a live writer on a stuck chain, which the simulated chain never is',
  MarketIndexerBusPublishFailing: 'needs Redis down for the tenant; the local Redis is shared with the rest of the machine (the fault suite, npm run test:faults, stops its own Redis)',
  MarketIndexerApiErrorBudgetBurnFast: 'needs 5xx answers over 1 h and 5 min windows (the fault suite causes 5xx with the stores down)',
  MarketIndexerApiErrorBudgetBurnSlow: 'needs 5xx answers over 1 d and 2 h windows',
  MarketIndexerApiLatencyBudgetBurnFast: 'needs slow answers over 1 h and 5 min windows',
  MarketIndexerApiLatencyBudgetBurnSlow: 'needs slow answers over 1 d and 2 h windows',
  MarketIndexerWsBackpressureCloses: 'needs more than 10 slow consumers closed in 15 min held for 5 min; the slow-consumer rule is checked by npm run bench -- ws-backpressure and its e2e test',
  MarketIndexerWsClientsNearCap: 'needs 90 % of WS_MAX_CLIENTS (1,000) per replica for 10 min',
  MarketIndexerRateLimitSurge: 'needs 5 % of requests refused with 429 for 10 min',
  MarketIndexerTargetAbsent: 'needs no target at all for 10 min (a Deployment scaled to zero, or a ServiceMonitor no Prometheus selects)',
};
const CAUSED: AlertName[] = ['MarketIndexerSlotLagHigh', 'MarketIndexerDeadLetters', 'MarketIndexerNoWriter', 'MarketIndexerTargetDown'];

/**
 * A new best bid every 2 s, each one tick above the book's best (read from /orderbook/top) while
 * that stays below the best ask: the `orderbook:` channel publishes each change of the top. The
 * tick is read each time: the simulated program admin changes it now and then.
 */
async function moveTheBook(trader: WalletClient, market: string): Promise<void> {
  for (let i = 0; i < 3; i++) {
    await new Promise((r) => setTimeout(r, 2_000));
    const { tickSizeBps } = (await trader.read('/config')) as { tickSizeBps: number };
    const top = (await trader.read(`/orderbook/top?market=${market}`)) as { best_bid: number | null; best_ask: number | null };
    // On the tick grid: the simulated traders' bids need not be (the API refuses an order off it).
    const price = Math.floor((top.best_bid ?? 0) / tickSizeBps) * tickSizeBps + tickSizeBps;
    if (top.best_ask !== null && price >= top.best_ask) continue;
    await trader.send('place-order', { market, side: 'buy_yes', priceBps: price, quantity: '1000000' });
  }
}

describe('a tenant as the kit deploys it: the users\' journeys end to end', () => {
  let t: RunningTenant;
  let runDir: string;
  const database = `mi_e2e_tenant_${process.pid}`;
  const wallet = async (): Promise<WalletClient> => createWalletClient({ api: t.frontUrl, rpc: t.rpcUrl, key: await generateWalletKey(), domain: DOMAIN });

  beforeAll(async () => {
    runDir = mkdtempSync(path.join(os.tmpdir(), 'mi-tenant-'));
    t = await startTenant({ env: 'staging', tenant: 'alpha', overlay: OVERLAY, runDir, database, fresh: true, adminDatabaseUrl: ADMIN_DATABASE_URL });
    await t.allReady();
  }, 3 * MIN);
  afterAll(async () => {
    await t?.stop();
    await dropDatabase(ADMIN_DATABASE_URL, database);
    rmSync(runDir, { recursive: true, force: true });
  }, 2 * MIN);

  it('comes up as rendered: two API replicas and two indexers, the helm test check passing through the edge', async () => {
    expect(t.pods.map((p) => p.name).sort()).toEqual(['market-indexer-api-0', 'market-indexer-api-1', 'market-indexer-indexer-0', 'market-indexer-indexer-1']);
    const check = await checkTenant({ baseUrl: t.frontUrl, variant: 'v1', timeoutMs: 10_000 });
    expect(check.steps.map((s) => `${s.name}:${s.ok}`)).toEqual(['ready:true', 'read:true', 'ws:true']);
    // Prometheus scrapes every pod the ServiceMonitors select, labelled as the operator labels them.
    const up = await eventually('four targets up', async () => {
      const s = await query(t.prometheusUrl, 'up{namespace="mi-alpha"} == 1');
      return s.length === 4 ? s : undefined;
    }, MIN);
    expect(up.map((s) => `${s.metric.job} ${s.metric.pod} ${s.metric.environment}`).sort()).toEqual([
      'market-indexer-api market-indexer-api-0 staging',
      'market-indexer-api market-indexer-api-1 staging',
      'market-indexer-indexer market-indexer-indexer-0 staging',
      'market-indexer-indexer market-indexer-indexer-1 staging',
    ]);
  }, 2 * MIN);

  it('trades: /tx/place-order, signed with @solana/kit, sent to the chain, seen in /orders and on /ws; cancelled; a settled position claimed', async () => {
    const trader = await wallet();
    const market = await tradingMarket(trader, 25);
    const { tickSizeBps } = (await trader.read('/config')) as { tickSizeBps: number };
    const ws = await WsClient.open(`${t.frontUrl.replace('http', 'ws')}/ws`);
    try {
      await ws.next((m) => m.type === 'connected');
      const channel = `orderbook:${market.marketId}`;
      expect(await ws.request({ type: 'subscribe', channel })).toMatchObject({ type: 'subscribed', channel });
      // A resting bid at the lowest price: nobody sells that low, so it is the best bid alone.
      await trader.send('place-order', { market: market.address, side: 'buy_yes', priceBps: tickSizeBps, quantity: '1000000' });
      const mine = async () => ((await trader.signedRead('/orders')) as { data: { orders: { orderId: string; marketAddress: string; priceBps: number; status: string }[] } }).data.orders;
      const order = await until('the order in /orders', async () => (await mine()).find((o) => o.marketAddress === market.address && o.status === 'open'));
      expect(order.priceBps).toBe(tickSizeBps);
      await ws.next((m) => m.type === 'update' && m.channel === channel && typeof m.seq === 'number', 30_000);
      await trader.send('cancel-order', { market: market.address, orderId: order.orderId });
      await until('the order cancelled', async () => (await mine()).find((o) => o.orderId === order.orderId && o.status === 'cancelled'));
      ws.assertValid();
    } finally {
      await ws.close();
    }

    // Two wallets cross at complementary prices: the trader holds YES until the market settles.
    // The trader's bid is one tick below 100 %, above anything the simulated traders bid, so the
    // counterparty's NO (a YES sale at the complement) meets it first.
    // The tick read again: the simulated program admin changes it now and then.
    const counterparty = await wallet();
    const yes = 10_000 - ((await trader.read('/config')) as { tickSizeBps: number }).tickSizeBps;
    await trader.send('place-order', { market: market.address, side: 'buy_yes', priceBps: yes, quantity: '2000000' });
    await counterparty.send('place-order', { market: market.address, side: 'buy_no', priceBps: 10_000 - yes, quantity: '2000000' });
    type Position = { marketAddress: string; yesShares: string; settled: boolean; payout: string };
    const positions = async () => ((await trader.signedRead('/positions')) as { data: { positions: Position[] } }).data.positions.filter((p) => p.marketAddress === market.address);
    await until('the trader\'s position', async () => (await positions()).find((p) => BigInt(p.yesShares) > 0n), 3 * MIN);
    await until('the market resolved', async () => {
      const m = (await trader.read(`/markets/${market.address}`)) as { data: { market: { state: number } } };
      return m.data.market.state >= 4 ? true : undefined;
    }, 4 * MIN);
    const signature = await trader.send('claim-payout', { market: market.address });
    const settled = await until('the position settled', async () => (await positions()).find((p) => p.settled), 3 * MIN);
    expect(settled.settled).toBe(true);
    expect(signature).toMatch(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
  }, 8 * MIN);

  it('drains a hung API replica: readiness takes it out of the edge, liveness restarts it, a steady client sees no failed request', async () => {
    const [victim, other] = t.podsOf('market-indexer-api');
    const restarts = victim!.restarts();
    let failed = 0;
    let ok = 0;
    let slowest = 0;
    let running = true;
    const client = (async () => {
      while (running) {
        const t0 = Date.now();
        try {
          const res = await fetch(`${t.frontUrl}/api/v1/markets?limit=1`, { signal: AbortSignal.timeout(3 * MIN) });
          await res.text();
          if (res.status === 200) ok += 1;
          else failed += 1;
        } catch {
          failed += 1;
        }
        slowest = Math.max(slowest, Date.now() - t0);
        // About 3 a second: within the public reads' limit (300 a minute for one address; every
        // request here comes from the edge's 127.0.0.1), so a refusal would be the drain's.
        await new Promise((r) => setTimeout(r, 300));
      }
    })();
    await eventually('steady traffic', async () => ok > 20, 30_000);
    victim!.hang();
    await eventually('the hung replica not ready', async () => !victim!.ready(), MIN);
    // Once nginx has reloaded without it, no request it takes in goes to the replica until it is back.
    await t.edge.refresh();
    const outAt = Date.now();
    await eventually('the hung replica restarted', async () => victim!.restarts() > restarts, 3 * MIN);
    const backAt = Date.now();
    const sentToVictim = t.edge.requests().filter((r) => r.startMs > outAt && r.startMs < backAt && r.upstreams.some((u) => u.startsWith(`${victim!.ip}:`)));
    expect(sentToVictim).toEqual([]);
    await eventually('the replica ready again', async () => victim!.ready(), 2 * MIN);
    const okBefore = ok;
    await eventually('traffic after the restart', async () => ok > okBefore + 20, 30_000);
    running = false;
    await client;
    expect(other!.ready()).toBe(true);
    expect(failed).toBe(0);
    process.stdout.write(`drain: ${ok} requests, 0 failed, slowest ${slowest} ms, ${t.edge.retries()} retried by the edge\n`);
  }, 8 * MIN);

  it('passes the smoke run of every k6 script through the edge', async () => {
    const out = mkdtempSync(path.join(os.tmpdir(), 'k6-tenant-'));
    try {
      const bundles = await buildK6(out);
      const trader = await wallet();
      const env = { BASE_URL: t.frontUrl, TENANT: 'alpha', AUTH_DOMAIN: DOMAIN, RUN_ID: `tenant-${Date.now()}` };
      // fanout-ws's market is picked when its turn comes: one picked before the runs ahead of it
      // can stop trading (60 s epochs) while they run.
      type Prepared = { opts: Parameters<typeof runK6Script>[1]; market?: { address: string } };
      const fanout = async (): Promise<Prepared> => {
        const market = await tradingMarket(trader, 30);
        return { opts: { env: { ...env, SUBSCRIBERS: '5', FANOUT_SECONDS: '15', CHANNELS: `orderbook:${market.marketId},market:${market.marketId}` }, vus: 5 }, market };
      };
      const runs = [
        ['limits-ws', async (): Promise<Prepared> => ({ opts: { env } })],
        ['load', async (): Promise<Prepared> => ({ opts: { env: { ...env, PROFILE: 'smoke', THINK_SECONDS: '0' } } })],
        ['fanout-ws', fanout],
        ['limits-rest', async (): Promise<Prepared> => ({ opts: { env } })],
      ] as const;
      expect(runs.map(([name]) => name).sort()).toEqual(Object.keys(bundles).sort());
      for (const [i, [name, prepare]] of runs.entries()) {
        const { opts, market } = await prepare();
        // While fanout-ws listens, a wallet moves the book it listens to (the simulated traders may not, in 15 s).
        const moving = market ? moveTheBook(trader, market.address) : undefined;
        // Each run a client address of its own (k6's --local-ips): the limits scripts count their address's requests from zero.
        const s = await runK6Script(bundles[name]!, { ...opts, localIPs: `127.0.0.${71 + i}` });
        await moving;
        if (s.errors.length || failedChecks(s).length) process.stdout.write(`${name}:\n${s.text}\n`);
        expect([name, s.errors, failedChecks(s)]).toEqual([name, [], []]);
        expect([name, s.thresholds.filter((x) => !x.isTime && !x.ok)]).toEqual([name, []]);
      }
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 6 * MIN);

  describe('an SRE is paged: alerts reach the Alertmanager webhook and resolve', () => {
    const notified = (alert: string, status: 'firing' | 'resolved', after: number) => (n: AlertNotification) =>
      n.receivedAt >= after && n.alerts.some((a) => a.labels.alertname === alert && a.status === status);
    const expectPage = (n: AlertNotification, alert: string) => {
      const a = n.alerts.find((x) => x.labels.alertname === alert)!;
      expect(a.labels).toMatchObject({ tenant: 'alpha', environment: 'staging' });
      expect(a.annotations.runbook_url).toMatch(new RegExp(`/docs/runbooks/${alert}\\.md$`));
      expect(runbookExists(a.annotations.runbook_url!)).toBe(true);
    };
    const firing = async (alert: string) => (await alerts(t.prometheusUrl)).find((a) => a.labels.alertname === alert && a.state === 'firing');

    it('lists every alert the rules define as caused here or not, with the reason', () => {
      expect([...CAUSED, ...Object.keys(NOT_CAUSED)].sort()).toEqual([...ALERTS].sort());
    });

    it('slot lag from a slow RPC: the indexer falls behind, MarketIndexerSlotLagHigh goes pending, fires, pages, resolves', async () => {
      const t0 = Date.now();
      // The history calls slow (as an overloaded archive node is), getSlot not: the indexer reads
      // the tip within its 2 s deadline and falls behind it.
      t.faults!.setLatency(8_000, ['getSignaturesForAddress', 'getTransaction']);
      try {
        const pending = await eventually('SlotLagHigh pending', async () => (await alerts(t.prometheusUrl)).find((a) => a.labels.alertname === 'MarketIndexerSlotLagHigh'), 3 * MIN);
        expect(pending.state).toBe('pending');
        await eventually('SlotLagHigh firing', () => firing('MarketIndexerSlotLagHigh'), 2 * MIN);
        // The indexer's own report said so, not only the API's observation (its lag saw-tooths as
        // each slow poll lands, so over the fault, not at this instant).
        const window = `${Math.ceil((Date.now() - t0) / 1000)}s`;
        const own = await query(t.prometheusUrl, `max(max_over_time(service_indexer_slot_lag{service="indexer",tenant="alpha"}[${window}]))`);
        expect(Number(own[0]!.value[1])).toBeGreaterThan(25);
        expectPage(await eventually('the page', async () => t.notifications.find(notified('MarketIndexerSlotLagHigh', 'firing', t0)), MIN), 'MarketIndexerSlotLagHigh');
      } finally {
        t.faults!.setLatency(0);
      }
      const resolvedAt = Date.now();
      await eventually('the resolved notification', async () => t.notifications.find(notified('MarketIndexerSlotLagHigh', 'resolved', resolvedAt)), 4 * MIN);
    }, 10 * MIN);

    it('dead letters from a corrupt transaction: MarketIndexerDeadLetters fires and pages', async () => {
      const t0 = Date.now();
      t.faults!.corruptTransactions(1);
      await eventually('a transaction corrupted', async () => t.faults!.corrupted().length === 1, 2 * MIN);
      await eventually('DeadLetters firing', () => firing('MarketIndexerDeadLetters'), 2 * MIN);
      const dl = await query(t.prometheusUrl, 'sum by (reason) (service_indexer_dead_letters_total{tenant="alpha"})');
      expect(dl.map((s) => s.metric.reason)).toEqual(['unknown_discriminator']);
      expectPage(await eventually('the page', async () => t.notifications.find(notified('MarketIndexerDeadLetters', 'firing', t0)), MIN), 'MarketIndexerDeadLetters');
    }, 5 * MIN);

    // Both indexers: with one frozen, the other takes the writer lease within its duration (the
    // journey "a node freezes under the writer indexer alone" below), and no writer is missing.
    it('a node freezes under both indexers and an API replica: slot lag (as the API sees it), no writer, targets down; all resolve when it is back', async () => {
      const writers = await query(t.prometheusUrl, 'service_indexer_is_writer{tenant="alpha"} == 1');
      expect(writers).toHaveLength(1);
      const writer = t.pods.find((p) => p.name === writers[0]!.metric.pod)!;
      const standby = t.podsOf('market-indexer-indexer').find((p) => p !== writer)!;
      const api = t.podsOf('market-indexer-api')[1]!;
      const t0 = Date.now();
      writer.freeze();
      standby.freeze();
      api.freeze();
      try {
        // The frozen indexer reports nothing: the page comes from the API's observation (D-213).
        for (const alert of ['MarketIndexerSlotLagHigh', 'MarketIndexerNoWriter', 'MarketIndexerTargetDown'] as const) {
          const page = await eventually(`${alert} paged`, async () => t.notifications.find(notified(alert, 'firing', t0)), 7 * MIN);
          expectPage(page, alert);
        }
        const down = (await firing('MarketIndexerTargetDown')) ? await query(t.prometheusUrl, 'up{namespace="mi-alpha"} == 0') : [];
        expect(down.map((s) => s.metric.pod).sort()).toEqual([api.name, writer.name, standby.name].sort());
      } finally {
        writer.resume();
        standby.resume();
        api.resume();
      }
      const back = Date.now();
      for (const alert of ['MarketIndexerSlotLagHigh', 'MarketIndexerNoWriter', 'MarketIndexerTargetDown'] as const) {
        await eventually(`${alert} resolved`, async () => t.notifications.find(notified(alert, 'resolved', back)), 4 * MIN);
      }
    }, 15 * MIN);
  });

  describe('a node freezes under the writer indexer alone', () => {
    it('the standby takes the writer lease once it expires and slot lag clears; the woken writer commits nothing, steps down and comes back as a standby', async () => {
      const pg = new Client({ connectionString: t.databaseUrl });
      await pg.connect();
      try {
        const lease = async () => (await pg.query<{ holder: string; token: string }>('SELECT holder, token FROM writer_lease WHERE id = 1')).rows[0]!;
        const cursor = async () => Number((await pg.query<{ s: string }>('SELECT last_processed_slot AS s FROM indexer_cursor')).rows[0]!.s);
        const tip = async () => ((await (await fetch(t.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"getSlot"}' })).json()) as { result: number }).result;
        const pidOf = (holder: string) => Number(holder.split(':').pop());
        const indexers = t.podsOf('market-indexer-indexer');
        const held = await lease();
        const writer = indexers.find((p) => p.pids().includes(pidOf(held.holder)))!;
        const standby = indexers.find((p) => p !== writer)!;
        expect([writer, standby].every(Boolean)).toBe(true);
        const restarts = writer.restarts();
        const frozen = writer.pids();
        // The node stops: the processes and the kubelet (no probe acts); PostgreSQL still sees the writer's sessions.
        writer.freeze();
        try {
          // The design bound: the lease's 15 s, a 2 s poll, and a margin for the batch to commit on a loaded machine.
          await eventually('the standby holding the lease and committing', async () => {
            const now = await lease();
            return Number(now.token) > Number(held.token) && standby.pids().includes(pidOf(now.holder));
          }, 30_000);
          await eventually('slot lag to clear', async () => (await tip()) - (await cursor()) <= 5, 30_000);
          // Prometheus says who writes once it has scraped the standby since (the frozen pod's series went stale with its target).
          await eventually('Prometheus to see the standby writing', async () => {
            const writing = await query(t.prometheusUrl, 'service_indexer_is_writer{tenant="alpha"} == 1');
            return writing.length === 1 && writing[0]!.metric.pod === standby.name;
          }, 30_000);
        } finally {
          writer.resume();
        }
        // Woken, the old writer finds its lease gone: it exits, and its container restarts as a
        // standby after the kubelet's back-off (10 s, doubled by each restart of the last 10 min).
        await eventually('the woken writer to step down (its process exits)', async () => !writer.pids().some((p) => frozen.includes(p)), 60_000);
        await eventually('the woken writer back after its back-off', async () => writer.restarts() > restarts, 3 * MIN);
        const after = await lease();
        expect(standby.pids()).toContain(pidOf(after.holder));
        expect(Number(after.token)).toBe(Number(held.token) + 1);
      } finally {
        await pg.end();
      }
    }, 8 * MIN);
  });

  it('rides out a provider\'s rate limit: 429s with Retry-After counted as rate_limited, waited out, the indexer back at the chain\'s tip', async () => {
    const lagOf = async () => Number((await query(t.prometheusUrl, 'max(service_indexer_slot_lag{service="indexer",tenant="alpha"})'))[0]?.value[1] ?? NaN);
    t.faults!.rateLimit(8_000, 1);
    await eventually('calls refused', async () => t.faults!.refused() > 0, MIN);
    const limited = await eventually(
      'rate_limited errors scraped',
      async () => (await query(t.prometheusUrl, 'sum(service_indexer_rpc_errors_total{service="indexer",tenant="alpha",kind="rate_limited"})'))[0],
      2 * MIN,
    );
    expect(Number(limited.value[1])).toBeGreaterThan(0);
    // Waited out, not given up: the indexer follows the chain again.
    const chainSlot = async () => {
      const res = await fetch(t.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getSlot', params: [] }) });
      return ((await res.json()) as { result: number }).result;
    };
    const after = await eventually('the chain answering again', async () => (await chainSlot().catch(() => undefined)) ?? false, MIN);
    const committed = async () => Number((await query(t.prometheusUrl, 'max(service_indexer_last_processed_slot{tenant="alpha"})'))[0]?.value[1] ?? 0);
    await eventually('the indexer past the slot the limit ended at', async () => (await committed()) >= after, 2 * MIN);
    expect(await lagOf()).toBeLessThan(25);
  }, 5 * MIN);

  it('draws every dashboard panel from this tenant\'s series (the environment and tenant variables set to it)', async () => {
    // Fresh traffic for the rate() panels.
    const reader = await wallet();
    await eventually('the API back to full health', async () => t.pods.every((p) => p.ready()), 2 * MIN);
    for (let i = 0; i < 20; i++) await reader.read('/markets?limit=5').catch(() => undefined);
    // A fresh dead letter: the one of the alert's journey may live in a writer a later journey replaced.
    const corrupted = t.faults!.corrupted().length;
    t.faults!.corruptTransactions(1);
    await eventually('a transaction corrupted', async () => t.faults!.corrupted().length > corrupted, 2 * MIN);
    // Scraped twice since: what rate() and increase() need to draw them.
    await eventually('the reads scraped', async () => (await query(t.prometheusUrl, 'sum(increase(service_api_requests_total{tenant="alpha",route=~".*markets.*"}[30s])) > 0')).length > 0, MIN);
    // A counter a process creates at its first dead letter starts at 1, so increase() shows 0 for
    // it: what the panel needs is the series scraped twice within its window.
    await eventually('the dead letter scraped twice', async () => (await query(t.prometheusUrl, 'count_over_time(service_indexer_dead_letters_total{tenant="alpha"}[1m]) >= 2')).length > 0, 2 * MIN);
    // Panels with nothing to draw here, and why: checked both ways (each of them is empty, every other is not).
    const WITHOUT_DATA: Record<string, string> = {
      'Plan-limit refusals by plan (appendix variant)': 'a legacy tenant\'s plans by API key; alpha serves v1',
      'Connections by plan (appendix variant)': 'a legacy tenant\'s plans by API key; alpha serves v1',
      'API reads by pool': 'alpha reads from its primary alone (DATABASE_READ_URL unset): the counter is born with a read replica (the failover journey)',
      'Error ratio (5xx) by route': 'no request failed with a 5xx: the ratio has no numerator (the fault suite, npm run test:faults, causes 5xx)',
    };
    const queries = dashboardQueries(t.rendered.platform);
    expect(queries.length).toBeGreaterThan(20);
    const empty = new Set<string>();
    for (const q of queries) {
      // The load-test dashboard draws k6's own results, written by k6 (remote write) while a test runs.
      if (/load test/i.test(q.dashboard)) continue;
      const s = await query(t.prometheusUrl, withVariables(q.expr, { environment: 'staging', tenant: 'alpha' }));
      if (!s.length) empty.add(q.panel);
    }
    expect([...empty].sort()).toEqual(Object.keys(WITHOUT_DATA).sort());
  }, 3 * MIN);
});
