import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { marketIndexerCrd, type MarketIndexer } from '../../cdk8s/lib/crd';
import { KitInputError } from '../../cdk8s/lib/resolve';
import { KubeConfig } from '@kubernetes/client-node';
import { MARKET_INDEXER } from '../../cdk8s/lib/kinds';
import { createKubeClient } from '../../operator/kube/client';
import { renderTenant } from '../../operator/render';
import { compileCrdSchema } from '../../local/kube-apiserver/crd-schema';
import { nextConditions, transitions } from '../../operator/conditions';
import { cappedText, createIndexerStatusPoller, FAILURES_TO_FORGET, STATUS_BODY_LIMIT, STATUS_CONCURRENCY } from '../../operator/indexer-status';
import { lagCondition } from '../../operator/reconcile/observe';
import { waitFor } from '../support/tables';
import { createWorkQueue } from '../../operator/queue';
import { holds } from '../../operator/reconcile';
import { testCommon } from '../support/common';

describe('operator work queue', () => {
  it('coalesces a key queued several times, and never hands one key to two workers', async () => {
    const q = createWorkQueue();
    q.add('a');
    q.add('a');
    q.add('b');
    expect(await q.get()).toBe('a');
    q.add('a'); // while a is processed: it comes back once a is done, not before
    expect(await q.get()).toBe('b');
    let third: string | undefined;
    void q.get().then((k) => (third = k));
    await new Promise((r) => setImmediate(r));
    expect(third).toBeUndefined();
    q.done('a');
    await new Promise((r) => setImmediate(r));
    expect(third).toBe('a');
    q.shutDown();
    expect(await q.get()).toBeUndefined();
  });

  it('backs a failing key off exponentially, with jitter in the upper half, and forgets on success', async () => {
    const delays: number[] = [];
    const realSetTimeout = global.setTimeout;
    const spy = jest.spyOn(global, 'setTimeout').mockImplementation(((fn: () => void, ms: number) => {
      delays.push(ms);
      return realSetTimeout(fn, 0);
    }) as never);
    try {
      const q = createWorkQueue({ baseDelayMs: 100, maxDelayMs: 1000, random: () => 1 });
      for (let i = 0; i < 6; i++) {
        q.addRateLimited('x');
        q.done(await q.get() as string);
      }
      expect(delays).toEqual([100, 200, 400, 800, 1000, 1000]);
      q.forget('x');
      q.addRateLimited('x');
      expect(delays.at(-1)).toBe(100);
      const low = createWorkQueue({ baseDelayMs: 100, random: () => 0 });
      low.addRateLimited('y');
      expect(delays.at(-1)).toBe(50);
      q.shutDown();
      low.shutDown();
    } finally {
      spy.mockRestore();
    }
  });
});

describe('operator drift check', () => {
  it('holds what it set whatever the server added, and compares quantities by amount', () => {
    expect(holds({ spec: { replicas: 2, paused: false }, status: {} }, { spec: { replicas: 2 } })).toBe(true);
    expect(holds({ spec: { replicas: 3 } }, { spec: { replicas: 2 } })).toBe(false);
    expect(holds({ cpu: '500m' }, { cpu: '0.5' })).toBe(true);
    expect(holds({ cpu: '501m' }, { cpu: '0.5' })).toBe(false);
    expect(holds({ tag: '0.1.0' }, { tag: '0.1' })).toBe(false);
    expect(holds({ list: [{ a: 1, b: 2 }] }, { list: [{ a: 1 }] })).toBe(true);
    expect(holds({ list: [{ a: 1 }, { a: 2 }] }, { list: [{ a: 1 }] })).toBe(false);
    expect(holds({}, { metadata: { labels: { x: 'y' } } })).toBe(false);
  });
});

describe('operator conditions', () => {
  it('keeps lastTransitionTime while a status stays, and reports a transition only on a change', () => {
    const first = nextConditions(undefined, [{ type: 'Ready', status: 'False', reason: 'NotAvailable', message: 'm' }], 1, 'T1');
    const same = nextConditions(first, [{ type: 'Ready', status: 'False', reason: 'Other', message: 'n' }], 2, 'T2');
    expect(same[0]).toEqual({ type: 'Ready', status: 'False', reason: 'Other', message: 'n', lastTransitionTime: 'T1', observedGeneration: 2 });
    expect(transitions(first, same)).toEqual([]);
    const flipped = nextConditions(same, [{ type: 'Ready', status: 'True', reason: 'Available', message: 'ok' }], 2, 'T3');
    expect(flipped[0]!.lastTransitionTime).toBe('T3');
    expect(transitions(same, flipped).map((c) => c.status)).toEqual(['True']);
  });
});

