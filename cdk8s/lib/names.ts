/**
 * Names and labels of a tenant's objects. Object names are fixed inside the tenant's own
 * namespace; the Helm chart's `_helpers.tpl` builds the same ones.
 */
export const APP_NAME = 'market-indexer';
export const LABEL_PREFIX = 'marketindexer.dev';
export const TENANT_LABEL = `${LABEL_PREFIX}/tenant`;
export const ENVIRONMENT_LABEL = `${LABEL_PREFIX}/environment`;

export type Component = 'api' | 'indexer' | 'chain' | 'postgres' | 'redis';

/** The tenant's namespace: prefixed, so a tenant called `default` or `kube-system` cannot land in those. */
export const namespaceOf = (tenant: string) => `mi-${tenant}`;

export const NAMES = {
  serviceAccount: APP_NAME,
  api: `${APP_NAME}-api`,
  indexer: `${APP_NAME}-indexer`,
  chain: `${APP_NAME}-chain`,
  postgres: 'postgres',
  redis: 'redis',
  devStoresSecret: `${APP_NAME}-dev-stores`,
  rules: APP_NAME,
} as const;

export interface LabelContext {
  /** Absent on the environment's cluster-level objects, which serve every tenant. */
  tenant?: string;
  environment: string;
  /** `app.kubernetes.io/instance`: the Helm release name, `market-indexer` for the cdk8s app. */
  instance: string;
  version: string;
  managedBy: string;
}

/** Labels that select a component's pods: few and never changing (selectors are immutable). */
export function selectorLabels(ctx: Pick<LabelContext, 'instance'>, component: Component): Record<string, string> {
  return {
    'app.kubernetes.io/name': APP_NAME,
    'app.kubernetes.io/instance': ctx.instance,
    'app.kubernetes.io/component': component,
  };
}

/** Labels on every object of a tenant, and (without a tenant) on the environment's platform part. */
export function commonLabels(ctx: LabelContext, component?: string): Record<string, string> {
  return {
    'app.kubernetes.io/name': APP_NAME,
    'app.kubernetes.io/instance': ctx.instance,
    ...(component ? { 'app.kubernetes.io/component': component } : {}),
    'app.kubernetes.io/part-of': APP_NAME,
    'app.kubernetes.io/version': ctx.version,
    'app.kubernetes.io/managed-by': ctx.managedBy,
    ...(ctx.tenant ? { [TENANT_LABEL]: ctx.tenant } : {}),
    [ENVIRONMENT_LABEL]: ctx.environment,
  };
}
