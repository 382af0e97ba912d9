import http from 'node:http';
import path from 'node:path';
import { ENVIRONMENTS } from '../../cdk8s/environments';
import { synthEnvironment } from '../../cdk8s/synth';
import { SETTINGS } from '../../core/config/settings';
import { applyKeepAlive } from '../../core/http/keep-alive';
import { HIGH_LIMITS } from '../support/api';
import { CHART, helmTemplate, type Manifest } from '../support/kit';
import { createTestDatabase, type TestDatabase } from '../support/pg';
import { spawnApi, spawnIndexer, tenantEnv, type Child } from '../support/processes';

/** One GET on a fresh connection: its `Keep-Alive` header. */
const keepAliveHeader = (port: number, pathname: string) =>
  new Promise<string | undefined>((resolve, reject) => {
    const agent = new http.Agent({ keepAlive: true });
    http
      .get({ host: '127.0.0.1', port, path: pathname, agent }, (res) => {
        res.resume();
        res.on('end', () => {
          agent.destroy();
          resolve(res.headers['keep-alive'] as string | undefined);
        });
      })
      .on('error', reject);
  });

/**
 * Issue 41 item 7: the API and the indexer answered `Keep-Alive: timeout=5` (Node's default) while
 * ingress-nginx keeps upstream connections 60 s, so a request on a connection the process had just
 * closed got a 502. Both now keep idle connections `HTTP_KEEP_ALIVE_TIMEOUT_MS` (D-282).
 */
describe('HTTP keep-alive above the ingress\'s upstream keep-alive', () => {
  let tdb: TestDatabase;
  const children: Child[] = [];
  beforeAll(async () => {
    tdb = await createTestDatabase();
  });
  afterAll(async () => {
    for (const c of children) {
      c.child.kill('SIGTERM');
      await c.exited;
    }
    await tdb.drop();
  });

  it('defaults above ingress-nginx\'s 60 s, the header timeout above it', () => {
    expect(SETTINGS.HTTP_KEEP_ALIVE_TIMEOUT_MS.default).toBeGreaterThan(60_000);
    const server = applyKeepAlive(http.createServer(), 75_000);
    expect([server.keepAliveTimeout, server.headersTimeout, server.requestTimeout > server.headersTimeout]).toEqual([75_000, 76_000, true]);
    const long = applyKeepAlive(http.createServer(), 400_000);
    expect(long.requestTimeout).toBeGreaterThan(long.headersTimeout);
  });

  it('is what the API and the indexer processes answer: the default, and the setting when given', async () => {
    const env = tenantEnv(tdb.url, HIGH_LIMITS);
    const indexer = spawnIndexer(['--source', 'simulator', '--seed', '41', '--realtime', '--feeds', '1'], { ...env, HTTP_KEEP_ALIVE_TIMEOUT_MS: '90000' });
    children.push(indexer);
    const api = spawnApi(env);
    children.push(api);
    expect(await keepAliveHeader(await indexer.port, '/health')).toBe('timeout=90');
    expect(await keepAliveHeader(await api.port, '/health')).toBe(`timeout=${SETTINGS.HTTP_KEEP_ALIVE_TIMEOUT_MS.default / 1000}`);
  }, 120_000);

  it('is rendered into the API\'s and the indexer\'s ConfigMaps by both doors, a tenant\'s setting winning', async () => {
    const keepAliveOf = (objects: Manifest[]) =>
      objects
        .filter((o) => o.kind === 'ConfigMap' && (o as { data?: Record<string, string> }).data?.HTTP_KEEP_ALIVE_TIMEOUT_MS !== undefined)
        .map((o) => `${o.metadata.name}=${(o as unknown as { data: Record<string, string> }).data.HTTP_KEEP_ALIVE_TIMEOUT_MS}`)
        .sort();
    const env = structuredClone(ENVIRONMENTS.dev!);
    const [tenant] = Object.keys(env.tenants);
    env.tenants[tenant!] = { ...env.tenants[tenant!], settings: { ...env.tenants[tenant!]!.settings, HTTP_KEEP_ALIVE_TIMEOUT_MS: 95_000 } } as never;
    const fromCdk8s = keepAliveOf(synthEnvironment(env, 'test').flatMap((f) => f.objects as Manifest[]));
    const fromHelm = keepAliveOf(await helmTemplate([path.join(CHART, 'values-dev.yaml'), { tenants: { [tenant!]: { settings: { HTTP_KEEP_ALIVE_TIMEOUT_MS: 95_000 } } } }]));
    expect(fromCdk8s).toEqual(fromHelm);
    expect(fromCdk8s.filter((c) => c.endsWith('=95000')).length).toBe(2);
    expect(fromCdk8s.length).toBeGreaterThanOrEqual(2);
  });
});
