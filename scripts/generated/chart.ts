import { K6_TREND_STATS } from '../../observability/grafana/k6';
import { K6_API_PORT, K6_UID } from '../../cdk8s/lib/load-test';
import { CHAIN_PATHS, DEFAULT_PORTS, IMAGE, OPS_PATHS } from '../../core/constants';
import { SETTING_NAMES, settingSpec, SOURCE_TYPES } from '../../core/config/settings';
import { CHAIN_STORAGE } from '../../cdk8s/lib/chain';
import { API_SERVICE_PORT } from '../../cdk8s/lib/api';
import { EDGE_RULES } from '../../cdk8s/lib/edge';
import { INGRESS_TIMEOUT_SECONDS } from '../../cdk8s/lib/country-header';
import { tenantAclCommand } from '../../cdk8s/lib/redis-users';
import { tenantAclUser } from '../../core/redis/acl';
import { ACL_CHECKSUM_ANNOTATION, DEV_REDIS, devRedisAclFile, devStoreUrls, REDIS_ACL_ARGS, REDIS_ARGS } from '../../cdk8s/lib/dev-stores';
import { CHAIN_DATA_DIR, CHAIN_LISTEN_HOST, SECRET_REFS, secretSettingsOf, type KitProcess } from '../../cdk8s/lib/settings-env';
import { CHAIN_RESOURCES, CHECK_RESOURCES } from '../../cdk8s/lib/sizing';
import { METRICS, METRIC_LABELS, METRIC_SERVICES, type MetricKey } from '../../core/telemetry/metrics';
import { EnvironmentSchema } from '../../cdk8s/lib/values';
import { OPERATOR_PERMISSIONS } from '../../cdk8s/lib/operator-permissions';
import { NAMESPACE_PLACEHOLDER, operatorAdmissionObjects } from '../../cdk8s/lib/operator-admission';
import { tenantRuleGroups } from '../../cdk8s/lib/alerts';
import { RULE_DEFAULTS, type RuleThresholds } from '../../observability/prometheus/rules';

/**
 * The Helm chart's `values.schema.json`: the environment schema the cdk8s app validates with
 * (cdk8s/lib/values.ts), so both doors refuse the same values with the same field names.
 */
export function valuesSchemaJson(): string {
  const env = JSON.parse(JSON.stringify(EnvironmentSchema)) as { properties: Record<string, unknown> };
  const schema = {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'market-indexer chart values (generated from cdk8s/lib/values.ts by `npm run generate`)',
    ...env,
    // Helm passes an umbrella chart's `global` values to every subchart.
    properties: { ...env.properties, global: { type: 'object', description: 'values shared by an umbrella chart; unused' } },
  };
  return `${JSON.stringify(schema, null, 2)}\n`;
}

/**
 * `files/service.json`: what the chart's templates need to know about the service, taken from
 * `core` (ports, probe paths, the image's user and commands, which process reads which setting,
 * metric names), so the templates type none of it.
 */
