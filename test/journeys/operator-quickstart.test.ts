import { fork } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { marketIndexerCrd } from '../../cdk8s/lib/crd';
import { startTestApiServer } from '../../local/kube-apiserver/server';
import { LEASE_NAME } from '../../operator/run';
import { ensureTool } from '../../scripts/kit-tools';
import { bashBlocks, checkoutOf, commandsOf, machineLock, portFree, runCommand, startCommand, type Ran, type Running } from '../support/doc-commands';
import { ROOT } from '../support/kit';
import { waitFor } from '../support/tables';

// What a newcomer types, as typed: docs/operator.md's quick start and tenant,
// and the kubectl commands docs/deploy.md gives, run by bash against the test API server on the
// quick start's port 6443 with its /tmp/kube.yaml. The only liberties: a checkout of its own for
// dist/ (another suite rebuilds the real one), `npm ci` not run (this checkout is installed),
// and, for docs/deploy.md's bare `kubectl`, the kit's kubectl on PATH and KUBECONFIG naming the
// test API server, as a user's own kubectl and current context would.
jest.setTimeout(90_000);

const OPERATOR_DOC = path.join(ROOT, 'docs/operator.md');
const DEPLOY_DOC = path.join(ROOT, 'docs/deploy.md');
const KUBECONFIG = '/tmp/kube.yaml';
const API = 'http://127.0.0.1:6443';

type Obj = { metadata: { name: string }; spec?: Record<string, unknown>; status?: { conditions?: { type: string; status: string; observedGeneration?: number }[] } };
const getJson = async (p: string): Promise<Obj | undefined> => {
  const res = await fetch(`${API}${p}`);
  return res.status === 200 ? ((await res.json()) as Obj) : undefined;
};

describe('the quick start as written: docs/operator.md and docs/deploy.md commands, verbatim', () => {
  let unlock: () => void;
  let checkout: { dir: string; remove: () => void };
  let binDir: string;
  const running: Running[] = [];
  /** A newcomer's shell: a PATH and a HOME, nothing from this test runner. */
  const shell = () => ({ PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? os.homedir() });
  const run = (command: string, env: NodeJS.ProcessEnv = shell()) => runCommand(command, { cwd: checkout.dir, env });
  const ok = (r: Ran, command: string) => expect({ command, code: r.code, err: r.code === 0 ? '' : r.err }).toEqual({ command, code: 0, err: '' });

  beforeAll(async () => {
    // The quick start's port and kubeconfig path are fixed: one run at a time on this machine.
    unlock = await machineLock('market-indexer-quickstart', 120_000);
    for (const port of [6443, 3002]) {
      await waitFor(`port ${port} (the quick start's API server, the operator's default OPERATOR_PORT) to be free`, () => portFree(port), 20_000);
    }
    rmSync(KUBECONFIG, { force: true });
    checkout = checkoutOf(ROOT);
    binDir = mkdtempSync(path.join(os.tmpdir(), 'bin-'));
    symlinkSync(await ensureTool('kubectl'), path.join(binDir, 'kubectl'));
  });

  afterAll(async () => {
    for (const r of running.reverse()) await r.stop();
    rmSync(KUBECONFIG, { force: true });
    rmSync(binDir, { recursive: true, force: true });
    checkout?.remove();
    unlock?.();
  });

  const quickStart = () => bashBlocks(OPERATOR_DOC, '## Try it on a laptop').slice(0, 2).map(commandsOf);

  it('docs/operator.md, first terminal: the test API server says where it listens', async () => {
    const [[server, ...more] = []] = quickStart();
    expect(more).toEqual([]);
    expect(server).toMatch(/^npm run kube:test-apiserver -- /);
    const api = startCommand(server!, { cwd: checkout.dir, env: shell() });
    running.push(api);
    // The line the quick start tells the reader to wait for.
    await api.waitForOutput(/test API server on http:\/\/127\.0\.0\.1:6443/);
    expect(existsSync(KUBECONFIG)).toBe(true);
  });

  it('docs/operator.md, second terminal: the CRD and the namespace are created, and the operator leads', async () => {
    const commands = quickStart()[1]!;
    const operator = commands.pop()!;
    expect(operator).toMatch(/^npm run operator -- /);
    for (const c of commands) ok(await run(c), c);
    const op = startCommand(operator, { cwd: checkout.dir, env: shell() });
    running.push(op);
    await op.waitForOutput(/"msg":"leading"/);
    const lease = await getJson(`/apis/coordination.k8s.io/v1/namespaces/market-indexer-system/leases/${LEASE_NAME}`);
    expect(lease?.spec?.holderIdentity).toEqual(expect.any(String));
    expect(op.output()).not.toMatch(/"level":"(error|fatal)"/);
  });

  it('docs/operator.md, third terminal: the sample MarketIndexer is reconciled into its tenant', async () => {
    const [apply, ...watch] = commandsOf(bashBlocks(OPERATOR_DOC, '## Try it on a laptop')[2]!);
    ok(await run(apply!), apply!);
    const mi = await waitFor('the operator to reconcile demo', async () => {
      const o = await getJson('/apis/marketindexer.dev/v1alpha1/marketindexers/demo');
      const degraded = o?.status?.conditions?.find((c) => c.type === 'Degraded');
      return degraded?.status === 'False' && degraded.observedGeneration === 1 && o;
    });
    expect(mi.status!.conditions!.map((c) => c.type).sort()).toEqual(['Degraded', 'IndexerLagging', 'Progressing', 'Ready', 'Reindexing']);
    const [list, children] = await Promise.all(watch.map((c) => run(c)));
    ok(list!, watch[0]!);
    expect(list!.out).toMatch(/^NAME\s+TENANT\s+READY\s+REASON\s+SLOT LAG\s+REINDEX\s+AGE\ndemo\s+demo\s+False\s+\w+\s+/);
    ok(children!, watch[1]!);
    for (const name of ['deployment.apps/market-indexer-api', 'deployment.apps/market-indexer-indexer', 'service/market-indexer-api', 'configmap/market-indexer-api']) {
      expect(children!.out).toMatch(new RegExp(`^${name.replace(/[./]/g, '\\$&')}\\s`, 'm'));
    }
  });

  it("docs/deploy.md: the namespace and the Secret with kubectl, then synth, diff and apply of an environment", async () => {
    // What the docs ask of the cluster (prometheus-operator CRDs with monitoring on, Gateway API's
    // for the tenants' routes, CloudNativePG's for prod's databases), installed as a cluster would
    // have them; not one of the docs' commands.
    for (const crds of ['monitoring.coreos.com', 'gateway.networking.k8s.io', 'postgresql.cnpg.io']) {
      ok(await run(`npm run -s kubectl -- --kubeconfig ${KUBECONFIG} apply --server-side -f cdk8s/crds/${crds}.yaml`), `${crds} CRDs`);
    }
    const env = { ...shell(), PATH: `${binDir}:${process.env.PATH ?? ''}`, KUBECONFIG };

    const secrets = commandsOf(bashBlocks(DEPLOY_DOC, '## The Secrets to create per tenant (staging, prod)')[0]!);
    expect(secrets.map((c) => c.split(' ').slice(0, 4).join(' '))).toEqual(['kubectl create namespace mi-alpha', 'kubectl -n mi-alpha create']);
    // "per tenant": the block as written for alpha, and with the tenant's name for the others.
    for (const tenant of ['alpha', 'beta', 'gamma']) for (const c of secrets.map((x) => x.replaceAll('alpha', tenant))) ok(await run(c, env), c);
    const secret = (await getJson('/api/v1/namespaces/mi-alpha/secrets/market-indexer')) as Obj & { data: Record<string, string>; type: string };
    expect(secret.type).toBe('Opaque');
    expect(Object.fromEntries(Object.entries(secret.data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]))).toEqual({
      DATABASE_URL: 'postgres://alpha:…@10.30.0.5:5432/alpha',
      REDIS_URL: 'rediss://mi-alpha:…@10.31.0.7:6379',
      RPC_URL: 'https://mainnet.example-rpc.com/?api-key=…',
    });

    const [install, synth, diff, apply, ...rest] = commandsOf(bashBlocks(DEPLOY_DOC, '## Deploy with cdk8s')[0]!);
    expect([install, rest]).toEqual(['npm ci', []]);
    ok(await run(synth!, env), synth!);
    const diffed = await run(diff!, env);
    // kubectl diff exits 1 when there are differences: here, everything but the namespaces is new.
    expect({ code: diffed.code, stderr: diffed.err }).toEqual({ code: 1, stderr: '' });
    expect(diffed.out).toContain('+kind: Deployment');
    ok(await run(apply!, env), apply!);
    for (const tenant of ['alpha', 'beta', 'gamma']) {
      expect(await getJson(`/apis/apps/v1/namespaces/mi-${tenant}/deployments/market-indexer-api`)).toMatchObject({ metadata: { name: 'market-indexer-api' } });
    }
    // The Secret made by hand is still the user's: the kit never writes a secret value.
    expect(((await getJson('/api/v1/namespaces/mi-alpha/secrets/market-indexer')) as typeof secret).data).toEqual(secret.data);
  });
});

