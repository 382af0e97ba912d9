import Ajv, { type ErrorObject } from 'ajv';
import type { TSchema } from '@sinclair/typebox';
import { settingSpec, type SettingName } from '../../core/config/settings';
import { PLATFORM_DEFAULTS, TENANT_DEFAULTS } from './defaults';
import { cloudNativePgProblems, databaseSecretRef } from './cloudnativepg';
import { parseQuantity } from './quantity';
import { ingressProblems } from './country-header';
import { edgeOf, httpRouteRenders } from './edge-values';
import { operatorMemoryProblem, quotaProblems } from './sizing';
import { EnvironmentSchema, TenantValuesSchema, type EnvironmentInput, type PlatformValues, type TenantInput, type TenantValues } from './values';

/** A tenant's values or an environment file that cannot be deployed; the message names every bad field. */
export class KitInputError extends Error {
  override name = 'KitInputError';
  constructor(
    readonly source: string,
    readonly problems: string[],
  ) {
    super(`${source}: ${problems.join('; ')}`);
  }
}

const ajv = new Ajv({ allErrors: true, strict: false });
const validateEnvironment = ajv.compile(EnvironmentSchema);
const validateTenant = ajv.compile(TenantValuesSchema);

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Later layers win; objects merge key by key, arrays and scalars are replaced whole, `false`
 * and `0` override like any value. The Helm chart's `market-indexer.merge` does the same.
 */
export function deepMerge<T>(base: T, ...layers: unknown[]): T {
  let out: unknown = structuredClone(base);
  for (const layer of layers) out = mergeTwo(out, layer);
  return out as T;
}

function mergeTwo(base: unknown, over: unknown): unknown {
  if (over === undefined) return base;
  if (!isPlainObject(base) || !isPlainObject(over)) return structuredClone(over);
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = mergeTwo(base[k], v);
  return out;
}

/** `/tenants/beta/api/replicas` → `tenants.beta.api.replicas`. */
const fieldOf = (instancePath: string) => instancePath.split('/').filter(Boolean).join('.');

export function describeErrors(errors: ErrorObject[] | null | undefined): string[] {
  const seen = new Set<string>();
  for (const e of errors ?? []) {
    const at = fieldOf(e.instancePath);
    let line: string;
    switch (e.keyword) {
      case 'additionalProperties':
        line = `${at ? `${at}.` : ''}${(e.params as { additionalProperty: string }).additionalProperty}: unknown field`;
        break;
      case 'required':
        line = `${at ? `${at}.` : ''}${(e.params as { missingProperty: string }).missingProperty}: required`;
        break;
      case 'enum':
        line = `${at}: must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
        break;
      case 'const':
        line = `${at}: must be ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}`;
        break;
      case 'propertyNames':
        // Only tenant ids are constrained this way.
        line = `${at}.${(e.params as { propertyName: string }).propertyName}: not a tenant id (a lowercase DNS label of at most 40 characters)`;
        break;
      case 'pattern':
        // The propertyNames error carries this one along; it names no field of its own.
        if (e.propertyName !== undefined) continue;
        line = `${at}: ${e.message ?? 'does not match its pattern'}`;
        break;
      case 'anyOf':
      case 'oneOf':
        // The branches' own errors say more; keep only this summary when they do not.
        line = `${at}: matches none of the allowed forms`;
        break;
      default:
        line = `${at || '(top level)'}: ${e.message ?? e.keyword}`;
    }
    seen.add(line);
  }
  return [...seen];
}

/** Validates an environment file's content; throws naming every bad field. */
export function checkEnvironment(input: unknown, source: string): EnvironmentInput {
  if (!validateEnvironment(input)) throw new KitInputError(source, describeErrors(validateEnvironment.errors));
  const env = input as EnvironmentInput;
  const platform = resolvePlatform(env);
  const { loadTest, operator } = platform;
  const problems: string[] = [];
  if (loadTest.enabled && !Object.hasOwn(env.tenants, loadTest.tenant)) {
    problems.push(`platform.loadTest.tenant must name one of this environment's tenants (${Object.keys(env.tenants).sort().join(', ') || 'none'}), got "${loadTest.tenant}"`);
  }
  const memory = operator.enabled ? operatorMemoryProblem(operator.resources.limits.memory) : undefined;
  if (memory) problems.push(memory);
  if (problems.length) throw new KitInputError(source, problems);
  return env;
}

/** A tenant's complete values: the kit defaults, then the environment's, then the tenant's own. */
export function resolveTenant(tenant: string, ...layers: (TenantInput | undefined)[]): TenantValues {
  const merged = deepMerge(TENANT_DEFAULTS, ...layers);
  const source = `tenant ${tenant}`;
  if (!validateTenant(merged)) throw new KitInputError(source, describeErrors(validateTenant.errors));
  const problems = tenantProblems(merged);
  if (problems.length) throw new KitInputError(source, problems);
  return merged;
}

