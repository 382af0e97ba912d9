import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { marketIndexerCrd, type Condition, type MarketIndexer } from '../../cdk8s/lib/crd';
import { OPERATOR_NAME } from '../../cdk8s/lib/operator-permissions';
import { synthEnvironment } from '../../cdk8s/synth';
import type { Json } from '../../local/kube-apiserver/fields';
import { startTestApiServer, type TestApiServer } from '../../local/kube-apiserver/server';
import { LEASE_NAME } from '../../operator/run';
import { ensureTool } from '../../scripts/kit-tools';
import { bashBlocks, commandsOf } from '../support/doc-commands';
import { parseManifests, ROOT } from '../support/kit';
import { spawnOperator, type Child } from '../support/processes';
import { waitFor } from '../support/tables';

// A re-index as a person watching the cluster sees it (issue 39, D-436 to D-438): the operator
// process reads a tenant indexer's /status (served here) reporting a build, then the switch; the
// real kubectl lists the MarketIndexers from the test API server (local/kube-apiserver), whose
// Table output follows the CRD's printer columns. The operator's other behaviour, against the
// same server with the kit's RBAC: test/journeys/operator.test.ts.
jest.setTimeout(120_000);

const PLATFORM_NAMESPACE = 'market-indexer-system';
const run = promisify(execFile);

