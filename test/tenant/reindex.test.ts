import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createDatabase, type Database } from '../../core/db';
import { readLiveSchema } from '../../core/db/live-projection';
import { projectionSchema } from '../../core/db/projection-schema';
import { PROJECTION_VERSION } from '../../core/db/projection-version';
import { stringify } from 'yaml';
import { fromObjects, type K8sObject, type RenderedTenant } from '../../local/tenant/manifests';
import { projectionNextRelease } from '../../local/tenant/release';
import { applyTenant } from '../../local/tenant/rollout';
import { ROOT, startTenant, withHarnessOverlay, type PodCode, type RunningTenant } from '../../local/tenant/runner';
import { RELEASE_VERSION } from '../../core/release';
import { dropDatabase } from '../../local/tenant/stores';
import { CLOSE } from '../../server/ws/protocol';
import { bashBlocks, commandsOf } from '../support/doc-commands';
import { ADMIN_DATABASE_URL } from '../support/env';
import { helm, KUBE_VERSION, parseManifests, ROOT as KIT_ROOT } from '../support/kit';
import { switchingClient, type SwitchingClient } from './reindex-clients';
import { steadyReader, tablesAgainstUninterrupted } from './upgrade-clients';

/**
 * A re-index on staging's tenant alpha, with the two commands docs/deploy.md#re-indexing gives
 * (run as written, with one liberty: `helm template` for `helm upgrade --install`, there being no
 * cluster, and the harness's values file after the doc's flags, as `npm run tenant` merges it).
 * The tenant runs this release (projection version N, tables in `public`); the doc's next
 * release (its image tag) is this checkout with the projection bumped to N + 1. Step 1 asks for a
 * re-index (`indexer.build` with the next release's image): the builder appears beside the live
 * indexer, nothing else is rolled, and it switches the API to its schema once caught up. Step 2
 * upgrades the tenant to the next release and drops the builder: API and indexer roll, the new
 * live indexer takes the built schema over.
 * Clients are connected throughout: a steady reader through the Ingress (no failed request), and
 * /ws clients that start over when told `4010` (every seq once per schema). The built tables
 * equal the same chain indexed without interruption, and so do the old ones where they stopped.
 */
const DOMAIN_OVERLAY = {
  settings: { WS_MAX_CONNECTIONS_PER_IP: 1000, PUBLIC_READ_RATE_LIMIT_MAX_REQUESTS: 100000, RATE_LIMIT_MAX_REQUESTS: 100000 },
};
const INSTALL = 'npm run helm -- upgrade --install market-indexer charts/market-indexer --namespace market-indexer -f charts/market-indexer/values-staging.yaml';
const CLIENTS = 50;
const MIN = 60_000;

const until = (what: string, check: () => boolean | Promise<boolean>, timeoutMs = 2 * MIN) =>
  new Promise<void>((resolve, reject) => {
    const at = Date.now();
    const tick = async () => ((await check()) ? resolve() : Date.now() - at > timeoutMs ? reject(new Error(`timed out waiting for ${what}`)) : setTimeout(() => void tick(), 200));
    void tick();
  });