describe('operator API client', () => {
  // client-node's request options come with a new Agent each time: a connection (in a cluster, a
  // TLS handshake) per request, unless the client keeps its own.
  it('sends its requests over kept-alive connections, not one connection each', async () => {
    let connections = 0;
    const server = http.createServer((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('{"items":[],"metadata":{"resourceVersion":"1"}}'));
    server.on('connection', () => void (connections += 1));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const kube = createKubeClient(kc, { platformNamespace: 'market-indexer-system' });
    try {
      for (let i = 0; i < 20; i++) expect(await kube.list(MARKET_INDEXER)).toEqual({ items: [], metadata: { resourceVersion: '1' } });
      expect(connections).toBe(1);
      await Promise.all(Array.from({ length: 8 }, () => kube.list(MARKET_INDEXER)));
      expect(connections).toBeLessThanOrEqual(8);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

describe('operator status poller', () => {
  // Issue 40: all at once, a poll of 3,000 tenants took the event loop for about 1.5 s and held
  // 3,000 sockets (D-421).
  it(`reads every tenant, never more than ${STATUS_CONCURRENCY} at once`, async () => {
    let inFlight = 0;
    let most = 0;
    const server = http.createServer((_req, res) => {
      most = Math.max(most, ++inFlight);
      setTimeout(() => {
        inFlight -= 1;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ slotLag: 1, lastProcessedSlot: '9', writer: 'w:1', indexerRunning: true }));
      }, 2);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const tenants = Array.from({ length: 4 * STATUS_CONCURRENCY }, (_, i) => ({ metadata: { name: `m${i}` }, spec: { tenant: `t${i}` } }) as unknown as MarketIndexer);
    const changes = new Set<string>();
    const poller = createIndexerStatusPoller({
      urlTemplate: `http://127.0.0.1:${(server.address() as AddressInfo).port}/{tenant}`,
      intervalMs: 60_000,
      logger: testCommon().logger,
      list: () => tenants,
      onChange: (n) => changes.add(n),
    });
    try {
      await poller.pollOnce();
      expect(changes.size).toBe(tenants.length);
      expect(tenants.every((mi) => poller.get(mi) && !('unavailable' in poller.get(mi)!))).toBe(true);
      expect(most).toBeLessThanOrEqual(STATUS_CONCURRENCY);
      expect(most).toBeGreaterThan(1);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it(`keeps the last observation through ${FAILURES_TO_FORGET - 1} lost reads and forgets it at the ${FAILURES_TO_FORGET}rd`, async () => {
    let up = true;
    const server = http.createServer((_req, res) => {
      if (!up) return void res.writeHead(503).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ slotLag: 4, lastProcessedSlot: '9', writer: 'w:1', indexerRunning: true }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const mi = { metadata: { name: 'm' }, spec: { tenant: 't' } } as unknown as MarketIndexer;
    const changes: string[] = [];
    const poller = createIndexerStatusPoller({
      urlTemplate: `http://127.0.0.1:${(server.address() as AddressInfo).port}/{tenant}`,
      intervalMs: 60_000,
      logger: testCommon().logger,
      list: () => [mi],
      onChange: (n) => changes.push(n),
    });
    try {
      await poller.pollOnce();
      expect(poller.get(mi)).toEqual({ slotLag: 4, lastProcessedSlot: '9', writer: 'w:1', indexerRunning: true });
      up = false;
      for (let i = 1; i < FAILURES_TO_FORGET; i++) await poller.pollOnce();
      expect(poller.get(mi)).toBeDefined();
      expect(changes).toEqual(['m']);
      await poller.pollOnce();
      expect(poller.get(mi)).toEqual({ unavailable: "the indexer's /status answered HTTP 503" });
      expect(changes).toEqual(['m', 'm']);
    } finally {
      server.close();
    }
  });

  it("reads the projection (the live schema, the build in progress) and ignores a malformed one, keeping the rest of the reading", async () => {
    const base = { slotLag: 4, lastProcessedSlot: '9', writer: 'w:1', indexerRunning: true };
    const build = { schema: 'p2', lastProcessedSlot: '812345', chainTipSlot: 812400 };
    const answers: Record<string, unknown> = {
      building: { live: 'public', build },
      none: { live: 'p2', build: null },
      fresh: { live: 'public', build: { schema: 'p3', lastProcessedSlot: null, chainTipSlot: null } },
      absent: undefined,
      'not-an-object': 'p2',
      'bad-live': { live: 'public; DROP', build: null },
      'build-public': { live: 'public', build: { ...build, schema: 'public' } },
      'slot-a-number': { live: 'public', build: { ...build, lastProcessedSlot: 812345 } },
      'tip-a-string': { live: 'public', build: { ...build, chainTipSlot: '812400' } },
      'tip-negative': { live: 'public', build: { ...build, chainTipSlot: -1 } },
      'build-missing': { live: 'public' },
    };
    const server = http.createServer((req, res) => {
      const projection = answers[(req.url ?? '').split('/')[1]!];
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ...base, projection }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const mis = Object.keys(answers).map((t) => ({ metadata: { name: t }, spec: { tenant: t } }) as unknown as MarketIndexer);
    const poller = createIndexerStatusPoller({
      urlTemplate: `http://127.0.0.1:${(server.address() as AddressInfo).port}/{tenant}/status`,
      intervalMs: 60_000,
      logger: testCommon().logger,
      list: () => mis,
      onChange: () => undefined,
    });
    try {
      await poller.pollOnce();
      const got = Object.fromEntries(mis.map((mi) => [mi.metadata.name, poller.get(mi)]));
      expect(got.building).toEqual({ ...base, projection: { live: 'public', build } });
      expect(got.none).toEqual({ ...base, projection: { live: 'p2', build: null } });
      expect(got.fresh).toEqual({ ...base, projection: { live: 'public', build: { schema: 'p3', lastProcessedSlot: null, chainTipSlot: null } } });
      for (const name of Object.keys(answers).slice(3)) expect([name, got[name]]).toEqual([name, base]);
    } finally {
      server.close();
    }
  });

  // Issue 41: a server streaming 300 MB took one poll from 90 to 409 MiB RSS.
  it(`refuses an answer over ${STATUS_BODY_LIMIT} bytes, reading no more of it, and says so in IndexerLagging`, async () => {
    let sent = 0;
    let closedEarly = 0;
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const server = http.createServer((req, res) => {
      if (req.url === '/declared/status') return void res.writeHead(200, { 'content-length': String(300 << 20) }).write(chunk);
      // Without a length, as long as the client reads: 300 MB of JSON whitespace.
      res.writeHead(200, { 'content-type': 'application/json' });
      const pump = () => {
        while (sent < 300 << 20 && res.write(chunk)) sent += chunk.length;
        if (sent >= 300 << 20) res.end();
      };
      res.on('drain', pump);
      res.on('close', () => {
        if (!res.writableFinished) closedEarly++;
      });
      pump();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const mis = ['streamed', 'declared'].map((t) => ({ metadata: { name: t }, spec: { tenant: t } }) as unknown as MarketIndexer);
    const poller = createIndexerStatusPoller({
      urlTemplate: `http://127.0.0.1:${(server.address() as AddressInfo).port}/{tenant}/status`,
      intervalMs: 60_000,
      logger: testCommon().logger,
      list: () => mis,
      onChange: () => undefined,
    });
    try {
      for (let i = 0; i < FAILURES_TO_FORGET; i++) await poller.pollOnce();
      const refused = { unavailable: `the indexer's /status answer is over ${STATUS_BODY_LIMIT} bytes: refused, not read` };
      expect(mis.map((mi) => poller.get(mi))).toEqual([refused, refused]);
      expect(lagCondition(poller.get(mis[0]!), 100)).toEqual({ type: 'IndexerLagging', status: 'Unknown', reason: 'StatusUnavailable', message: refused.unavailable });
      // The streaming server was cut off each time, far short of what it would have sent.
      await waitFor('the streamed connections closed', async () => closedEarly === FAILURES_TO_FORGET);
      expect(sent).toBeLessThan(FAILURES_TO_FORGET * (16 << 20));
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('reads a body in pieces up to the limit, and refuses one a byte over', async () => {
    const body = (text: string, headers: Record<string, string> = {}) =>
      new Response(new ReadableStream({ start: (c) => { for (const part of text.match(/.{1,7}/gs) ?? []) c.enqueue(new TextEncoder().encode(part)); c.close(); } }), { headers });
    expect(await cappedText(body('x'.repeat(100)), 100)).toBe('x'.repeat(100));
    expect(await cappedText(body('x'.repeat(101)), 100)).toBeUndefined();
    expect(await cappedText(body('{}', { 'content-length': '101' }), 100)).toBeUndefined();
  });
});

describe('operator: the interface variant of a MarketIndexer (D-159)', () => {
  const DEFAULTS = { networkPolicy: { egress: { database: { ipBlocks: [{ cidr: '10.0.0.0/16' }] }, redis: { ipBlocks: [{ cidr: '10.1.0.0/16' }] }, rpc: { ipBlocks: [{ cidr: '0.0.0.0/0' }] } } } };
  const mi = (spec: Record<string, unknown>) =>
    ({ apiVersion: 'marketindexer.dev/v1alpha1', kind: 'MarketIndexer', metadata: { name: 't', uid: 'u-1', generation: 1 }, spec: { tenant: 't', ...spec } }) as unknown as MarketIndexer;
  const apiSettings = (spec: Record<string, unknown>) => {
    const { objects } = renderTenant(mi(spec), { environment: 'test', defaults: DEFAULTS as never });
    const settings = (name: string) => (objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === name) as unknown as { data: Record<string, string> }).data;
    const api = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'market-indexer-api') as unknown as {
      spec: { template: { spec: { containers: { name: string; envFrom: { configMapRef: { name: string } }[] }[] } } };
    };
    // The API container takes its settings from that ConfigMap.
    expect(api.spec.template.spec.containers.find((c) => c.name === 'api')!.envFrom).toEqual([{ configMapRef: { name: 'market-indexer-api' } }]);
    return { api: settings('market-indexer-api'), indexer: settings('market-indexer-indexer') };
  };

  it('renders spec.variant legacy as API_VARIANT=legacy on the API pods only; without it, v1', () => {
    const legacy = apiSettings({ variant: 'legacy' });
    expect(legacy.api.API_VARIANT).toBe('legacy');
    expect(legacy.indexer.API_VARIANT).toBeUndefined();
    expect(apiSettings({}).api.API_VARIANT).toBe('v1');
  });

  it('refuses an unknown variant in the CRD schema (the API server) and in the render (InvalidSpec), naming the field', () => {
    const crd = marketIndexerCrd() as { spec: { versions: { schema: { openAPIV3Schema: Record<string, unknown> } }[] } };
    const schema = compileCrdSchema(crd.spec.versions[0]!.schema.openAPIV3Schema);
    const asJson = (spec: Record<string, unknown>) => JSON.parse(JSON.stringify(mi(spec))) as Record<string, unknown>;
    expect(schema.admit(asJson({ variant: 'legacy' }), undefined)).toEqual([]);
    expect(schema.admit(asJson({ variant: 'v2' }), undefined)).toEqual([{ field: 'spec.variant', message: expect.stringMatching(/must be equal to one of the allowed values/) }]);
    // The kit sets API_VARIANT from the variant: a spec cannot set it beside it (the API server prunes it).
    const withSetting = asJson({ settings: { API_VARIANT: 'legacy', LOG_LEVEL: 'warn' } });
    expect(schema.admit(withSetting, undefined)).toEqual([]);
    expect((withSetting.spec as { settings: unknown }).settings).toEqual({ LOG_LEVEL: 'warn' });
    let thrown: unknown;
    try {
      renderTenant(mi({ variant: 'v2' }), { environment: 'test', defaults: DEFAULTS as never });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(KitInputError);
    expect((thrown as KitInputError).problems).toContain('variant: must be one of "v1", "legacy"');
  });
});
