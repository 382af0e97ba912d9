import { asThresholds, ruleGroups, type RuleGroup, type RuleThresholds } from '../../observability/prometheus/rules';
import { eq } from '../../observability/promql';
import { NAMES, namespaceOf } from './names';
import type { TenantValues } from './values';

export type { AlertRule, RuleGroup } from '../../observability/prometheus/rules';

/**
 * The tenant's PrometheusRule groups: the service's whole rule set (observability/prometheus),
 * restricted to the tenant, with its thresholds, and its scrape targets as the ServiceMonitors
 * name them (job = the Service's name, in the tenant's namespace). The Helm chart renders the
 * same from charts/market-indexer/files/rules.json, which is this function's output with
 * placeholders for the tenant and the thresholds.
 */
export function tenantRuleGroups(tenant: string, environment: string, t: RuleThresholds): RuleGroup[] {
  const target = (job: string) => ({ namespace: eq(namespaceOf(tenant)), job: eq(job) });
  return ruleGroups({ tenant, environment, targets: { api: target(NAMES.api), indexer: target(NAMES.indexer) } }, t);
}

export const tenantRules = (tenant: string, environment: string, m: TenantValues['monitoring']): RuleGroup[] => tenantRuleGroups(tenant, environment, asThresholds(m));
