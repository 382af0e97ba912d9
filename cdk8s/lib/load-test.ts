import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Construct } from 'constructs';
import { k8s } from 'cdk8s-plus-33';
import { K6_LABELS, K6_TREND_STATS } from '../../observability/grafana/k6';
import {
  TestRun,
  TestRunSpecRunnerResourcesLimits,
  TestRunSpecRunnerResourcesRequests,
  type TestRunSpecRunnerContainerSecurityContext,
  type TestRunSpecRunnerSecurityContext,
} from '../imports/k6.io';
import { API_SERVICE_PORT, HTTP_PORT_NAME } from './api';
import { APP_NAME, NAMES, namespaceOf, platformLabels, selectorLabels, TENANT_LABEL } from './names';
import type { PlatformContext } from './context';

/** Where the bundled k6 scripts and their shared module live, relative to the repository root (generated: npm run generate). */
export const K6_CHART_DIR = 'charts/market-indexer/files/k6';
export const LOAD_TEST_NAME = `${APP_NAME}-load-test`;
export const K6_SCRIPTS_CONFIGMAP = `${APP_NAME}-k6-scripts`;
/** k6-operator labels every pod of a TestRun `app: k6` and `k6_cr: <name>`. */
export const K6_POD_LABELS = { app: 'k6', k6_cr: LOAD_TEST_NAME } as const;
/** The k6 runners' REST API, which the operator's starter pod calls. */
export const K6_API_PORT = 6565;
/** The grafana/k6 image's own user. */
export const K6_UID = 12345;

const ROOT = path.resolve(__dirname, '../..');

/**
 * Every file the chart carries in files/k6/, by name (read at synth time), as its template's
 * `Files.Glob "files/k6/*.js"` does: the scripts and the shared module they import.
 */
export function k6Bundles(scripts: readonly string[]): Record<string, string> {
  const dir = path.join(ROOT, K6_CHART_DIR);
  const files = readdirSync(dir).filter((f) => f.endsWith('.js')).sort();
  const missing = scripts.filter((s) => !files.includes(`${s}.js`));
  if (missing.length) throw new Error(`${K6_CHART_DIR} lacks ${missing.map((s) => `${s}.js`).join(', ')}: run npm run generate`);
  return Object.fromEntries(files.map((f) => [f, readFileSync(path.join(dir, f), 'utf8')]));
}

/**
 * A load test of one tenant, on request (`platform.loadTest`): the bundled k6 scripts in a
 * ConfigMap and a k6-operator TestRun running one of them against the tenant's API Service, with
 * results written to the cluster's Prometheus (the load-test dashboard reads them), in the
 * tenant's namespace; its pods meet the namespace's restricted Pod Security profile, and
 * network policies let them reach the API and Prometheus when the tenant's deny-all is on.
 * The Helm chart's templates/load-test.yaml renders the same.
 */
