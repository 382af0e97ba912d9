import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { durationSeconds, gatewayIdleTimeoutSeconds, type HTTPRoute, type HTTPRouteRule } from '../../local/tenant/edge-config';
import { ofKind } from '../../local/tenant/manifests';
import { startTenant, type RunningTenant } from '../../local/tenant/runner';
import { dropDatabase } from '../../local/tenant/stores';
import type { Pod } from '../../local/tenant/pod';
import { testWallet, walletHeaders, type SignOptions } from '../support/api';
import { ADMIN_DATABASE_URL } from '../support/env';
import { eventually } from './support';
import { resumingClient, type ResumingClient } from './upgrade-clients';

/**
 * The tenant's edge as clients see it when something goes wrong behind it (docs/local-tenant.md#the-edge):
 * staging's tenant alpha through real nginx configured from its rendered HTTPRoute.
 *
 * An API pod hangs: its process and its kubelet stop (`freeze()`, a node that hangs), so no
 * probe takes it out for 40 s. A reader at 3 requests a second through the edge loses no read and
 * waits at most the route's backendRequest plus one retry on the other replica; `/ws` clients on
 * the frozen pod are closed by the edge within its idle timeout and resume on the other replica,
 * every seq once.
 *
 * A client forges the country header: the route removes it, so through the edge the API never
 * sees it, while the same header from the edge's address reaching a pod is believed.
 */
const OVERLAY = {
  settings: { GEO_COUNTRY_HEADER: 'CF-IPCountry', GEO_BLOCKED_COUNTRIES: 'US', WS_MAX_CONNECTIONS_PER_IP: 1000, PUBLIC_READ_RATE_LIMIT_MAX_REQUESTS: 100000, RATE_LIMIT_MAX_REQUESTS: 100000 },
};
const CLIENTS = 12;
const MIN = 60_000;
/** An order that fails validation: the jurisdiction policy answers before the order is read (api-policy.test.ts). */
/** The API container's port. */
const apiPort = (p: Pod) => p.spec.containers[0]!.ports!.find((x) => x.name === 'http')!.containerPort;
const ORDER = { market: 'not-a-market', side: 'buy_yes', priceBps: 1, quantity: '1' };

/** A read started every 333 ms, whatever the ones before are doing; each one's wait recorded. */
function paceReader(url: string) {
  const waits: number[] = [];
  const failures: string[] = [];
  const inFlight = new Set<Promise<void>>();
  const read = async () => {
    const t0 = Date.now();
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2 * MIN) });
      const body = await res.text();
      if (res.status !== 200) failures.push(`${res.status} ${body.slice(0, 200)}`);
    } catch (err) {
      failures.push(String((err as Error).cause ?? err));
    }
    waits.push(Date.now() - t0);
  };
  const timer = setInterval(() => {
    const p = read().finally(() => inFlight.delete(p));
    inFlight.add(p);
  }, 333);
  return {
    waits,
    failures,
    stop: async () => {
      clearInterval(timer);
      await Promise.all(inFlight);
    },
  };
}

