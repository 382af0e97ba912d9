import { readFileSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import YAML from 'yaml';
import { createDatabase, type Database } from '../../core/db';
import { createApp } from '../../server/app';
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
    } finally {
      await page.close();
      await api.close();
    }
  }, 60_000);
});