export class MarketIndexerLoadTest extends Construct {
  constructor(scope: Construct, id: string, ctx: PlatformContext, scripts: readonly string[]) {
    super(scope, id);
    const lt = ctx.values.loadTest;
    const namespace = namespaceOf(lt.tenant);
    const labels = { ...platformLabels(ctx, 'load-test'), [TENANT_LABEL]: lt.tenant };
    const meta = (name: string) => ({ name, namespace, labels });
    // The test's pods: the labels that never change (k6-operator adds its own).
    const podLabels = { 'app.kubernetes.io/name': APP_NAME, 'app.kubernetes.io/instance': ctx.instance, 'app.kubernetes.io/component': 'load-test', [TENANT_LABEL]: lt.tenant };
    new k8s.KubeConfigMap(this, 'scripts', { metadata: meta(K6_SCRIPTS_CONFIGMAP), data: k6Bundles(scripts) });

    const testId = `${ctx.environment}-${lt.tenant}-${lt.script}`;
    const vars: [string, string][] = [
      ['BASE_URL', `http://${NAMES.api}.${namespace}.svc:${API_SERVICE_PORT}`],
      ['TENANT', lt.tenant],
      ['RUN_ID', testId],
      ['PROFILE', lt.profile],
      ['RATE', String(lt.rate)],
    ];
    const remoteWrite = lt.prometheusRemoteWriteUrl !== '';
    const args = [...vars.map(([k, v]) => `-e ${k}=${v}`), `--tag ${K6_LABELS.testid}=${testId}`, ...(remoteWrite ? ['-o experimental-prometheus-rw'] : [])];
    const pod: TestRunSpecRunnerSecurityContext = { runAsNonRoot: true, runAsUser: K6_UID, runAsGroup: K6_UID, seccompProfile: { type: 'RuntimeDefault' } };
    // Not read-only: the initializer writes the script's archive under /tmp.
    const container: TestRunSpecRunnerContainerSecurityContext = { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } };
    new TestRun(this, 'test-run', {
      metadata: meta(LOAD_TEST_NAME),
      spec: {
        parallelism: lt.parallelism,
        script: { configMap: { name: K6_SCRIPTS_CONFIGMAP, file: `${lt.script}.js` } },
        arguments: args.join(' '),
        runner: {
          image: lt.image,
          metadata: { labels: podLabels },
          securityContext: pod,
          containerSecurityContext: container,
          resources: {
            requests: { cpu: TestRunSpecRunnerResourcesRequests.fromString(lt.resources.requests.cpu), memory: TestRunSpecRunnerResourcesRequests.fromString(lt.resources.requests.memory) },
            limits: { cpu: TestRunSpecRunnerResourcesLimits.fromString(lt.resources.limits.cpu), memory: TestRunSpecRunnerResourcesLimits.fromString(lt.resources.limits.memory) },
          },
          env: remoteWrite
            ? [
                { name: 'K6_PROMETHEUS_RW_SERVER_URL', value: lt.prometheusRemoteWriteUrl },
                { name: 'K6_PROMETHEUS_RW_TREND_STATS', value: K6_TREND_STATS },
              ]
            : [],
        },
        initializer: { image: lt.image, metadata: { labels: podLabels }, securityContext: pod, containerSecurityContext: container },
        starter: { metadata: { labels: podLabels }, securityContext: pod, containerSecurityContext: container },
      },
    });

    // With the tenant's deny-all in place: the test's pods reach the API, each other's REST API
    // (the starter starts the runners) and Prometheus; the API admits them.
    const k6Pods = { podSelector: { matchLabels: K6_POD_LABELS } };
    const tcp = (port: number | string) => ({ protocol: 'TCP', port: typeof port === 'number' ? k8s.IntOrString.fromNumber(port) : k8s.IntOrString.fromString(port) });
    new k8s.KubeNetworkPolicy(this, 'k6-pods', {
      metadata: meta(LOAD_TEST_NAME),
      spec: {
        podSelector: { matchLabels: K6_POD_LABELS },
        policyTypes: ['Ingress', 'Egress'],
        ingress: [{ from: [k6Pods], ports: [tcp(K6_API_PORT)] }],
        egress: [
          { to: [{ podSelector: { matchLabels: selectorLabels(ctx, 'api') } }], ports: [tcp(HTTP_PORT_NAME)] },
          { to: [k6Pods], ports: [tcp(K6_API_PORT)] },
          ...(remoteWrite && lt.prometheusNamespace
            ? [{ to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': lt.prometheusNamespace } } }], ports: [tcp(remoteWritePort(lt.prometheusRemoteWriteUrl))] }]
            : []),
        ],
      },
    });
    new k8s.KubeNetworkPolicy(this, 'api-from-k6', {
      metadata: meta(`${LOAD_TEST_NAME}-to-api`),
      spec: {
        podSelector: { matchLabels: selectorLabels(ctx, 'api') },
        policyTypes: ['Ingress'],
        ingress: [{ from: [k6Pods], ports: [tcp(HTTP_PORT_NAME)] }],
      },
    });
  }
}

/** The port of the remote-write URL (the scheme's default when it names none). */
export function remoteWritePort(url: string): number {
  const u = new URL(url);
  return u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
}
