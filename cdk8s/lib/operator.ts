import { Construct } from 'constructs';
import { ApiObject } from 'cdk8s';
import { k8s } from 'cdk8s-plus-33';
import { DEFAULT_PORTS, IMAGE } from '../../core/constants';
import { settingToEnv, type SettingName } from '../../core/config/settings';
import { clusterRoleName, OPERATOR_NAME, rulesOf, tenantClusterRoleName } from './operator-permissions';
import { operatorAdmissionObjects } from './operator-admission';
import { OperatorNetworkPolicy } from './operator-network';
import { CHECKSUM_ANNOTATION, HTTP_PORT_NAME } from './api';
import { marketIndexerCrd } from './crd';
import { ServiceMonitor } from '../imports/monitoring.coreos.com';
import { containerSecurity, httpProbe, podDefaults, resourcesOf, tmpMount, tmpVolume, topologySpread } from './pod';
import { operatorHeapMb } from './sizing';
import type { PlatformContext } from './context';
import { platformLabels } from './names';
import { checksumOf, goJson } from './settings-env';
import type { TenantValues } from './values';

export { clusterRoleName, OPERATOR_NAME, tenantClusterRoleName };
/** Where the environment's values for every tenant are mounted in the operator's pods. */
export const DEFAULTS_DIR = '/etc/market-indexer';
export const DEFAULTS_FILE = 'defaults.json';
const HEAP_FLAG = '--max-old-space-size=';

/**
 * The operator container's command: the image's, its heap cap taken from the pods' memory limit
 * (half of it, D-420), so raising `platform.operator.resources` for more tenants raises the cap
 * with it. The default limit (512Mi) gives the image's own command.
 */
export function operatorCommand(memoryLimit: string): string[] {
  return IMAGE.commands.operator.map((a) => (a.startsWith(HEAP_FLAG) ? `${HEAP_FLAG}${operatorHeapMb(memoryLimit)}` : a));
}


/** The settings the operator's ConfigMap holds, keys sorted. */
export function operatorSettings(ctx: PlatformContext): Record<string, string> {
  const data: Partial<Record<SettingName, string | number | boolean>> = {
    NODE_ENV: 'production',
    OPERATOR_ENVIRONMENT: ctx.environment,
    OPERATOR_NAMESPACE: ctx.values.namespace,
    OPERATOR_PORT: DEFAULT_PORTS.operator,
    OPERATOR_DEFAULTS_FILE: `${DEFAULTS_DIR}/${DEFAULTS_FILE}`,
    ...(ctx.values.operator.settings as Partial<Record<SettingName, string | number | boolean>>),
  };
  return Object.fromEntries(
    Object.entries(data)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, v]) => [k, settingToEnv(v as string | number | boolean)]),
  );
}

/**
 * The MarketIndexer operator of an environment: its CRD, service account and RBAC (generated
 * from the operator's own permission table, cdk8s/lib/operator-permissions.ts: a ClusterRole bound
 * cluster-wide for what cannot be narrowed, a tenant ClusterRole it binds itself in each tenant
 * namespace, a Role in its own namespace) with the admission policy that narrows what RBAC cannot
 * (its RoleBindings, D-260), a NetworkPolicy, settings, the environment's values for
 * every tenant (so a MarketIndexer states only what differs) with the policy on what a spec may
 * ask, and a Deployment of leader-elected replicas.
 */
export class MarketIndexerOperator extends Construct {
  constructor(scope: Construct, id: string, ctx: PlatformContext, environmentValues: TenantValues) {
    super(scope, id);
    const ns = ctx.values.namespace;
    const op = ctx.values.operator;
    const labels = platformLabels(ctx, 'operator');
    const selector = { 'app.kubernetes.io/name': 'market-indexer', 'app.kubernetes.io/instance': ctx.instance, 'app.kubernetes.io/component': 'operator' };
    const meta = (name: string) => ({ name, namespace: ns, labels });

    new ApiObject(this, 'crd', marketIndexerCrd() as never);

    new k8s.KubeServiceAccount(this, 'service-account', { metadata: meta(OPERATOR_NAME) });
    const subject = [{ kind: 'ServiceAccount', name: OPERATOR_NAME, namespace: ns }];
    new k8s.KubeClusterRole(this, 'cluster-role', { metadata: { name: clusterRoleName(ns), labels }, rules: rulesOf('cluster', ns) });
    new k8s.KubeClusterRoleBinding(this, 'cluster-role-binding', {
      metadata: { name: clusterRoleName(ns), labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRoleName(ns) },
      subjects: subject,
    });
    // Bound by the operator itself in each tenant namespace it creates, never cluster-wide.
    new k8s.KubeClusterRole(this, 'tenant-role', { metadata: { name: tenantClusterRoleName(ns), labels }, rules: rulesOf('tenant', ns) });
    new k8s.KubeRole(this, 'role', { metadata: meta(OPERATOR_NAME), rules: rulesOf('platform', ns) });
    new k8s.KubeRoleBinding(this, 'role-binding', {
      metadata: meta(OPERATOR_NAME),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: OPERATOR_NAME },
      subjects: subject,
    });

