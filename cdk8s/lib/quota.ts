import { Construct } from 'constructs';
import { k8s } from 'cdk8s-plus-33';
import { metadataOf, type TenantContext } from './context';
import { APP_NAME } from './names';

/** Defaults for a container that states no resources (none of the kit's do). */
export const CONTAINER_DEFAULTS = {
  default: { cpu: '500m', memory: '256Mi' },
  defaultRequest: { cpu: '100m', memory: '128Mi' },
};

const q = (v: string) => k8s.Quantity.fromString(v);

/** What a tenant may consume in its namespace, and the defaults for anything added by hand. */
export class TenantQuota extends Construct {
  constructor(scope: Construct, id: string, ctx: TenantContext) {
    super(scope, id);
    const quota = ctx.values.quota;
    new k8s.KubeResourceQuota(this, 'quota', {
      metadata: metadataOf(ctx, APP_NAME),
      spec: {
        hard: {
          'requests.cpu': q(quota.requestsCpu),
          'requests.memory': q(quota.requestsMemory),
          'limits.cpu': q(quota.limitsCpu),
          'limits.memory': q(quota.limitsMemory),
          pods: q(String(quota.pods)),
          persistentvolumeclaims: q(String(quota.persistentVolumeClaims)),
          // A tenant is reached through the shared ingress only.
          'services.loadbalancers': q('0'),
          'services.nodeports': q('0'),
        },
      },
    });
    new k8s.KubeLimitRange(this, 'limits', {
      metadata: metadataOf(ctx, APP_NAME),
      spec: {
        limits: [
          {
            type: 'Container',
            default: { cpu: q(CONTAINER_DEFAULTS.default.cpu), memory: q(CONTAINER_DEFAULTS.default.memory) },
            defaultRequest: { cpu: q(CONTAINER_DEFAULTS.defaultRequest.cpu), memory: q(CONTAINER_DEFAULTS.defaultRequest.memory) },
          },
        ],
      },
    });
  }
}