/** The environment's layer for every tenant: everything but `environment` and `tenants`. */
export function environmentLayer(env: EnvironmentInput): TenantInput {
  const { environment: _e, tenants: _t, platform: _p, ...layer } = env;
  return layer;
}

/** The environment's platform values: the kit's defaults, then the environment's. */
export function resolvePlatform(env: EnvironmentInput): PlatformValues {
  return deepMerge(PLATFORM_DEFAULTS, env.platform);
}

export function effectiveSetting(values: TenantValues, name: SettingName): string | number | boolean | undefined {
  const own = (values.settings as Record<string, string | number | boolean | undefined>)[name];
  return own ?? (settingSpec(name).default as string | number | boolean | undefined);
}

/**
 * What the schema cannot say: fields that depend on each other. The Helm chart refuses the same
 * combinations with the same words (`market-indexer.check`), except the two that compare
 * resource quantities (requests against limits, the quota against a rollout's peak, D-70).
 */
export function tenantProblems(v: TenantValues): string[] {
  const p: string[] = [];
  const { api, source, networkPolicy: np } = v;
  if (api.autoscaling.minReplicas > api.autoscaling.maxReplicas) {
    p.push('api.autoscaling.minReplicas must not exceed api.autoscaling.maxReplicas');
  }
  // Every source: the API builds /tx/* on the RPC's blockhashes (D-142, D-210).
  if (!source.rpcUrlSecretRef) p.push('source.rpcUrlSecretRef: required (the API builds /tx/* transactions on the RPC\'s blockhashes; an rpc or webhook source\'s indexer reads it too)');
  if (source.type === 'webhook' && !source.webhookSecretRef) p.push('source.webhookSecretRef: required when source.type is webhook');
  // Pushed transactions are queued by the process that receives them: a standby would keep them.
  if (source.type === 'webhook' && v.indexer.replicas !== 1) p.push('indexer.replicas must be 1 when source.type is webhook');
  // A build backfills from the chain's first transaction: a webhook only delivers what comes (D-411).
  if (source.type === 'webhook' && v.indexer.build.enabled) p.push('indexer.build.enabled needs a source that backfills (rpc or simulator), not webhook');
  if (api.ingress.enabled && !api.ingress.host) p.push('api.ingress.host: required when api.ingress.enabled is true');
  p.push(...routeProblems(v), ...ingressProblems(v));
  p.push(...proxyProblems(v));
  // The dev stores write their Secret(s) whole: a key the kit does not write there would be missing.
  if (v.devStores.enabled) {
    const written = new Set([databaseSecretRef(v).name, v.redis.secretRef.name]);
    const refs = [
      ...(source.type === 'simulator' ? [] : [['rpcUrlSecretRef', source.rpcUrlSecretRef] as const]),
      ['rpcWsUrlSecretRef', source.rpcWsUrlSecretRef] as const,
      ['webhookSecretRef', source.webhookSecretRef] as const,
    ];
    for (const [field, ref] of refs) {
      if (ref && written.has(ref.name)) p.push(`source.${field}: the dev stores write Secret ${ref.name} themselves; name a Secret you create`);
    }
  }
  if (v.monitoring.slotLag.warning >= v.monitoring.slotLag.critical) {
    p.push('monitoring.slotLag.warning must be below monitoring.slotLag.critical');
  }
  for (const [name, r] of [['api', api.resources], ['indexer', v.indexer.resources]] as const) {
    for (const kind of ['cpu', 'memory'] as const) {
      if (parseQuantity(r.requests[kind]) > parseQuantity(r.limits[kind])) {
        p.push(`${name}.resources.requests.${kind} must not exceed ${name}.resources.limits.${kind}`);
      }
    }
  }
  if (np.enabled) {
    const need = (what: string, dest: { ipBlocks: unknown[] }, why: string) => {
      if (!dest.ipBlocks.length) p.push(`networkPolicy.egress.${what}.ipBlocks: required (${why}), or set networkPolicy.enabled to false`);
    };
    if (!v.devStores.enabled) {
      // A CloudNativePG Cluster is reached by its pods' labels, not by address.
      if (!v.database.cloudnativepg.enabled) need('database', np.egress.database, 'the API and the indexer must reach PostgreSQL');
      need('redis', np.egress.redis, 'the API and the indexer must reach Redis');
    }
    if (source.type !== 'simulator') need('rpc', np.egress.rpc, source.type === 'rpc' ? 'the API and the indexer must reach the RPC node' : 'the API must reach the RPC node for /tx/*');
    if (effectiveSetting(v, 'OTEL_EXPORTER_OTLP_ENDPOINT')) need('otlp', np.egress.otlp, 'traces go to OTEL_EXPORTER_OTLP_ENDPOINT');
    if (source.type === 'webhook' && !np.webhookSenders.length) {
      p.push('networkPolicy.webhookSenders: required when source.type is webhook (nobody could post), or set networkPolicy.enabled to false');
    }
  }
  return [...p, ...cloudNativePgProblems(v), ...quotaProblems(v)];
}

