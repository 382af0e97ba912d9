import { Construct } from 'constructs';
import { k8s } from 'cdk8s-plus-33';
import { DASHBOARDS, dashboardJson } from '../../observability/grafana/dashboards';
import { APP_NAME, platformLabels } from './names';
import type { PlatformContext } from './context';

/** The ConfigMap of one dashboard. */
export const dashboardConfigMapName = (slug: string) => `${APP_NAME}-dashboard-${slug}`;

/**
 * The Grafana dashboards of observability/grafana (environment-wide: they pick tenants and
 * environments with template variables), one ConfigMap each, labelled for Grafana's dashboard
 * sidecar. The Helm chart's templates/dashboards.yaml renders the same from files/dashboards/.
 */
export class MarketIndexerDashboards extends Construct {
  constructor(scope: Construct, id: string, ctx: PlatformContext) {
    super(scope, id);
    const d = ctx.values.dashboards;
    for (const dashboard of DASHBOARDS) {
      new k8s.KubeConfigMap(this, dashboard.slug, {
        metadata: {
          name: dashboardConfigMapName(dashboard.slug),
          namespace: d.namespace || ctx.values.namespace,
          labels: { ...platformLabels(ctx, 'dashboards'), ...d.labels },
          ...(Object.keys(d.annotations).length ? { annotations: d.annotations } : {}),
        },
        data: { [`${dashboard.slug}.json`]: dashboardJson(dashboard) },
      });
    }
  }
}
