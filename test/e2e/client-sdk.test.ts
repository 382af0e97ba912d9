import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { build } from 'esbuild';
import { chromium, type Browser } from 'playwright-core';
import { createKeys } from '../../core/redis/keys';
import { createRedisUpdateLog } from '../../core/redis/updates';
import * as sdk from '../../client/src';
import { createNodeSocket } from '../../client/src/node';
import { apiSuite, type ApiProcess } from '../support/api-servers';
import { connectRedis } from '../support/redis';
import { runGuideScript } from '../support/guide-script';
import { startFreezableProxy } from '../support/tcp-proxy';
import { scenario, type ScenarioHooks, type ScenarioResult } from './client-sdk-scenario';

/**
 * The SDK against a running API process (D-522..D-527): the same scenario in Node 20 (the `ws`
 * package) and in headless Chromium, from a page on another origin than the API (D-521), with
 * the browser build (`client/dist/browser.js`). A TCP proxy in front of the API cuts every
 * connection mid-scenario: the book must come back through the resumed subscription.
 */
const ROOT = path.resolve(__dirname, '../..');
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

describe('the client SDK against the API, in Node and in Chromium', () => {
  const suite = apiSuite();
  const redis = connectRedis();
  let browser: Browser;
  let page: http.Server;
  let pageOrigin: string;
  let api: ApiProcess;
  let proxy: Awaited<ReturnType<typeof startFreezableProxy>>;
  let files: Record<string, string>;
  const market = { marketId: '1', address: '' };

  beforeAll(async () => {
    // The package's own build, as `npm install ./client` runs it (its prepare script).
    execFileSync(process.execPath, [path.join(ROOT, 'client/build.mjs')], { stdio: 'pipe' });
    const scenarioJs = (await build({ entryPoints: [path.join(__dirname, 'client-sdk-scenario.ts')], bundle: true, format: 'esm', platform: 'browser', write: false })).outputFiles[0]!.text;
    files = {
      '/sdk.js': readFileSync(path.join(ROOT, 'client/dist/browser.js'), 'utf8'),
      '/scenario.js': scenarioJs,
      '/': `<!doctype html><title>a market front end</title><script type="module">
        import * as sdk from '/sdk.js';
        import { scenario } from '/scenario.js';
        window.run = (o) => scenario(sdk, undefined, { ...o, publish: window.publish, cut: window.cut, restore: window.restore });
        window.ready = true;
      </script>`,
    };
    page = http.createServer((req, res) => {
      const body = files[req.url ?? ''];
      if (body === undefined) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': req.url === '/' ? 'text/html' : 'text/javascript' }).end(body);
    });
    await new Promise<void>((r) => page.listen(0, '127.0.0.1', r));
    pageOrigin = `http://127.0.0.1:${(page.address() as { port: number }).port}`;
    const signer = await sdk.generateSigner();
    market.address = signer.publicKey;
    await suite.db.none(
      `INSERT INTO markets (id, address, market_id, settlement_mint, state, t_start, t_end, created_at, updated_at, created_slot, created_signature)
       VALUES (1, $1, 1, 'mint', 2, to_timestamp(0), to_timestamp(60), now(), now(), 1, 's')`,
      [market.address],
    );
    // The list's counts, as the indexer's projection keeps them with each market it writes.
    await suite.db.none(`UPDATE market_counts SET n = n + 1 WHERE state = 2`);
    await suite.db.none(
      `INSERT INTO market_list_blocks (block, state, n) SELECT market_list_block(1), s.state, CASE WHEN s.state = 2 THEN 1 ELSE 0 END FROM market_counts s`,
    );
    api = await suite.startProcess({ CORS_ALLOWED_ORIGINS: pageOrigin, PUBLIC_HOSTS: '127.0.0.1', PUBLIC_READ_RATE_LIMIT_MAX_REQUESTS: '100000', RATE_LIMIT_MAX_REQUESTS: '100000', RATE_LIMIT_SENSITIVE_MAX: '100000' }, suite.db);
    proxy = await startFreezableProxy({ host: '127.0.0.1', port: api.port });
    browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: CHROMIUM_ARGS });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await proxy?.close();
    await new Promise((r) => page?.close(r));
    redis.disconnect();
  });

  const hooks = (): Omit<ScenarioHooks, 'baseUrl'> => {
    const log = createRedisUpdateLog({ redis, keys: createKeys(api.common.config.tenantId) });
    let slot = 0;
    return {
      market,
      publish: (updates) => log.append(updates.map((u) => ({ ...u, slot: ++slot }))),
      cut: async () => proxy.down(),
      restore: async () => proxy.up(),
    };
  };
  const baseUrl = () => proxy.url.replace(/^redis:/, 'http:');

  const expectScenario = (r: ScenarioResult) => {
    expect(r.marketsSeen).toEqual(['1']);
    expect(r.signedStatus).toBe(200);
    expect(r.errorName).toBe('ValidationError');
    expect(r.positionsUpdate).toMatchObject({ type: 'update', seq: expect.any(Number), data: { yesShares: '5' } });
    expect(r.bookBefore).toMatchObject({ bestBid: 4100, bestAsk: 5900, source: 'update' });
    // Resumed, not started over: the update sent while cut came by replay, with no new snapshot.
    expect(r.bookAfter).toMatchObject({ bestBid: 4200, bestAsk: 5800, source: 'update' });
    expect(r.snapshots).toBe(1);
    expect(r.connections).toBeGreaterThanOrEqual(2);
    expect(r.closes.length).toBeGreaterThanOrEqual(1);
  };

  it('runs the scenario in Node 20 with the ws package', async () => {
    expectScenario(await scenario(sdk, createNodeSocket, { baseUrl: baseUrl(), ...hooks() }));
  }, 60_000);

  it('runs the same scenario in Chromium from a page on another origin, with the browser build', async () => {
    const tab = await browser.newPage();
    const h = hooks();
    await tab.exposeFunction('publish', h.publish);
    await tab.exposeFunction('cut', h.cut);
    await tab.exposeFunction('restore', h.restore);
    const problems: string[] = [];
    tab.on('pageerror', (e) => problems.push(e.message));
    await tab.goto(`${pageOrigin}/`);
    await tab.waitForFunction(() => (globalThis as unknown as { ready?: boolean }).ready === true);
    const r = (await tab.evaluate((o) => (globalThis as unknown as { run(o: unknown): Promise<ScenarioResult> }).run(o), { baseUrl: baseUrl(), market })) as ScenarioResult;
    expectScenario(r);
    expect(problems).toEqual([]);
    // The page is on another origin: the answers it read were CORS-allowed, none were opaque.
    expect(new URL(baseUrl()).origin).not.toBe(pageOrigin);
    await tab.close();
  }, 60_000);

  it("runs docs/client.md's first script as written, with the package where npm install ./client puts it", async () => {
    const stdout = await runGuideScript('A first script', 'first.mjs', { API_URL: baseUrl() }, 30_000);
    expect(stdout).toContain(`market 1 ${market.address} state 2`);
    expect(stdout).toMatch(/^positions: 0$/m);
    expect(stdout).toMatch(/^book 1: bid (null|\d+) ask (null|\d+)$/m);
  }, 60_000);
});