export function serviceFactsJson(): string {
  const facts = {
    generatedFrom: 'core/constants.ts, core/config/settings.ts, core/telemetry/metrics.ts (npm run generate)',
    ports: DEFAULT_PORTS,
    paths: OPS_PATHS,
    image: { uid: IMAGE.uid, writableDir: IMAGE.writableDir, commands: IMAGE.commands },
    settings: Object.fromEntries(
      SETTING_NAMES.map((name) => {
        const s = settingSpec(name);
        return [name, { readBy: s.readBy, secret: s.secret, ...(s.default === undefined ? {} : { default: s.default }) }];
      }),
    ),
    // Each process's secret settings per source, as [setting, values section, key] (cdk8s/lib/settings-env.ts).
    secretEnv: Object.fromEntries(
      (['api', 'indexer', 'migrate'] as KitProcess[]).map((p) => [
        p,
        Object.fromEntries(SOURCE_TYPES.map((src) => [src, secretSettingsOf(p, src).map((n) => [n, ...SECRET_REFS[n]])])),
      ]),
    ),
    // A simulator-source tenant's chain (cdk8s/lib/chain.ts).
    chain: { dataDir: CHAIN_DATA_DIR, listenHost: CHAIN_LISTEN_HOST, storage: CHAIN_STORAGE, paths: CHAIN_PATHS, resources: CHAIN_RESOURCES },
    // The tenant's HTTPRoute: its rules per kind of traffic, with their timeouts (cdk8s/lib/edge.ts, D-481).
    edge: { rules: EDGE_RULES, servicePort: API_SERVICE_PORT },
    // The optional Ingresses' timeouts, seconds (cdk8s/lib/country-header.ts, D-484).
    ingress: { timeoutSeconds: INGRESS_TIMEOUT_SECONDS },
    metrics: Object.fromEntries((Object.keys(METRICS) as MetricKey[]).map((k) => [k, METRICS[k].name])),
    metricLabels: METRIC_LABELS,
    metricServices: METRIC_SERVICES,
    // The operator's ClusterRole (scope cluster), tenant ClusterRole (tenant) and Role (platform);
    // resourceNames by reference (templates/operator.yaml names them).
    operatorPermissions: OPERATOR_PERMISSIONS.map((p) => ({ group: p.group, resource: p.resource, verbs: p.verbs, scope: p.scope, ...(p.resourceNames ? { resourceNames: p.resourceNames } : {}) })),
    // The admission policies on the operator's RoleBindings and namespaces
    // (cdk8s/lib/operator-admission.ts), for the namespace `namespacePlaceholder` stands for.
    operatorAdmission: (() => {
      const objects = operatorAdmissionObjects(NAMESPACE_PLACEHOLDER, {}) as { metadata: { name: string }; spec: unknown }[];
      const policies = objects.filter((_, i) => i % 2 === 0).map((policy, i) => ({ name: policy.metadata.name, policySpec: policy.spec, bindingSpec: objects[2 * i + 1]!.spec }));
      return { namespacePlaceholder: NAMESPACE_PLACEHOLDER, policies };
    })(),
    // The load test's TestRun (cdk8s/lib/load-test.ts).
    loadTest: { trendStats: K6_TREND_STATS, k6Uid: K6_UID, k6ApiPort: K6_API_PORT },
    // The `helm test` Pod (templates/tests/api-check.yaml), which runs image.commands.check.
    check: { resources: CHECK_RESOURCES },
    // The dev stores' Redis (cdk8s/lib/dev-stores.ts, D-231): how it runs, its users (the tenant's
    // from tenantAclRules) and the tenant's URL, with `tenantToken` where the tenant's id goes.
    devRedis: {
      tenantToken: TENANT_TOKEN,
      args: [...REDIS_ARGS, ...REDIS_ACL_ARGS],
      aclDir: DEV_REDIS.aclDir,
      aclKey: DEV_REDIS.aclKey,
      aclFile: devRedisAclFile(TENANT_TOKEN),
      aclChecksumAnnotation: ACL_CHECKSUM_ANNOTATION,
      adminPassword: DEV_REDIS.admin.password,
      url: devStoreUrls(TENANT_TOKEN).REDIS_URL,
    },
    // What NOTES.txt tells a tenant on a Redis the kit does not run (D-193, D-231).
    redisUser: {
      tenantToken: TENANT_TOKEN,
      command: tenantAclCommand(TENANT_TOKEN, { cleartext: 'PASSWORD' }),
      url: `redis://${tenantAclUser(TENANT_TOKEN)}:PASSWORD@HOST:6379`,
    },
  };
  return `${JSON.stringify(facts, null, 2)}\n`;
}

/** The placeholders of the tenant and the environment in files/rules.json. */
export const TENANT_TOKEN = '@@tenant@@';
export const ENVIRONMENT_TOKEN = '@@environment@@';

/**
 * `files/rules.json`: the tenant's rule groups as the cdk8s app renders them
 * (cdk8s/lib/alerts.ts), with placeholders where the tenant and its `monitoring` thresholds go,
 * and for each placeholder its path under `monitoring`. The chart's monitoring.yaml replaces them
 * and renders the groups, so no rule is written twice.
 */
export function rulesTemplateJson(): string {
  const placeholders: Record<string, string[]> = {};
  const tokens = Object.fromEntries(
    Object.entries(RULE_DEFAULTS).map(([group, fields]) => [
      group,
      Object.fromEntries(
        Object.keys(fields).map((field) => {
          const token = `@@${group}.${field}@@`;
          placeholders[token] = [group, field];
          return [field, token];
        }),
      ),
    ]),
  ) as unknown as RuleThresholds;
  const file = {
    generatedFrom: 'cdk8s/lib/alerts.ts, observability/prometheus/rules.ts (npm run generate)',
    tenant: TENANT_TOKEN,
    environment: ENVIRONMENT_TOKEN,
    placeholders,
    groups: tenantRuleGroups(TENANT_TOKEN, ENVIRONMENT_TOKEN, tokens),
  };
  return `${JSON.stringify(file, null, 2)}\n`;
}
