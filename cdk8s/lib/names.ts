import { APP_NAME, ENVIRONMENT_LABEL, TENANT_LABEL } from '../../core/names';

/**
 * Labels of a tenant's and an environment's objects; the names themselves are the catalog's
 * (core/names.ts), which the dashboards' rules and the operator read too. The Helm chart's
 * `_helpers.tpl` builds the same labels.
 */
export { APP_NAME, ENVIRONMENT_LABEL, LABEL_PREFIX, NAMES, namespaceOf, TENANT_LABEL } from '../../core/names';

export type Component = 'api' | 'indexer' | 'indexer-build' | 'chain' | 'postgres' | 'redis' | 'database';

/**
 * Pod Security Admission's labels on every namespace the kit makes: the API server itself refuses
 * any pod below the restricted profile, at the newest version of it. The operator's admission
 * policy on namespaces requires exactly these (operator-admission.ts, D-275).
 */
export const POD_SECURITY_LABELS: Readonly<Record<string, string>> = {
  'pod-security.kubernetes.io/enforce': 'restricted',
  'pod-security.kubernetes.io/enforce-version': 'latest',
};

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

/** What an environment's cluster-level objects are labelled from (no tenant: they serve all tenants). */
export type PlatformLabelContext = Omit<LabelContext, 'tenant'>;

/** Labels of the environment's cluster-level objects (no tenant label: they serve all tenants). */
export function platformLabels(ctx: PlatformLabelContext, component?: string): Record<string, string> {
  const { environment, instance, version, managedBy } = ctx;
  return commonLabels({ environment, instance, version, managedBy }, component);
}
