import type { ApiObjectMetadata } from 'cdk8s';
import { commonLabels, namespaceOf, type Component, type LabelContext } from './names';
import { PLATFORM_DEFAULTS } from './defaults';
import type { PlatformValues, TenantValues } from './values';

/** What every part of a tenant is built from: its resolved values and where they go. */
export interface TenantContext {
  tenant: string;
  namespace: string;
  values: TenantValues;
  labels: LabelContext;
  /** The environment's platform namespace: its operator reads the indexer's `/status`. */
  platformNamespace: string;
}

export function createTenantContext(opts: {
  tenant: string;
  environment: string;
  values: TenantValues;
  instance?: string;
  managedBy?: string;
  platformNamespace?: string;
}): TenantContext {
  return {
    tenant: opts.tenant,
    namespace: namespaceOf(opts.tenant),
    values: opts.values,
    platformNamespace: opts.platformNamespace ?? PLATFORM_DEFAULTS.namespace,
    labels: {
      tenant: opts.tenant,
      environment: opts.environment,
      instance: opts.instance ?? 'market-indexer',
      version: opts.values.image.tag,
      managedBy: opts.managedBy ?? 'cdk8s',
    },
  };
}

/** Metadata of a namespaced object of the tenant. */
export function metadataOf(ctx: TenantContext, name: string, component?: Component, annotations?: Record<string, string>): ApiObjectMetadata {
  return {
    name,
    namespace: ctx.namespace,
    labels: commonLabels(ctx.labels, component),
    ...(annotations && Object.keys(annotations).length ? { annotations } : {}),
  };
}

export const imageOf = (ctx: TenantContext) => `${ctx.values.image.repository}:${ctx.values.image.tag}`;

/** What an environment's platform part (operator, dashboards, load test) is built from. */
export interface PlatformContext {
  environment: string;
  values: PlatformValues;
  /** `app.kubernetes.io/instance`: the Helm release name, `market-indexer` for the cdk8s app. */
  instance: string;
  version: string;
  managedBy: string;
}