describe('operator: a re-index in kubectl get marketindexers', () => {
  let api: TestApiServer;
  let dir: string;
  let kubectlBin: string;
  let statusServer: http.Server;
  let operator: Child;
  const indexer = { slotLag: 3, lastProcessedSlot: '812397', writer: 'indexer-alpha-0:7', indexerRunning: true };
  let projection: unknown = { live: 'public', build: null };

  const s = () => api.store;
  const type = (group: string, version: string, plural: string) => s().typeOf(group, version, plural);
  const MI = () => type('marketindexer.dev', 'v1alpha1', 'marketindexers');
  const getMi = (name: string) => s().find(MI(), undefined, name) as unknown as MarketIndexer | undefined;
  const reindexing = () => (getMi('alpha')?.status?.conditions as Condition[] | undefined)?.find((c) => c.type === 'Reindexing');
  const events = () => s().list(type('', 'v1', 'events'), PLATFORM_NAMESPACE, []).filter((e) => (e.involvedObject as Json).name === 'alpha');
  const kubectl = async (...args: string[]) => (await run(kubectlBin, ['--kubeconfig', path.join(dir, 'admin.kubeconfig'), ...args])).stdout;

  beforeAll(async () => {
    kubectlBin = await ensureTool('kubectl');
    api = await startTestApiServer();
    dir = mkdtempSync(path.join(os.tmpdir(), 'operator-reindex-'));
    writeFileSync(path.join(dir, 'admin.kubeconfig'), api.kubeconfig());
    const defaults = { image: { tag: '1.0.0' }, networkPolicy: { egress: { database: { ipBlocks: [{ cidr: '10.0.0.0/16' }] }, redis: { ipBlocks: [{ cidr: '10.1.0.0/16' }] }, rpc: { ipBlocks: [{ cidr: '0.0.0.0/0' }] } } } };
    const platform = synthEnvironment({ environment: 'test', ...defaults, platform: { namespace: PLATFORM_NAMESPACE }, tenants: {} }, 'the e2e environment').find((f) => f.name === 'platform.yaml')!.objects as Json[];
    const defaultsCm = platform.find((o) => o.kind === 'ConfigMap' && (o.metadata as Json).name === `${OPERATOR_NAME}-defaults`)!;
    writeFileSync(path.join(dir, 'defaults.json'), (defaultsCm.data as Json)['defaults.json'] as string);
    s().create(type('', 'v1', 'namespaces'), undefined, { metadata: { name: PLATFORM_NAMESPACE } }, 'test');
    const crds = type('apiextensions.k8s.io', 'v1', 'customresourcedefinitions');
    s().create(crds, undefined, marketIndexerCrd(), 'test');
    for (const crd of parseManifests(readFileSync(path.join(ROOT, 'cdk8s/crds/monitoring.coreos.com.yaml'), 'utf8'))) s().create(crds, undefined, crd, 'test');
    statusServer = http.createServer((_req, res) => void res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ status: 'healthy', synced: true, ...indexer, projection })));
    await new Promise<void>((r) => statusServer.listen(0, '127.0.0.1', r));
    operator = spawnOperator(['--kubeconfig', path.join(dir, 'admin.kubeconfig')], {
      OPERATOR_ENVIRONMENT: 'test',
      OPERATOR_DEFAULTS_FILE: path.join(dir, 'defaults.json'),
      OPERATOR_STATUS_URL: `http://127.0.0.1:${(statusServer.address() as AddressInfo).port}/{tenant}/status`,
      OPERATOR_STATUS_SECONDS: '1',
      OPERATOR_LEASE_SECONDS: '3',
    });
    await waitFor('the operator to lead', async () => s().find(type('coordination.k8s.io', 'v1', 'leases'), PLATFORM_NAMESPACE, LEASE_NAME));
    s().create(MI(), undefined, { apiVersion: 'marketindexer.dev/v1alpha1', kind: 'MarketIndexer', metadata: { name: 'alpha' }, spec: { tenant: 'alpha', source: { type: 'simulator' }, devStores: { enabled: true }, monitoring: { enabled: false } } }, 'test');
  });

  afterAll(async () => {
    operator?.child.kill('SIGKILL');
    await operator?.exited;
    statusServer?.close();
    await api?.close();
  });

  it('shows the build\'s slots in the Reindex column while the indexer reports one, then the switch, with one ProjectionSwitched Event', async () => {
    await waitFor('not reindexing', async () => reindexing()?.reason === 'NotReindexing');
    // docs/deploy.md's command for watching a re-index, as written.
    const watch = commandsOf(bashBlocks(path.join(ROOT, 'docs/deploy.md'), '### Watch it')[0]!)[0]?.trim();
    expect(watch).toBe('kubectl get marketindexers');
    expect(await kubectl(...watch!.split(' ').slice(1))).toMatch(/^NAME\s+TENANT\s+READY\s+REASON\s+SLOT LAG\s+REINDEX\s+AGE\nalpha\s+alpha\s+False\s+\w+\s+3\s+none: the API reads public\s+\d+s\n$/);

    // The live indexer's /status reports a build: the condition and the column show its slots.
    projection = { live: 'public', build: { schema: 'p2', lastProcessedSlot: '812345', chainTipSlot: 812400 } };
    await waitFor('reindexing', async () => reindexing()?.status === 'True');
    expect(reindexing()).toMatchObject({ reason: 'Building', message: 'p2 at slot 812,345 of 812,400 (55 behind)', observedGeneration: 1 });
    expect(await kubectl('get', 'marketindexers')).toMatch(/^alpha\s+alpha\s+False\s+\w+\s+3\s+p2 at slot 812,345 of 812,400 \(55 behind\)\s+\d+s$/m);
    expect(getMi('alpha')!.status!.projection).toEqual({ liveSchema: 'public', build: { schema: 'p2', lastProcessedSlot: '812345', chainTipSlot: 812400, slotLag: 55, observedAt: expect.any(String) } });

    // The switch: the live schema changes between two readings.
    projection = { live: 'p2', build: null };
    await waitFor('switched', async () => reindexing()?.reason === 'Switched');
    expect(await kubectl('get', 'marketindexers', 'alpha')).toMatch(/^alpha\s+alpha\s+False\s+\w+\s+3\s+switched from public to p2\s+\d+s$/m);
    // The Event is a write of its own after the status: wait for it rather than race it.
    await waitFor('the switch Event', async () => events().some((e) => e.reason === 'ProjectionSwitched'));
    expect(events().filter((e) => ['ProjectionSwitched', 'Building', 'Switched'].includes(e.reason as string)).map((e) => `${e.type} ${e.reason}: ${e.message}`)).toEqual([
      'Normal Building: Reindexing=True: p2 at slot 812,345 of 812,400 (55 behind)',
      'Normal ProjectionSwitched: the API reads p2, switched from public',
    ]);
  });
});