describe('the operator without its lease namespace', () => {
  it('logs one error naming the namespace and the fix, keeps campaigning, and leads once it exists', async () => {
    const api = await startTestApiServer();
    const dir = mkdtempSync(path.join(os.tmpdir(), 'operator-ns-'));
    writeFileSync(path.join(dir, 'kubeconfig'), api.kubeconfig());
    api.store.create(api.store.typeOf('apiextensions.k8s.io', 'v1', 'customresourcedefinitions'), undefined, marketIndexerCrd(), 'test');
    let out = '';
    const child = fork(path.join(ROOT, 'operator/main.ts'), ['--kubeconfig', path.join(dir, 'kubeconfig')], {
      cwd: ROOT,
      execArgv: ['--import', 'tsx'],
      env: { PATH: process.env.PATH ?? '', OPERATOR_PORT: '0', OPERATOR_NAMESPACE: 'ops', OPERATOR_LEASE_SECONDS: '3' },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise((r) => child.once('exit', r));
    try {
      const refused = () => api.requests.filter((r) => r.resource === 'leases' && r.verb === 'create' && r.status === 404).length;
      await waitFor('five refused lease creates', async () => refused() >= 5);
      const problems = out.split('\n').filter((l) => /"level":"(warn|error|fatal)"/.test(l));
      expect(problems).toHaveLength(1);
      expect(JSON.parse(problems[0]!)).toMatchObject({
        level: 'error',
        lease: `ops/${LEASE_NAME}`,
        msg: 'the lease namespace "ops" does not exist: create it (kubectl create namespace ops) or set OPERATOR_NAMESPACE to an existing namespace; retrying until then',
      });
      api.store.create(api.store.typeOf('', 'v1', 'namespaces'), undefined, { metadata: { name: 'ops' } }, 'test');
      await waitFor('the operator to lead', async () => /"msg":"leading"/.test(out));
      expect(out).toContain('"msg":"lease requests succeed again"');
    } finally {
      child.kill('SIGTERM');
      await exited;
      await api.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
