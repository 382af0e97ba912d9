import { Construct } from 'constructs';
import { k8s } from 'cdk8s-plus-33';
import { DEFAULT_PORTS, IMAGE, OPS_PATHS } from '../../core/constants';
import { CHECKSUM_ANNOTATION, HTTP_PORT_NAME } from './api';
import { imageOf, metadataOf, type TenantContext } from './context';
import { commonLabels, NAMES, selectorLabels } from './names';
import { containerSecurity, httpProbe, podDefaults, resourcesOf, tmpMount, tmpVolume, topologySpread } from './pod';
import { checksumOf, configMapData, secretEnvOf } from './settings-env';
import type { TenantValues } from './values';

/**
 * The indexer's command line for the tenant's source: a simulator tenant's indexer follows its
 * chain's JSON-RPC with the production `rpc` source, like any other (D-211).
 */
export function indexerArgs(values: TenantValues): string[] {
  return ['--source', values.source.type === 'webhook' ? 'webhook' : 'rpc', '--no-progress'];
}

/** One indexer Deployment: the live writer and its standbys, or the builder of a re-index. */
function indexerDeployment(scope: Construct, ctx: TenantContext, opts: { name: string; component: 'indexer' | 'indexer-build'; replicas: number; image: string; data: Record<string, string> }): void {
  const { values } = ctx;
  const selector = selectorLabels(ctx.labels, opts.component);
  new k8s.KubeDeployment(scope, 'deployment', {
    metadata: metadataOf(ctx, opts.name, opts.component),
    spec: {
      replicas: opts.replicas,
      revisionHistoryLimit: 5,
      selector: { matchLabels: selector },
      // The new pod starts as a standby; the writer lock passes over when an old pod stops.
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: k8s.IntOrString.fromNumber(1), maxUnavailable: k8s.IntOrString.fromNumber(0) } },
      template: {
        metadata: { labels: commonLabels(ctx.labels, opts.component), annotations: { [CHECKSUM_ANNOTATION]: checksumOf(opts.data) } },
        spec: {
          ...podDefaults(NAMES.serviceAccount),
          terminationGracePeriodSeconds: 30,
          topologySpreadConstraints: topologySpread(selector),
          containers: [
            {
              name: 'indexer',
              image: opts.image,
              imagePullPolicy: values.image.pullPolicy,
              command: [...IMAGE.commands.indexer],
              args: indexerArgs(values),
              ports: [{ name: HTTP_PORT_NAME, containerPort: DEFAULT_PORTS.indexer, protocol: 'TCP' }],
              envFrom: [{ configMapRef: { name: opts.name } }],
              env: secretEnvOf(values, 'indexer'),
              // Migrations run before the port opens: allow them a minute.
              startupProbe: httpProbe(OPS_PATHS.health, HTTP_PORT_NAME, { periodSeconds: 2, failureThreshold: 30 }),
              readinessProbe: httpProbe(OPS_PATHS.ready, HTTP_PORT_NAME, { periodSeconds: 5, failureThreshold: 2 }),
              livenessProbe: httpProbe(OPS_PATHS.health, HTTP_PORT_NAME, { periodSeconds: 10, failureThreshold: 3, timeoutSeconds: 5 }),
              resources: resourcesOf(values.indexer.resources),
              securityContext: containerSecurity(),
              volumeMounts: [tmpMount],
            },
          ],
          volumes: [tmpVolume()],
        },
      },
    },
  });
}

/**
 * The indexer of one tenant: one writer and hot standbys (the PostgreSQL writer lock decides
 * which), its settings, and a Service for scraping and webhook ingest.
 * `/ready` is true for the writer and for a standby alike: both are doing their job (a standby
 * waits on the lock). The indexer applies pending migrations itself when it starts (D-68, D-72).
 */
export class IndexerWorkload extends Construct {
  constructor(scope: Construct, id: string, ctx: TenantContext) {
    super(scope, id);
    const { values } = ctx;
    const selector = selectorLabels(ctx.labels, 'indexer');
    const data = configMapData(values, ctx.tenant, 'indexer');

    new k8s.KubeConfigMap(this, 'settings', { metadata: metadataOf(ctx, NAMES.indexer, 'indexer'), data });
    indexerDeployment(this, ctx, { name: NAMES.indexer, component: 'indexer', replicas: values.indexer.replicas, image: imageOf(ctx), data });

    new k8s.KubeService(this, 'service', {
      metadata: metadataOf(ctx, NAMES.indexer, 'indexer'),
      spec: {
        type: 'ClusterIP',
        selector,
        ports: [{ name: HTTP_PORT_NAME, port: DEFAULT_PORTS.indexer, targetPort: k8s.IntOrString.fromString(HTTP_PORT_NAME), protocol: 'TCP' }],
      },
    });

    if (values.indexer.replicas > 1) {
      new k8s.KubePodDisruptionBudget(this, 'disruption-budget', {
        metadata: metadataOf(ctx, NAMES.indexer, 'indexer'),
        spec: { maxUnavailable: k8s.IntOrString.fromNumber(1), selector: { matchLabels: selector }, unhealthyPodEvictionPolicy: 'AlwaysAllow' },
      });
    }
  }
}

/**
 * A re-index (`indexer.build.enabled`, D-440): one indexer of the release named by
 * `indexer.build.imageTag` in `INDEXER_MODE=build`, beside the live indexer. It builds that
 * release's projection in a schema of its own from the chain's start, switches every API replica
 * to it once caught up, and writes it from then on (D-411); the live indexer keeps writing the
 * old tables meanwhile. Its own component label keeps it out of the indexer's Service (the
 * operator reads the live indexer's /status, which reports the build) and Deployment selector.
 * One replica: a restarted builder goes on from its schema's cursor.
 */
export class IndexerBuildWorkload extends Construct {
  constructor(scope: Construct, id: string, ctx: TenantContext) {
    super(scope, id);
    const { values } = ctx;
    const data = { ...configMapData(values, ctx.tenant, 'indexer'), INDEXER_MODE: 'build' };
    const sorted = Object.fromEntries(Object.entries(data).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    new k8s.KubeConfigMap(this, 'settings', { metadata: metadataOf(ctx, NAMES.indexerBuild, 'indexer-build'), data: sorted });
    const image = `${values.image.repository}:${values.indexer.build.imageTag || values.image.tag}`;
    indexerDeployment(this, ctx, { name: NAMES.indexerBuild, component: 'indexer-build', replicas: 1, image, data: sorted });
  }
}
