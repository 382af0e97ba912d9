import { Construct } from 'constructs';
import { OPS_PATHS } from '../../core/constants';
import { PrometheusRule, ServiceMonitor, ServiceMonitorSpecEndpointsRelabelingsAction } from '../imports/monitoring.coreos.com';
import { tenantRules } from './alerts';
import { HTTP_PORT_NAME } from './api';
import { metadataOf, type TenantContext } from './context';
import { commonLabels, NAMES, selectorLabels } from './names';

/** Scraping of both processes and the tenant's rules (alerts and SLO recording rules), for the prometheus-operator. */
export class TenantMonitoring extends Construct {
  constructor(scope: Construct, id: string, ctx: TenantContext) {
    super(scope, id);
    const m = ctx.values.monitoring;
    const meta = (name: string, component?: 'api' | 'indexer') => ({
      ...metadataOf(ctx, name, component),
      labels: { ...commonLabels(ctx.labels, component), ...m.labels },
    });
    for (const component of ['api', 'indexer'] as const) {
      new ServiceMonitor(this, `${component}-monitor`, {
        metadata: meta(NAMES[component], component),
        spec: {
          selector: { matchLabels: selectorLabels(ctx.labels, component) },
          // The processes label their series with `service` and `tenant`; the operator's own
          // `service` target label (the Service's name) would rename ours to exported_service.
          endpoints: [
            {
              port: HTTP_PORT_NAME,
              path: OPS_PATHS.metrics,
              interval: m.interval,
              honorLabels: true,
              // Every series says which environment it is from: the dashboards' `environment`
              // variable selects by it, and one Prometheus may scrape several (D-215).
              relabelings: [{ action: ServiceMonitorSpecEndpointsRelabelingsAction.REPLACE, targetLabel: 'environment', replacement: ctx.labels.environment }],
            },
          ],
        },
      });
    }
    new PrometheusRule(this, 'rules', {
      metadata: meta(NAMES.rules),
      // Alerts carry the tenant and the environment: one Alertmanager may route several (D-214).
      spec: { groups: tenantRules(ctx.tenant, ctx.labels.environment, m) },
    });
  }
}