/** POST /tx/place-order, signed, with the country header lines given, straight to `url` (a raw request: repeated lines stay apart). */
function placeOrder(url: string, countryLines: string[], sign: SignOptions) {
  return new Promise<{ status: number; code?: string }>((resolve, reject) => {
    const u = new URL(url);
    const body = JSON.stringify(ORDER);
    const headers: [string, string][] = [
      ['host', u.host],
      ['content-type', 'application/json'],
      ['content-length', String(Buffer.byteLength(body))],
      ...Object.entries(walletHeaders(testWallet(), 'POST /tx/place-order', sign)),
      ...countryLines.map((v): [string, string] => ['CF-IPCountry', v]),
    ];
    const req = http.request({ host: u.hostname, port: u.port, method: 'POST', path: '/api/v1/tx/place-order', agent: false, headers: headers.flat() as unknown as http.OutgoingHttpHeaders }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, code: (JSON.parse(text) as { code?: string }).code }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe("the tenant's edge when an API pod hangs, and when a client forges its country", () => {
  let t: RunningTenant;
  let runDir: string;
  const database = `mi_e2e_edge_${process.pid}`;

  beforeAll(async () => {
    runDir = mkdtempSync(path.join(os.tmpdir(), 'mi-edge-hang-'));
    t = await startTenant({ env: 'staging', tenant: 'alpha', overlay: OVERLAY, runDir, database, fresh: true, adminDatabaseUrl: ADMIN_DATABASE_URL });
    await t.allReady();
  }, 3 * MIN);
  afterAll(async () => {
    await t?.stop();
    await dropDatabase(ADMIN_DATABASE_URL, database);
    rmSync(runDir, { recursive: true, force: true });
  }, 2 * MIN);

  const apiSettings = () =>
    (t.rendered.objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name.endsWith('-api')) as { data?: Record<string, string> } | undefined)?.data ?? {};
  /** The /ws connections a pod has open (its service_ws_connections gauge). */
  const wsConnections = async (p: Pod) => {
    const text = await (await fetch(`http://${p.ip}:${apiPort(p)}/metrics`)).text();
    return Number(/^service_ws_connections(?:\{[^}]*\})? (\d+)/m.exec(text)?.[1] ?? 0);
  };

  /** The route's rule a read of /api/v1/markets takes: its longest matching path, as nginx picks the location. */
  const readRule = () => {
    const route = ofKind<HTTPRoute>(t.rendered.objects, 'HTTPRoute')[0]!;
    const read = '/api/v1/markets';
    const length = (r: HTTPRouteRule) =>
      Math.max(-1, ...(r.matches ?? []).map((m) => (m.path?.type === 'Exact' ? (m.path.value === read ? Infinity : -1) : read.startsWith(m.path?.value ?? '/') ? (m.path?.value ?? '/').length : -1)));
    return [...route.spec.rules!].sort((a, b) => length(b) - length(a))[0]!;
  };

  it('an API pod hangs: no read fails or waits past backendRequest plus one retry; its /ws clients are closed by the edge and resume on the other pod, every seq once', async () => {
    const backendMs = durationSeconds(readRule().timeouts!.backendRequest!, 'backendRequest') * 1000;
    const idleMs = gatewayIdleTimeoutSeconds(Number(apiSettings().WS_PING_INTERVAL_MS ?? 30_000)) * 1000;
    const [victim, other] = t.podsOf('market-indexer-api');

    // /ws clients on the order books of the next minutes' markets (a market id is its epoch's minute).
    const epoch = Math.floor(Date.now() / MIN);
    const channels = Array.from({ length: 6 }, (_, k) => `orderbook:${epoch + k}`);
    const clients: ResumingClient[] = Array.from({ length: CLIENTS }, () => resumingClient(`${t.frontUrl.replace('http', 'ws')}/ws`, channels, () => undefined));
    await Promise.all(clients.map((c) => c.connect()));
    const reader = paceReader(`${t.frontUrl}/api/v1/markets?limit=1`);
    const closedAt: (number | undefined)[] = [];
    const resumedAt: (number | undefined)[] = [];
    try {
      await eventually('steady reads', async () => reader.waits.length > 10, 30_000);
      // How many of the clients the edge sent to the pod about to hang, as the pod counts them.
      const onVictim = await wsConnections(victim!);
      expect(onVictim).toBeGreaterThan(0);
      const frozenAt = Date.now();
      victim!.freeze();
      const watch = setInterval(() => {
        clients.forEach((c, i) => {
          if (c.reconnects() > 0) closedAt[i] ??= Date.now();
          if (c.resumes() > 0) resumedAt[i] ??= Date.now();
        });
      }, 50);
      try {
        await eventually(`the ${onVictim} /ws clients of the frozen pod resumed`, async () => resumedAt.filter(Boolean).length >= onVictim, idleMs + MIN);
      } finally {
        clearInterval(watch);
      }
      // The edge took the pod out once it was NotReady; reads go on a while on the other pod alone.
      await eventually('the frozen pod NotReady', async () => !victim!.ready(), MIN);
      await t.edge.refresh();
      const count = reader.waits.length;
      await eventually('reads after the pod went out', async () => reader.waits.length > count + 10, 30_000);
      await reader.stop();
      const tried = t.edge.requests().filter((r) => r.startMs >= frozenAt && r.upstreams.some((u) => u.startsWith(`${victim!.ip}:`)) && r.uri === '/api/v1/markets');
      const tallies = clients.flatMap((c) => c.tally());
      const gaps = tallies.reduce((n, x) => n + x.gaps, 0);
      const duplicates = tallies.reduce((n, x) => n + x.duplicates, 0);
      const maxWait = Math.max(...reader.waits);
      const dropped = closedAt.flatMap((at, i) => (at ? [{ closeMs: at - frozenAt, resumeMs: resumedAt[i]! - at }] : []));
      process.stdout.write(
        `edge, a hung API pod: ${reader.waits.length} reads, ${reader.failures.length} failed, slowest ${maxWait} ms (bound ${2 * backendMs} ms: backendRequest and one retry), ${tried.length} sent to the frozen pod first; ` +
          `/ws: ${dropped.length} of ${CLIENTS} clients were on it, closed by the edge ${dropped.map((d) => d.closeMs).join(', ')} ms after the freeze (idle timeout ${idleMs} ms), resumed ${dropped.map((d) => d.resumeMs).join(', ')} ms after; ${gaps} gaps, ${duplicates} duplicates\n`,
      );
      expect(reader.failures).toEqual([]);
      expect(maxWait).toBeLessThanOrEqual(2 * backendMs);
      // Reads the edge sent to the frozen pod first went on to the other one.
      expect(tried.length).toBeGreaterThan(0);
      expect(tried.every((r) => r.status === 200 && r.upstreams.length === 2)).toBe(true);
      expect(dropped.length).toBe(onVictim);
      expect(dropped.every((d) => d.closeMs <= idleMs + 1_000)).toBe(true);
      expect(clients.flatMap((c) => c.errors)).toEqual([]);
      expect({ gaps, duplicates, overlaps: clients.reduce((n, c) => n + c.overlaps(), 0) }).toEqual({ gaps: 0, duplicates: 0, overlaps: 0 });
      expect(other!.ready()).toBe(true);
    } finally {
      clients.forEach((c) => c.stop());
      await reader.stop();
      victim!.resume();
    }
    await eventually('the pod back', async () => victim!.ready(), 2 * MIN);
  }, 6 * MIN);

  it('a client forges the country header: through the edge the API never sees it; from the edge\'s address a refused country stays refused', async () => {
    const pod = t.podsOf('market-indexer-api').find((p) => p.ready())!;
    const direct = `http://${pod.ip}:${apiPort(pod)}`;
    const sign = { domain: apiSettings().PUBLIC_HOSTS!.split(',')[0]!, chain: apiSettings().CHAIN_ID ?? 'solana-mainnet' };
    // The pod believes the header from the edge's address (TRUST_PROXY): a refused country is refused, a second line does not talk it round.
    expect(await placeOrder(direct, ['US'], sign)).toEqual({ status: 451, code: 'GEO_BLOCKED' });
    expect(await placeOrder(direct, ['US', 'CH'], sign)).toEqual({ status: 451, code: 'GEO_BLOCKED' });
    expect((await placeOrder(direct, ['CH'], sign)).code).toBe('VALIDATION_ERROR');
    // Through the edge, whatever a client sends of it is removed: the country is unknown, never the client's choice.
    for (const lines of [['US'], ['US', 'CH'], ['us']]) expect((await placeOrder(t.frontUrl, lines, sign)).code).toBe('VALIDATION_ERROR');
  }, 2 * MIN);
});