    if (op.admissionPolicy) {
      const [policy, binding, nsPolicy, nsBinding] = operatorAdmissionObjects(ns, labels);
      new ApiObject(this, 'admission-policy', policy as never);
      new ApiObject(this, 'admission-policy-binding', binding as never);
      new ApiObject(this, 'namespace-admission-policy', nsPolicy as never);
      new ApiObject(this, 'namespace-admission-policy-binding', nsBinding as never);
    }

    const settings = operatorSettings(ctx);
    const defaults = { [DEFAULTS_FILE]: goJson({ ...environmentValues, policy: op.policy }) };
    new k8s.KubeConfigMap(this, 'settings', { metadata: meta(OPERATOR_NAME), data: settings });
    new k8s.KubeConfigMap(this, 'defaults', { metadata: meta(`${OPERATOR_NAME}-defaults`), data: defaults });

    const image = environmentValues.image;
    new k8s.KubeDeployment(this, 'deployment', {
      metadata: meta(OPERATOR_NAME),
      spec: {
        replicas: op.replicas,
        revisionHistoryLimit: 5,
        selector: { matchLabels: selector },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: k8s.IntOrString.fromNumber(1), maxUnavailable: k8s.IntOrString.fromNumber(0) } },
        template: {
          metadata: { labels, annotations: { [CHECKSUM_ANNOTATION]: checksumOf({ ...settings, ...defaults }) } },
          spec: {
            ...podDefaults(OPERATOR_NAME),
            // The one process of the kit that talks to the Kubernetes API.
            automountServiceAccountToken: true,
            // It gives its Lease up on SIGTERM, so a standby leads at once.
            terminationGracePeriodSeconds: 30,
            topologySpreadConstraints: topologySpread(selector),
            containers: [
              {
                name: 'operator',
                image: `${image.repository}:${image.tag}`,
                imagePullPolicy: image.pullPolicy,
                command: operatorCommand(op.resources.limits.memory),
                ports: [{ name: HTTP_PORT_NAME, containerPort: DEFAULT_PORTS.operator, protocol: 'TCP' }],
                envFrom: [{ configMapRef: { name: OPERATOR_NAME } }],
                startupProbe: httpProbe('/healthz', HTTP_PORT_NAME, { periodSeconds: 2, failureThreshold: 30 }),
                readinessProbe: httpProbe('/readyz', HTTP_PORT_NAME, { periodSeconds: 5, failureThreshold: 2 }),
                livenessProbe: httpProbe('/healthz', HTTP_PORT_NAME, { periodSeconds: 10, failureThreshold: 3, timeoutSeconds: 5 }),
                resources: resourcesOf(op.resources),
                securityContext: containerSecurity(),
                volumeMounts: [tmpMount, { name: 'defaults', mountPath: DEFAULTS_DIR, readOnly: true }],
              },
            ],
            volumes: [tmpVolume(), { name: 'defaults', configMap: { name: `${OPERATOR_NAME}-defaults` } }],
          },
        },
      },
    });
    new k8s.KubeService(this, 'service', {
      metadata: meta(OPERATOR_NAME),
      spec: {
        type: 'ClusterIP',
        selector,
        ports: [{ name: HTTP_PORT_NAME, port: DEFAULT_PORTS.operator, targetPort: k8s.IntOrString.fromString(HTTP_PORT_NAME), protocol: 'TCP' }],
      },
    });
    new OperatorNetworkPolicy(this, 'network-policy', ctx, environmentValues, selector);
    new k8s.KubePodDisruptionBudget(this, 'disruption-budget', {
      metadata: meta(OPERATOR_NAME),
      spec: { maxUnavailable: k8s.IntOrString.fromNumber(1), selector: { matchLabels: selector }, unhealthyPodEvictionPolicy: 'AlwaysAllow' },
    });
    if (environmentValues.monitoring.enabled) {
      new ServiceMonitor(this, 'monitor', {
        metadata: { ...meta(OPERATOR_NAME), labels: { ...labels, ...environmentValues.monitoring.labels } },
        // The process's own `service` label stays (D-87).
        spec: { selector: { matchLabels: selector }, endpoints: [{ port: HTTP_PORT_NAME, path: '/metrics', interval: environmentValues.monitoring.interval, honorLabels: true }] },
      });
    }
  }
}
