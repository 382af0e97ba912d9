import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { OPERATOR_NAME, tenantBinding } from '../../cdk8s/lib/operator-permissions';
import { synthEnvironment } from '../../cdk8s/synth';
import type { Json } from '../../local/kube-apiserver/fields';
import { createRbacAuthorizer, serviceAccountIdentity } from '../../local/kube-apiserver/rbac';
import { startTestApiServer, type TestApiServer } from '../../local/kube-apiserver/server';
import { renderTenant } from '../../operator/render';
import { ensureTool } from '../../scripts/kit-tools';
import { ROOT } from '../support/kit';

// Issue 41's reproductions with a stolen operator token, by the real kubectl (v1.33) against the
// test API server enforcing the RBAC and the admission policies the kit renders (D-260, D-275,
// D-276): each must fail to reproduce. The operator's own writes under the same policies:
// test/journeys/operator.test.ts; each check of the policies: test/unit/operator-admission.test.ts.
const run = promisify(execFile);
jest.setTimeout(60_000);

const PLATFORM = 'market-indexer-system';
const ACCESS_KINDS = ['ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding'];
const PSA = 'pod-security.kubernetes.io/enforce';

describe("a stolen operator token, by kubectl: no privileged tenant namespace, no namespace of its own, no retained namespace back", () => {
  let api: TestApiServer;
  let dir: string;
  let kubectlBin: string;
  let tokenProxy: http.Server;
  /** kubectl as the cluster's admin, or (`as: 'operator'`) with the operator's ServiceAccount token. */
  const kubectl = async (as: 'admin' | 'operator', ...args: string[]) => {
    try {
      const { stdout, stderr } = await run(kubectlBin, ['--kubeconfig', path.join(dir, `${as}.kubeconfig`), ...args]);
      return { code: 0, out: stdout, err: stderr };
    } catch (e) {
      const x = e as { code: number; stdout: string; stderr: string };
      return { code: x.code, out: x.stdout, err: x.stderr };
    }
  };
  const file = (name: string, content: unknown) => {
    const f = path.join(dir, name);
    writeFileSync(f, (Array.isArray(content) ? content : [content]).map((o) => stringify(o)).join('---\n'));
    return f;
  };
  const labelsOf = async (ns: string) => (JSON.parse((await kubectl('admin', 'get', 'namespace', ns, '-o', 'json')).out) as { metadata: { labels: Json } }).metadata.labels;
  let alpha: { apiVersion: string; kind: string; name: string; uid: string };
  const tenantNamespace = (tenant: string) => {
    const mi = { apiVersion: 'marketindexer.dev/v1alpha1', kind: 'MarketIndexer', metadata: { name: alpha.name, uid: alpha.uid }, spec: { tenant, source: { type: 'simulator' }, devStores: { enabled: true } } };
    return renderTenant(mi as never, { environment: 'test', defaults: { image: { tag: '1.0.0' }, quota: { persistentVolumeClaims: 3 } } as never, platformNamespace: PLATFORM }).objects.find((o) => o.kind === 'Namespace')!;
  };
  const binding = (ns: string) => tenantBinding(PLATFORM, ns, {}, alpha);
  const denied = (policy: 'namespaces' | 'rolebindings', message: string) => `ValidatingAdmissionPolicy '${policy}.${OPERATOR_NAME}.${PLATFORM}' with binding '${policy}.${OPERATOR_NAME}.${PLATFORM}' denied request: ${message}`;

  beforeAll(async () => {
    kubectlBin = await ensureTool('kubectl');
    api = await startTestApiServer({ authorizer: (store) => createRbacAuthorizer(store, { operator: serviceAccountIdentity(PLATFORM, OPERATOR_NAME) }) });
    dir = mkdtempSync(path.join(os.tmpdir(), 'operator-admission-'));
    writeFileSync(path.join(dir, 'admin.kubeconfig'), api.kubeconfig());
    // kubectl sends no bearer token to a plain-HTTP server: the operator's token is added on the
    // way, by a proxy in front of the test API server, as TLS would carry it to a real one.
    tokenProxy = http.createServer((req, res) => {
      const upstream = http.request(`${api.url}${req.url}`, { method: req.method, headers: { ...req.headers, authorization: 'Bearer operator' } }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    });
    await new Promise<void>((r) => tokenProxy.listen(0, '127.0.0.1', r));
    const proxied = api.kubeconfig('operator').replace(api.url, `http://127.0.0.1:${(tokenProxy.address() as AddressInfo).port}`);
    writeFileSync(path.join(dir, 'operator.kubeconfig'), proxied);
    // The platform's RBAC and admission policies, applied as a cluster admin would.
    const platform = synthEnvironment({ environment: 'test', image: { tag: '1.0.0' }, platform: { namespace: PLATFORM }, tenants: {} } as never, 'the test environment').find((f) => f.name === 'platform.yaml')!
      .objects as Json[];
    const access = platform.filter((o) => o.kind === 'Namespace' || ACCESS_KINDS.includes(o.kind as string));
    expect(access.filter((o) => o.kind === 'ValidatingAdmissionPolicy').map((o) => (o.metadata as Json).name)).toEqual([`rolebindings.${OPERATOR_NAME}.${PLATFORM}`, `namespaces.${OPERATOR_NAME}.${PLATFORM}`]);
    expect((await kubectl('admin', 'apply', '--server-side', '-f', file('access.yaml', access))).err).toBe('');
    expect((await kubectl('admin', 'apply', '--server-side', '-f', path.join(ROOT, 'cdk8s/crds/marketindexer.yaml'))).code).toBe(0);
    const mi = { apiVersion: 'marketindexer.dev/v1alpha1', kind: 'MarketIndexer', metadata: { name: 'alpha' }, spec: { tenant: 'alpha' } };
    const created = JSON.parse((await kubectl('admin', 'create', '-o', 'json', '-f', file('mi.yaml', mi))).out) as { metadata: { uid: string } };
    alpha = { apiVersion: 'marketindexer.dev/v1alpha1', kind: 'MarketIndexer', name: 'alpha', uid: created.metadata.uid };
    // The operator's own writes, as it makes them: its tenant namespace, then its binding there.
    expect(await kubectl('operator', 'create', '-f', file('mi-alpha.yaml', tenantNamespace('alpha')))).toMatchObject({ code: 0, out: 'namespace/mi-alpha created\n' });
    expect(await kubectl('operator', 'create', '-f', file('binding.yaml', binding('mi-alpha')))).toMatchObject({ code: 0, out: `rolebinding.rbac.authorization.k8s.io/${OPERATOR_NAME} created\n` });
  });
  afterAll(async () => {
    tokenProxy.closeAllConnections();
    tokenProxy.close();
    await api.close();
  });

  it('cannot relabel a tenant namespace privileged, nor drop its profile, nor touch labels that are not the operator\'s', async () => {
    const before = await labelsOf('mi-alpha');
    expect(before[PSA]).toBe('restricted');
    const privileged = await kubectl('operator', 'label', 'namespace', 'mi-alpha', `${PSA}=privileged`, '--overwrite');
    expect([privileged.code, privileged.err]).toEqual([1, expect.stringContaining(denied('namespaces', 'a tenant namespace enforces the restricted Pod Security Standard'))]);
    expect((await kubectl('operator', 'label', 'namespace', 'mi-alpha', `${PSA}-`)).err).toContain('enforces the restricted Pod Security Standard');
    expect((await kubectl('operator', 'label', 'namespace', 'mi-alpha', 'pod-security.kubernetes.io/enforce-version=v1.20', '--overwrite')).err).toContain('enforces the restricted Pod Security Standard');
    expect((await kubectl('operator', 'label', 'namespace', 'mi-alpha', 'team=ingress')).err).toContain(denied('namespaces', 'the operator changes only its own labels on a namespace'));
    expect(await labelsOf('mi-alpha')).toEqual(before);
    // The label it owns it may change (a new release's version), the profile kept.
    expect((await kubectl('operator', 'label', 'namespace', 'mi-alpha', 'app.kubernetes.io/version=1.0.1', '--overwrite')).code).toBe(0);
    // Not a tenant namespace: RBAC refuses before any policy looks.
    expect((await kubectl('operator', 'label', 'namespace', PLATFORM, `${PSA}=privileged`, '--overwrite')).err).toContain('Forbidden');
  });

  it('cannot create a namespace but a restricted tenant one of a MarketIndexer: not mi-evil with the label alone, nor bind itself there', async () => {
    expect((await kubectl('operator', 'create', 'namespace', 'evil')).err).toContain(denied('namespaces', 'the operator creates and changes only tenant namespaces (mi-*)'));
    expect((await kubectl('operator', 'create', 'namespace', 'mi-evil')).err).toContain(denied('namespaces', 'a tenant namespace enforces the restricted Pod Security Standard'));
    const evil = tenantNamespace('evil');
    const privileged = { ...evil, metadata: { ...evil.metadata, labels: { ...evil.metadata.labels, [PSA]: 'privileged' } } };
    expect((await kubectl('operator', 'create', '-f', file('evil.yaml', privileged))).err).toContain('enforces the restricted Pod Security Standard');
    // The issue's: the managed-by label (and the profile), no MarketIndexer behind it.
    const labelled = { ...evil, metadata: { ...evil.metadata, ownerReferences: undefined } };
    expect((await kubectl('operator', 'create', '-f', file('evil.yaml', labelled))).err).toContain(denied('namespaces', 'the operator creates a namespace only for a MarketIndexer, its controller'));
    // Made by someone else with the label: the operator still cannot bind itself there.
    expect((await kubectl('admin', 'create', '-f', file('evil.yaml', labelled))).code).toBe(0);
    expect((await kubectl('operator', 'create', '-f', file('evil-binding.yaml', binding('mi-evil')))).err).toContain(
      denied('rolebindings', 'the operator binds roles only in a namespace a MarketIndexer controls'),
    );
    expect((await kubectl('operator', 'get', 'secrets', '-n', 'mi-evil')).err).toContain('Forbidden');
  });

  it('cannot take a retained namespace back: neither owned nor labelled any more, and its binding refused there', async () => {
    // As the operator leaves it on deletionPolicy Retain (operator/reconcile/finalizer.ts), and as
    // an operator before D-276 left it (the managed-by label kept): refused either way.
    const retained = tenantNamespace('old');
    const { ownerReferences: _o, ...metadata } = retained.metadata;
    for (const labels of [{ ...metadata.labels, 'app.kubernetes.io/managed-by': undefined }, metadata.labels]) {
      await kubectl('admin', 'delete', 'namespace', 'mi-old', '--ignore-not-found', '--wait=true');
      expect((await kubectl('admin', 'create', '-f', file('old.yaml', { ...retained, metadata: { ...metadata, labels: JSON.parse(JSON.stringify(labels)) } }))).code).toBe(0);
      const back = await kubectl('operator', 'create', '-f', file('old-binding.yaml', binding('mi-old')));
      expect([back.code, back.err]).toEqual([1, expect.stringMatching(/denied request: the operator binds roles only in (the tenant namespaces it manages|a namespace a MarketIndexer controls)/)]);
    }
    expect((await kubectl('operator', 'get', 'secrets', '-n', 'mi-old')).err).toContain('Forbidden');
  });
});
