import { Construct } from 'constructs';
import { k8s } from 'cdk8s-plus-33';
import { ApiWorkload } from './api';
import { TenantHttpRoute, TenantIngress } from './edge';
import { httpRouteRenders } from './edge-values';
import { catalogProblems, manifestsUnder } from './catalog-check';
import { ChainWorkload } from './chain';
import { CloudNativePgCluster } from './cloudnativepg';
import { createTenantContext, type TenantContext } from './context';
import { DevStores } from './dev-stores';
import { IndexerBuildWorkload, IndexerWorkload } from './indexer';
import { TenantMonitoring } from './monitoring';
import { commonLabels, NAMES, POD_SECURITY_LABELS } from './names';
import { TenantNetworkPolicies } from './network';
import { TenantQuota } from './quota';
import { resolveTenant } from './resolve';
import type { TenantInput, TenantValues } from './values';

export interface MarketIndexerTenantProps extends TenantInput {
  /** Tenant id: a lowercase DNS label of at most 40 characters; the namespace is `mi-<tenant>`. */
  readonly tenant: string;
  /** Environment name, a label on every object. */
  readonly environment: string;
  /** `app.kubernetes.io/instance` (default `market-indexer`). */
  readonly instance?: string;
  /** `app.kubernetes.io/managed-by` (default `cdk8s`; the operator says `market-indexer-operator`). */
  readonly managedBy?: string;
  /** The environment's platform namespace, where the operator runs (default `market-indexer-system`). */
  readonly platformNamespace?: string;
  /** Layers under the tenant's own values (an environment's common values), lowest first. */
  readonly baseLayers?: TenantInput[];
}

/**
 * Everything one tenant needs, isolated in its own namespace: service account, settings,
 * the API and the indexer, network policies, quota and limits, monitoring, in dev its own
 * PostgreSQL and Redis, and on the simulated chain that chain. Props state only what differs from the kit's defaults
 * (`TENANT_DEFAULTS`); anything that cannot be deployed is refused with a message naming the
 * field.
 */
export class MarketIndexerTenant extends Construct {
  readonly values: TenantValues;
  readonly context: TenantContext;

  constructor(scope: Construct, id: string, props: MarketIndexerTenantProps) {
    super(scope, id);
    const { tenant, environment, instance, managedBy, platformNamespace, baseLayers, ...own } = props;
    this.values = resolveTenant(tenant, ...(baseLayers ?? []), own);
    const ctx = (this.context = createTenantContext({ tenant, environment, values: this.values, instance, managedBy, platformNamespace }));

    new k8s.KubeNamespace(this, 'namespace', {
      metadata: {
        name: ctx.namespace,
        labels: {
          ...commonLabels(ctx.labels),
          // The API server itself refuses any pod below the restricted profile.
          ...POD_SECURITY_LABELS,
        },
      },
    });
    new k8s.KubeServiceAccount(this, 'service-account', {
      metadata: { name: NAMES.serviceAccount, namespace: ctx.namespace, labels: commonLabels(ctx.labels) },
      automountServiceAccountToken: false,
    });
    new ApiWorkload(this, 'api', ctx);
    if (httpRouteRenders(this.values)) new TenantHttpRoute(this, 'edge', ctx);
    if (this.values.api.ingress.enabled) new TenantIngress(this, 'ingress', ctx);
    new IndexerWorkload(this, 'indexer', ctx);
    if (this.values.indexer.build.enabled) new IndexerBuildWorkload(this, 'indexer-build', ctx);
    if (this.values.source.type === 'simulator') new ChainWorkload(this, 'chain', ctx);
    if (this.values.networkPolicy.enabled) new TenantNetworkPolicies(this, 'network', ctx);
    if (this.values.quota.enabled) new TenantQuota(this, 'quota', ctx);
    if (this.values.monitoring.enabled) new TenantMonitoring(this, 'monitoring', ctx);
    if (this.values.devStores.enabled) new DevStores(this, 'dev-stores', ctx);
    if (this.values.database.cloudnativepg.enabled) new CloudNativePgCluster(this, 'database', ctx);

    const repository = this.values.image.repository;
    this.node.addValidation({
      validate: () => catalogProblems(manifestsUnder(this), (image) => image.startsWith(`${repository}:`) || image.startsWith(`${repository}@`)),
    });
  }
}
