import { readFileSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import YAML from 'yaml';
import { createDatabase, type Database } from '../../core/db';
import { createApp } from '../../server/app';
import { DOCS_ASSETS, DOCS_SECURITY_HEADERS } from '../../server/http/docs';
import { createApiStores } from '../../server/stores';
import { serve } from '../support/api';
import { testCommon } from '../support/common';
import { OPENAPI_PATH } from '../support/openapi';
import { createTestDatabase, type TestDatabase } from '../support/pg';

// Flags for a closed network: without the background-networking ones Chromium keeps trying
// (and failing) to reach Google's hosts.
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

describe('/docs in headless Chromium', () => {
  let tdb: TestDatabase;
  let database: Database;
  let browser: Browser;
  beforeAll(async () => {
    tdb = await createTestDatabase();
    database = createDatabase({ url: tdb.url, poolMax: 2 });
    browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: CHROMIUM_ARGS });
  });
  afterAll(async () => {
    await browser?.close();
    await database.close();
    await tdb.drop();
  });

  it('renders every operation of openapi.yaml, loading every asset from the API itself', async () => {
    const common = testCommon();
    const api = await serve(createApp({ common, db: database.db, docs: true, ...createApiStores(common, undefined) }));
    const page = await browser.newPage();
    const requested: string[] = [];
    page.on('request', (r) => requested.push(r.url()));
    // Anything the page's Content-Security-Policy blocks is reported on the console.
    const blocked: string[] = [];
    page.on('console', (m) => /Content Security Policy/i.test(m.text()) && blocked.push(m.text()));
    try {
      const res = await page.goto(`${api.url}/docs`);
      expect(res?.status()).toBe(200);
      const doc = YAML.parse(readFileSync(OPENAPI_PATH, 'utf8')) as { paths: Record<string, Record<string, unknown>>; info: { title: string } };
      const operations = Object.values(doc.paths).flatMap((p) => Object.keys(p).filter((k) => ['get', 'post', 'put', 'patch', 'delete'].includes(k)));
      // Swagger UI renders one block per operation, with its path.
      await page.waitForSelector('.opblock', { timeout: 30_000 });
      expect(await page.locator('.opblock').count()).toBe(operations.length);
      const paths = await page.locator('.opblock-summary-path').allTextContents();
      expect(paths.map((p) => p.replace(/\u200b/g, ''))).toContain('/api/v1/markets/current');
      expect(await page.locator('.info .title').textContent()).toContain(doc.info.title);
      expect(requested.length).toBeGreaterThan(2);
      expect(requested.filter((u) => !u.startsWith(api.url))).toEqual([]);
      // Issue 41: rendered under its own CSP with nothing blocked, each answer with the headers.
      expect(blocked).toEqual([]);
      for (const u of [...new Set(requested)]) {
        const r = await fetch(u);
        // Read to the end: an unread body this large (the Swagger UI bundle) holds its socket open.
        await r.arrayBuffer();
        expect([u, r.headers.get('content-security-policy'), r.headers.get('x-content-type-options')]).toEqual([u, DOCS_SECURITY_HEADERS['content-security-policy'], 'nosniff']);
      }
      expect(DOCS_SECURITY_HEADERS['content-security-policy']).toContain("frame-ancestors 'none'");
      // Only the assets the page uses: not Swagger UI's stock index (it loads petstore.swagger.io), no source maps.
      const refused = ['index.html', 'swagger-initializer.js', 'swagger-ui-bundle.js.map', 'swagger-ui.css.map', 'swagger-ui.js', 'swagger-ui-es-bundle.js', 'oauth2-redirect.html', '', '../package.json'];
      for (const f of refused) expect([f, (await fetch(`${api.url}/docs/assets/${f}`)).status]).toEqual([f, 404]);
      expect(requested.filter((u) => u.includes('/docs/assets/')).map((u) => u.split('/').pop()).sort()).toEqual([...DOCS_ASSETS].sort());
    } finally {
      await page.close();
      await api.close();
    }
  }, 60_000);
});
