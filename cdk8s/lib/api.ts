import { Construct } from 'constructs';
import { k8s } from 'cdk8s-plus-33';
import { DEFAULT_PORTS, IMAGE, OPS_PATHS } from '../../core/constants';
import { imageOf, metadataOf, type TenantContext } from './context';
import { commonLabels, NAMES, selectorLabels } from './names';
import { containerSecurity, httpProbe, podDefaults, resourcesOf, tmpMount, tmpVolume, topologySpread } from './pod';
import { effectiveSetting } from './resolve';
import { checksumOf, configMapData, secretEnvOf } from './settings-env';
import { MIGRATE_RESOURCES } from './sizing';

export const HTTP_PORT_NAME = 'http';
export const API_SERVICE_PORT = 80;
export const CHECKSUM_ANNOTATION = 'checksum/settings';
/** How long a terminating API pod keeps serving while endpoints drop it from every load balancer. */
export const PRE_STOP_SECONDS = 5;

/**
 * The termination grace: the preStop pause, then the API's own drain (SHUTDOWN_GRACE_MS), then a
 * margin for closing `/ws` sockets and the pools, so Kubernetes never kills a pod mid-drain.
 */
export function apiTerminationGraceSeconds(shutdownGraceMs: number): number {
  return PRE_STOP_SECONDS + Math.ceil(shutdownGraceMs / 1000) + 5;
}

/**
 * The API of one tenant: its settings, the Deployment (migrations in an init container),
 * Service, autoscaler or fixed replicas and disruption budget (its edge: cdk8s/lib/edge.ts).
 */
export class ApiWorkload extends Construct {
  constructor(scope: Construct, id: string, ctx: TenantContext) {
    super(scope, id);
    const { values } = ctx;
    const api = values.api;
    const selector = selectorLabels(ctx.labels, 'api');
    const data = configMapData(values, ctx.tenant, 'api');

    new k8s.KubeConfigMap(this, 'settings', { metadata: metadataOf(ctx, NAMES.api, 'api'), data });

    const image = imageOf(ctx);
    const shutdownGraceMs = Number(effectiveSetting(values, 'SHUTDOWN_GRACE_MS'));
    new k8s.KubeDeployment(this, 'deployment', {
      metadata: metadataOf(ctx, NAMES.api, 'api'),
      spec: {
        // With autoscaling the HPA owns the count: an apply that set replicas would fight it.
        ...(api.autoscaling.enabled ? {} : { replicas: api.replicas }),
        revisionHistoryLimit: 5,
        selector: { matchLabels: selector },
        // Never below the desired ready count: a new pod must be ready before an old one goes.
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: k8s.IntOrString.fromNumber(1), maxUnavailable: k8s.IntOrString.fromNumber(0) } },
        template: {
          metadata: { labels: commonLabels(ctx.labels, 'api'), annotations: { [CHECKSUM_ANNOTATION]: checksumOf(data) } },
          spec: {
            ...podDefaults(NAMES.serviceAccount),
            terminationGracePeriodSeconds: apiTerminationGraceSeconds(shutdownGraceMs),
            topologySpreadConstraints: topologySpread(selector),
            // Each new pod applies pending migrations before it serves: under the migration
            // advisory lock, so a rollout's pods queue and every one after the first finds
            // nothing to do (D-67).
            initContainers: [
              {
                name: 'migrate',
                image,
                imagePullPolicy: values.image.pullPolicy,
                command: [...IMAGE.commands.migrate],
                env: secretEnvOf(values, 'migrate'),
                resources: resourcesOf(MIGRATE_RESOURCES),
                securityContext: containerSecurity(),
                volumeMounts: [tmpMount],
              },
            ],
            containers: [
              {
                name: 'api',
                image,
                imagePullPolicy: values.image.pullPolicy,
                command: [...IMAGE.commands.api],
                ports: [{ name: HTTP_PORT_NAME, containerPort: DEFAULT_PORTS.api, protocol: 'TCP' }],
                envFrom: [{ configMapRef: { name: NAMES.api } }],
                env: secretEnvOf(values, 'api'),
                startupProbe: httpProbe(OPS_PATHS.health, HTTP_PORT_NAME, { periodSeconds: 2, failureThreshold: 30 }),
                readinessProbe: httpProbe(OPS_PATHS.ready, HTTP_PORT_NAME, { periodSeconds: 5, failureThreshold: 2 }),
                livenessProbe: httpProbe(OPS_PATHS.health, HTTP_PORT_NAME, { periodSeconds: 10, failureThreshold: 3, timeoutSeconds: 5 }),
                lifecycle: { preStop: { sleep: { seconds: PRE_STOP_SECONDS } } },
                resources: resourcesOf(api.resources),
                securityContext: containerSecurity(),
                volumeMounts: [tmpMount],
              },
            ],
            volumes: [tmpVolume()],
          },
        },
      },
    });

    new k8s.KubeService(this, 'service', {
      metadata: metadataOf(ctx, NAMES.api, 'api'),
      spec: {
        type: 'ClusterIP',
        selector,
        ports: [{ name: HTTP_PORT_NAME, port: API_SERVICE_PORT, targetPort: k8s.IntOrString.fromString(HTTP_PORT_NAME), protocol: 'TCP' }],
      },
    });

    if (api.autoscaling.enabled) {
      new k8s.KubeHorizontalPodAutoscalerV2(this, 'autoscaler', {
        metadata: metadataOf(ctx, NAMES.api, 'api'),
        spec: {
          scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: NAMES.api },
          minReplicas: api.autoscaling.minReplicas,
          maxReplicas: api.autoscaling.maxReplicas,
          metrics: [
            {
              type: 'Resource',
              resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: api.autoscaling.targetCPUUtilizationPercentage } },
            },
          ],
        },
      });
    }

    new k8s.KubePodDisruptionBudget(this, 'disruption-budget', {
      metadata: metadataOf(ctx, NAMES.api, 'api'),
      spec: {
        maxUnavailable: k8s.IntOrString.fromNumber(1),
        selector: { matchLabels: selector },
        // A pod that is not ready serves nobody: let a node drain evict it.
        unhealthyPodEvictionPolicy: 'AlwaysAllow',
      },
    });

  }
}