/** `TRUST_PROXY` values that name no address: a hop count, `true` (Express trusts whoever is at hop 0). */
const NAMES_NO_ADDRESS = /^(true|false|[0-9]+)$/;
const HOP_COUNT = /^(true|0*[1-9][0-9]*)$/;

/**
 * Whom the API believes about a client (D-230, D-192): the ingress controller's addresses, never
 * a hop count, and a jurisdiction policy only with addresses to believe its country header from
 * (the API refuses to start otherwise). A tenant's own `settings.TRUST_PROXY` wins over the
 * ingress's, as every setting does, but may not be a hop count either. `String()` of a setting
 * reads as Helm's `toString`, so the chart tests the same patterns.
 */
function proxyProblems(v: TenantValues): string[] {
  const p: string[] = [];
  const { ingress, httpRoute } = v.api;
  const route = httpRouteRenders(v);
  const settings = v.settings as Record<string, string | number | boolean | undefined>;
  const own = settings.TRUST_PROXY;
  if (ingress.trustedHops !== undefined) {
    p.push("api.ingress.trustedHops: removed (D-230): a hop count lets whoever reaches the API choose its address; list the ingress controller's addresses or subnets in api.ingress.trustedProxies");
  }
  if (ingress.enabled && !ingress.trustedProxies.length && own === undefined) {
    p.push("api.ingress.trustedProxies: required when api.ingress.enabled is true (the ingress controller's pod addresses or subnets, e.g. the pod network's CIDR; the API's TRUST_PROXY, D-230)");
  }
  if (route && !httpRoute.trustedProxies.length && own === undefined) {
    p.push("api.httpRoute.trustedProxies: required when the HTTPRoute renders (the Gateway's data-plane pod addresses or subnets, e.g. the pod network's CIDR; the API's TRUST_PROXY, D-230)");
  }
  if (own !== undefined && HOP_COUNT.test(String(own))) {
    p.push("settings.TRUST_PROXY: a hop count or true trusts whoever connects; list the proxies' addresses or subnets (with the route: api.httpRoute.trustedProxies; with the ingress: api.ingress.trustedProxies) (D-230)");
  }
  if (settings.GEO_BLOCKED_COUNTRIES || settings.ATTESTATION_REQUIRED_COUNTRIES) {
    if (!settings.GEO_COUNTRY_HEADER) {
      p.push('settings.GEO_COUNTRY_HEADER: required with settings.GEO_BLOCKED_COUNTRIES or settings.ATTESTATION_REQUIRED_COUNTRIES (without it no country is known and the API refuses to start, D-192)');
    }
    const byAddress = own !== undefined ? !NAMES_NO_ADDRESS.test(String(own)) : edgeOf(v).proxies.length > 0;
    if (!byAddress) {
      p.push(
        "settings.GEO_BLOCKED_COUNTRIES, settings.ATTESTATION_REQUIRED_COUNTRIES: a jurisdiction policy needs the proxies' addresses (api.httpRoute.trustedProxies with api.httpRoute.hostnames, api.ingress.enabled with api.ingress.trustedProxies, or settings.TRUST_PROXY as addresses): the API believes GEO_COUNTRY_HEADER only from them and refuses to start otherwise (D-192)",
      );
    }
  }
  return p;
}

/**
 * The route needs a Gateway to attach to, and with a CDN a Gateway that admits only the CDN: an
 * HTTPRoute cannot limit who connects, so a route that passed the CDN's country header on would
 * pass a client's own just as well (D-482).
 */
function routeProblems(v: TenantValues): string[] {
  const p: string[] = [];
  const { httpRoute } = v.api;
  if (!httpRouteRenders(v)) return p;
  if (!httpRoute.parentRefs.length) {
    p.push("api.httpRoute.parentRefs: required when api.httpRoute.hostnames are given (the platform's Gateway the route attaches to, D-480)");
  }
  if (httpRoute.cdn.enabled && !httpRoute.cdn.gatewayAdmitsOnlyCdn) {
    p.push(
      "api.httpRoute.cdn.gatewayAdmitsOnlyCdn: required with api.httpRoute.cdn.enabled: an HTTPRoute cannot limit who connects, so the platform's Gateway (or its load balancer) must admit only the CDN's addresses, or a client's own country header reaches the API (docs/deploy.md, D-482)",
    );
  }
  return p;
}

export type { TSchema };
