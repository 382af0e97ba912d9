/**
 * The names a deployment gives the service's objects, declared once for everything that must
 * agree on them: the deployment kit (cdk8s/lib) creates the objects with these names (and the
 * Helm chart's `_helpers.tpl` builds the same ones), the plain Prometheus rules
 * (observability/prometheus) find the scrape jobs by them, and the operator finds a tenant's
 * namespace and Services. Object names are fixed inside a tenant's own namespace.
 */
export const APP_NAME = 'market-indexer';
export const LABEL_PREFIX = 'marketindexer.dev';
export const TENANT_LABEL = `${LABEL_PREFIX}/tenant`;
export const ENVIRONMENT_LABEL = `${LABEL_PREFIX}/environment`;

/** The tenant's namespace: prefixed, so a tenant called `default` or `kube-system` cannot land in those. */
export const namespaceOf = (tenant: string) => `mi-${tenant}`;

/** The objects of a tenant, by part; a Service and its scrape job share the name. */
export const NAMES = {
  serviceAccount: APP_NAME,
  api: `${APP_NAME}-api`,
  indexer: `${APP_NAME}-indexer`,
  indexerBuild: `${APP_NAME}-indexer-build`,
  chain: `${APP_NAME}-chain`,
  postgres: 'postgres',
  /** A tenant's CloudNativePG Cluster: its Services are `<name>-rw`, `-ro`, `-r`, its credentials `<name>-app` (D-500). */
  database: `${APP_NAME}-db`,
  redis: 'redis',
  devStoresSecret: `${APP_NAME}-dev-stores`,
  rules: APP_NAME,
} as const;