describe('a re-index without downtime (issue 39)', () => {
  const database = `mi_e2e_reindex_${process.pid}`;
  let runDir: string;
  let next: { version: number; code: PodCode };
  let t: RunningTenant;
  let db: Database;
  let clients: SwitchingClient[] = [];
  let reader: ReturnType<typeof steadyReader> | undefined;
  let statusReader: ReturnType<typeof steadyReader> | undefined;

  /** Tenant alpha as a `npm run helm -- upgrade --install …` command renders it (helm template, the harness's values last). */
  const helmTenant = async (command: string): Promise<RenderedTenant> => {
    const words = command.replace(/\\\n/g, ' ').trim().split(/\s+/);
    const verb = ['npm', 'run', 'helm', '--', 'upgrade', '--install'];
    expect(words.slice(0, verb.length)).toEqual(verb);
    const r = await helm(['template', ...words.slice(verb.length), '--kube-version', KUBE_VERSION, '-f', path.join(runDir, 'harness-values.yaml')]);
    if (r.code !== 0) throw new Error(`${command}: ${r.stderr}`);
    const objects = parseManifests(r.stdout).filter(
      (o) => (o.metadata.namespace === 'mi-alpha' || (o.kind === 'Namespace' && o.metadata.name === 'mi-alpha')) && !o.metadata.annotations?.['helm.sh/hook'],
    );
    return fromObjects(objects as unknown as K8sObject[], []);
  };
  /** A pod of the current release's image runs this checkout; any other tag is the next release. */
  const codeOf = (image: string): PodCode => (image.endsWith(`:${RELEASE_VERSION}`) ? { root: ROOT } : next.code);
  const programIdOf = (r: RenderedTenant) =>
    (r.objects.filter((o) => o.kind === 'ConfigMap') as unknown as { data?: Record<string, string> }[]).map((c) => c.data?.PROGRAM_ID).find((x) => x !== undefined)!;
  const pointer = () => readLiveSchema(db.db);
  const cursorOf = async (schema: string) => Number((await db.db.one<{ s: string }>(`SELECT last_processed_slot AS s FROM ${schema}.indexer_cursor WHERE id = 1`)).s);
  const apiSlot = async () => Number(((await (await fetch(`${t.frontUrl}/api/v1/status`)).json()) as { data: { lastProcessedSlot: string } }).data.lastProcessedSlot);

  beforeAll(async () => {
    runDir = mkdtempSync(path.join(os.tmpdir(), 'mi-reindex-'));
    next = projectionNextRelease(ROOT, path.join(ROOT, '.data', 'releases', 'projection-next'));
    writeFileSync(path.join(runDir, 'harness-values.yaml'), stringify(withHarnessOverlay(DOMAIN_OVERLAY)));
    // The tenant as installed: staging's values, this release's image.
    const installed = await helmTenant(INSTALL);
    const manifests = path.join(runDir, 'manifests');
    mkdirSync(manifests);
    writeFileSync(path.join(manifests, 'alpha.yaml'), installed.objects.map((o) => stringify(o)).join('---\n'));
    t = await startTenant({ env: 'staging', tenant: 'alpha', manifestsDir: manifests, runDir, database, fresh: true, adminDatabaseUrl: ADMIN_DATABASE_URL });
    await t.allReady();
    db = createDatabase({ url: t.databaseUrl, poolMax: 2 });
  }, 10 * MIN);
  afterAll(async () => {
    clients.forEach((c) => c.stop());
    await reader?.stop();
    await statusReader?.stop();
    await db?.close();
    await t?.stop();
    await dropDatabase(ADMIN_DATABASE_URL, database);
    rmSync(runDir, { recursive: true, force: true });
  }, 2 * MIN);

  it(`builds projection ${PROJECTION_VERSION + 1} beside ${PROJECTION_VERSION} under load, switches every client to it, then upgrades: no failed request, every /ws seq once per schema, the built tables as an uninterrupted run`, async () => {
    expect(next.version).toBe(PROJECTION_VERSION + 1);
    const built = projectionSchema(next.version);
    await until('the live tables to hold a few slots', async () => (await cursorOf('public')) > 20);
    expect(await pointer()).toBe('public');

    const epoch = Math.floor(Date.now() / MIN);
    const channels = Array.from({ length: CLIENTS }, (_, i) => [`orderbook:${epoch + (i % 4)}`, `orderbook:${epoch + 4 + (i % 4)}`]);
    const wsUrl = `${t.frontUrl.replace('http', 'ws')}/ws`;
    clients = channels.map((chs) => switchingClient(wsUrl, chs));
    for (let i = 0; i < clients.length; i += 10) await Promise.all(clients.slice(i, i + 10).map((c) => c.connect()));
    reader = steadyReader(`${t.frontUrl}/api/v1/markets?limit=1`);
    statusReader = steadyReader(`${t.frontUrl}/api/v1/status`);
    const pods = () => t.pods.map((p) => p.name).sort();
    const before = pods();

    const [startBuilder, upgrade] = commandsOf(bashBlocks(path.join(KIT_ROOT, 'docs/deploy.md'), '### Run a re-index')[0]!);
    // Step 1: the re-index asked for. Only the builder's pod is added; it switches the pointer by itself.
    const building = await helmTenant(startBuilder!);
    const builderStartedAt = Date.now();
    const step1 = await applyTenant({ tenant: t, to: building, codeOf, revision: 'b1' });
    expect(step1.map((r) => r.deployment)).toEqual(['market-indexer-indexer-build']);
    expect(pods()).toEqual([...before, 'market-indexer-indexer-build-b1-0'].sort());
    await until(`the builder to switch the API to ${built}`, async () => (await pointer()) === built, 5 * MIN);
    process.stdout.write(`re-index: switched to ${built} ${((Date.now() - builderStartedAt) / 1000).toFixed(1)} s after the builder's pod was created; public at slot ${await cursorOf('public')}, ${built} at ${await cursorOf(built)}\n`);
    // Every client was told, once, and is subscribed again on the new sequence.
    const state = () => JSON.stringify(clients.map((c) => ({ generations: c.generations(), open: c.open(), received: c.receivedNow(), closes: c.closes, errors: c.errors.length })).slice(0, 5));
    await until('every /ws client to start over on the built schema', () => clients.every((c) => c.generations() === 2 && c.open()), MIN).catch((err: Error) => {
      throw new Error(`${err.message}: ${state()}`);
    });
    for (const c of clients) expect(c.closes).toEqual([CLOSE.projectionSwitched]);
    // Updates of the built schema reach them (the books of the next minutes move with the simulated traders).
    const receivedAtSwitch = clients.reduce((n, c) => n + c.receivedNow(), 0);
    await until('updates of the built schema to reach the clients', () => clients.reduce((n, c) => n + c.receivedNow(), 0) > receivedAtSwitch + CLIENTS, 2 * MIN).catch((err: Error) => {
      throw new Error(`${err.message}: ${state()}`);
    });

    // Step 2: the tenant upgraded to the next release, the builder dropped: the new live indexer takes the built schema over.
    const okBefore = reader.ok();
    process.stdout.write(`re-index: step 2 (the upgrade) from ${new Date().toISOString()}\n`);
    const upgraded = await helmTenant(upgrade!);
    const step2 = await applyTenant({ tenant: t, to: upgraded, codeOf, revision: 'r2' });
    expect(step2.map((r) => r.deployment).sort()).toEqual(['market-indexer-api', 'market-indexer-indexer', 'market-indexer-indexer-build']);
    expect(pods()).toEqual(['market-indexer-api', 'market-indexer-indexer'].flatMap((d) => [0, 1].map((i) => `${d}-r2-${i}`)).sort());
    // The old release's writer is gone: public stops where it was; the API answers from the built schema, which moves on.
    const publicAt = await cursorOf('public');
    await until('the API to answer past where public stopped', async () => (await apiSlot()) > publicAt + 5, 2 * MIN);
    await until('the reader to go on', () => reader!.ok() > okBefore + 20);
    expect(await pointer()).toBe(built);

    const tallies = clients.flatMap((c) => c.tally());
    const gaps = tallies.reduce((n, x) => n + x.gaps, 0);
    const duplicates = tallies.reduce((n, x) => n + x.duplicates, 0);
    const updates = tallies.reduce((n, x) => n + x.received, 0);
    const closes = clients.flatMap((c) => c.closes);
    const chainDir = path.join(t.runDir, 'chain');
    const programId = programIdOf(upgraded);
    const newTables = await tablesAgainstUninterrupted({ databaseUrl: t.databaseUrl, chainDir, programId, schema: built });
    const oldTables = await tablesAgainstUninterrupted({ databaseUrl: t.databaseUrl, chainDir, programId });
    process.stdout.write(
      `re-index: REST ${reader.ok() + statusReader.ok()} ok, ${reader.failures.length + statusReader.failures.length} failed; /ws ${CLIENTS} clients, ${updates} updates, ${gaps} gaps, ${duplicates} duplicates, closes ${closes.filter((c) => c === CLOSE.projectionSwitched).length} × 4010 and ${closes.length - closes.filter((c) => c === CLOSE.projectionSwitched).length} others; ${built} at slot ${newTables.slot}: ${newTables.differing.length} differing; public at slot ${oldTables.slot}: ${oldTables.differing.length} differing\n`,
    );
    expect([...reader.failures, ...statusReader.failures]).toEqual([]);
    expect(clients.flatMap((c) => c.errors)).toEqual([]);
    expect({ gaps, duplicates }).toEqual({ gaps: 0, duplicates: 0 });
    expect(closes.filter((c) => c === CLOSE.projectionSwitched)).toHaveLength(CLIENTS);
    expect(newTables.differing).toEqual([]);
    expect(oldTables.differing).toEqual([]);
  }, 20 * MIN);
});
