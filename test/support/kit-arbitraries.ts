import fc from 'fast-check';
import { LOAD_TEST_PROFILES, LOAD_TEST_SCRIPTS, type EnvironmentInput, type TenantInput } from '../../cdk8s/lib/values';
import { API_VARIANTS } from '../../core/config/settings';
import { METRICS } from '../../core/telemetry/metrics';

/**
 * Random valid environments for the kit's property tests: 1–3 tenants, each with its own mix of
 * variant, source, sizing, autoscaling, ingress, dev stores, network policy, monitoring, quota and
 * settings (including values Helm would print in exponent form, such as 1000000).
 */
const ALL_EGRESS = {
  database: { ipBlocks: [{ cidr: '10.20.0.0/16' }] },
  redis: { ipBlocks: [{ cidr: '10.21.0.0/16' }] },
  rpc: { ipBlocks: [{ cidr: '0.0.0.0/0', except: ['10.0.0.0/8'] }], ports: [443, 8899] },
  otlp: { ipBlocks: [{ cidr: '10.40.0.0/16' }] },
};

const settingsArb = fc.record(
  {
    LOG_LEVEL: fc.constantFrom('debug', 'info', 'warn'),
    RATE_LIMIT_MAX_REQUESTS: fc.integer({ min: 1, max: 5000 }),
    INDEXER_CACHE_ROWS: fc.constantFrom(0, 50_000, 1_000_000, 10_000_000),
    SHUTDOWN_GRACE_MS: fc.integer({ min: 1, max: 120_000 }),
    OTEL_EXPORTER_OTLP_ENDPOINT: fc.constant('http://collector.observability.svc:4318'),
    OTEL_TRACES_SAMPLER_ARG: fc.constantFrom(0, 0.1, 0.25, 1),
    WS_MAX_CLIENTS: fc.integer({ min: 1, max: 100_000 }),
    // The provider's limits the rpc source keeps to (D-241); 1000000 prints in exponent form in Helm.
    RPC_REQUESTS_PER_SECOND: fc.constantFrom(0, 100, 1_000, 1_000_000),
    RPC_CONCURRENCY: fc.integer({ min: 1, max: 1_000 }),
    RPC_BATCH_SIZE: fc.constantFrom(1, 20, 100),
  },
  { requiredKeys: [] },
);

export const tenantArb = (name: string): fc.Arbitrary<TenantInput> =>
  fc
    .record({
      source: fc.constantFrom('rpc', 'rpc+ws+webhook', 'webhook', 'simulator'),
      variant: fc.option(fc.constantFrom(...API_VARIANTS), { nil: undefined }),
      replicas: fc.integer({ min: 1, max: 4 }),
      autoscaling: fc.option(fc.record({ min: fc.integer({ min: 1, max: 3 }), extra: fc.integer({ min: 0, max: 4 }) }), { nil: undefined }),
      ingress: fc.option(fc.boolean(), { nil: undefined }),
      // The route (D-480): none, or on a Gateway of the tenant's namespace or another, with or without a CDN, labels and annotations.
      route: fc.option(
        fc.record({ sectionName: fc.boolean(), namespace: fc.boolean(), cdn: fc.boolean(), labels: fc.boolean(), hosts: fc.integer({ min: 1, max: 2 }) }),
        { nil: undefined },
      ),
      // The edge's proxies' addresses (D-230), and a jurisdiction policy believed from them.
      trustedProxies: fc.constantFrom(['10.0.0.0/8'], ['10.244.0.0/16', 'fd00:10::/64'], ['192.0.2.7']),
      policy: fc.boolean(),
      // The CORS allow-list (D-521): none, one, or two origins joined into CORS_ALLOWED_ORIGINS.
      corsAllowedOrigins: fc.constantFrom([], ['https://app.example'], ['https://app.example', 'http://localhost:5173']),
      indexerReplicas: fc.integer({ min: 1, max: 3 }),
      build: fc.constantFrom(undefined, { enabled: true }, { enabled: true, imageTag: '0.3.0' }, { enabled: false, imageTag: '0.3.0' }),
      devStores: fc.boolean(),
      networkPolicy: fc.boolean(),
      monitoring: fc.boolean(),
      // Thresholds reach the rules through placeholders in Helm: values Helm could print another way.
      slotLag: fc.record({ warning: fc.integer({ min: 1, max: 5000 }), extra: fc.integer({ min: 1, max: 1_000_000 }), for: fc.constantFrom('1m', '90s', '5m', '1h') }),
      slo: fc.record({
        availability: fc.constantFrom(0.9, 0.99, 0.995, 0.999, 0.9999),
        latency: fc.constantFrom(0.9, 0.95, 0.99, 0.999),
        latencyThreshold: fc.constantFrom(...METRICS.apiRequestDuration.buckets),
      }),
      quota: fc.boolean(),
      settings: settingsArb,
      cpu: fc.constantFrom('100m', '250m', '1', '1.5'),
    })
    .map((r): TenantInput => {
      const webhook = r.source === 'webhook';
      return {
        ...(r.variant === undefined ? {} : { variant: r.variant }),
        source: {
          type: r.source === 'rpc+ws+webhook' ? 'rpc' : (r.source as 'rpc' | 'webhook' | 'simulator'),
          ...(r.source === 'rpc+ws+webhook'
            ? { rpcWsUrlSecretRef: { name: 'rpc', key: 'ws' }, webhookSecretRef: { name: 'hook', key: 'secret' } }
            : {}),
          ...(webhook ? { webhookSecretRef: { name: r.devStores ? 'hook' : 'market-indexer', key: 'WEBHOOK_SECRET' } } : {}),
          // The dev stores write their Secret whole: an outside RPC's URL lives in another one.
          ...(r.devStores && r.source !== 'simulator' ? { rpcUrlSecretRef: { name: 'rpc', key: 'url' } } : {}),
        },
        api: {
          replicas: r.replicas,
          ...(r.autoscaling
            ? { autoscaling: { enabled: true, minReplicas: r.autoscaling.min, maxReplicas: r.autoscaling.min + r.autoscaling.extra } }
            : {}),
          ...(r.ingress === undefined
            ? {}
            : {
                ingress: {
                  enabled: true,
                  host: `${name}.example.com`,
                  tlsSecretName: r.ingress ? `${name}-tls` : '',
                  trustedProxies: [...r.trustedProxies],
                  // A country header on an Ingress needs its CDN (D-484).
                  ...(r.policy ? { cdnSourceRanges: ['203.0.113.0/24', '2001:db8::/32'] } : {}),
                  ...(r.ingress ? { annotations: { 'nginx.ingress.kubernetes.io/proxy-body-size': '1m' } } : {}),
                },
              }),
          httpRoute:
            r.route === undefined
              ? {}
              : {
                  parentRefs: [{ name: 'public', ...(r.route.namespace ? { namespace: 'gateway-system' } : {}), ...(r.route.sectionName ? { sectionName: 'https' } : {}) }],
                  hostnames: [`${name}.example.com`, ...(r.route.hosts > 1 ? [`${name}.example.org`] : [])],
                  trustedProxies: [...r.trustedProxies],
                  ...(r.route.cdn ? { cdn: { enabled: true, gatewayAdmitsOnlyCdn: true } } : {}),
                  ...(r.route.labels ? { labels: { team: 'markets' }, annotations: { 'example.com/owner': 'markets' } } : {}),
                },
          resources: { requests: { cpu: r.cpu }, limits: { cpu: '2' } },
          ...(r.corsAllowedOrigins.length ? { corsAllowedOrigins: [...r.corsAllowedOrigins] } : {}),
        },
        indexer: { replicas: webhook ? 1 : r.indexerReplicas, ...(r.build && !webhook ? { build: r.build } : {}) },
        devStores: { enabled: r.devStores },
        networkPolicy: { enabled: r.networkPolicy, egress: ALL_EGRESS, ...(webhook ? { webhookSenders: [{ cidr: '203.0.113.0/24' }] } : {}) },
        monitoring: {
          enabled: r.monitoring,
          slotLag: { warning: r.slotLag.warning, critical: r.slotLag.warning + r.slotLag.extra, for: r.slotLag.for },
          slo: r.slo,
        },
        quota: { enabled: r.quota, requestsCpu: '64', requestsMemory: '64Gi', limitsCpu: '64', limitsMemory: '64Gi', pods: 64, persistentVolumeClaims: 4 },
        settings: { ...r.settings, ...(r.policy && (r.ingress !== undefined || r.route !== undefined) ? { ...TRUST_POLICY, ATTESTATION_REQUIRED_COUNTRIES: 'XA' } : {}) },
      };
    });

export const environmentArb: fc.Arbitrary<EnvironmentInput> = fc
  .subarray(['alpha', 'beta', 'gamma-2'], { minLength: 1 })
  .chain((names) =>
    fc.record({
      environment: fc.constantFrom('dev', 'qa', 'prod-eu'),
      image: fc.record({ tag: fc.constantFrom('0.1.0', '1.2.3-rc.1', 'dev') }),
      platform: fc.record({
        namespace: fc.constantFrom('market-indexer-system', 'mi-platform'),
        operator: fc.record({
          enabled: fc.boolean(),
          replicas: fc.integer({ min: 1, max: 3 }),
          // The heap cap in its command is half the memory limit (D-420), in any unit Helm must parse.
          resources: fc.constantFrom(
            { limits: { memory: '512Mi' } },
            // The smallest limit the kit takes (D-445).
            { requests: { memory: '192Mi' }, limits: { memory: '256Mi' } },
            { requests: { memory: '1Gi' }, limits: { memory: '1.5Gi' } },
            { limits: { memory: '0.7Gi' } },
            { limits: { memory: '2G' } },
            { limits: { memory: '3000000000' } },
          ),
          settings: fc.record({ OPERATOR_LAG_THRESHOLD: fc.integer({ min: 1, max: 2_000_000 }), LOG_LEVEL: fc.constantFrom('info', 'debug') }, { requiredKeys: [] }),
          policy: fc.record(
            {
              imageRepositories: fc.constantFrom([], ['registry.example/mi', 'registry.example:5000/team/mi']),
              egressBlocks: fc.constantFrom([], [{ cidr: '10.0.0.0/8', except: ['10.96.0.0/12'] }, { cidr: 'fd00::/8' }]),
            },
            { requiredKeys: [] },
          ),
          apiServer: fc.constantFrom(
            { ipBlocks: [{ cidr: '0.0.0.0/0' }], ports: [443, 6443] },
            { ipBlocks: [{ cidr: '10.0.0.1/32' }, { cidr: '172.16.0.0/12', except: ['172.16.1.0/24'] }], ports: [6443] },
          ),
        }),
        dashboards: fc.record(
          {
            enabled: fc.boolean(),
            namespace: fc.constantFrom('', 'monitoring'),
            labels: fc.constantFrom({ grafana_dashboard: '1' }, { grafana_dashboard: 'market-indexer', team: 'sre' }),
            annotations: fc.constantFrom({}, { grafana_folder: 'Market indexer' }),
          },
          { requiredKeys: [] },
        ),
        loadTest: fc.record(
          {
            enabled: fc.boolean(),
            tenant: fc.constant(names[0]!),
            script: fc.constantFrom(...LOAD_TEST_SCRIPTS),
            profile: fc.constantFrom(...LOAD_TEST_PROFILES),
            rate: fc.constantFrom(1, 50, 100_000),
            parallelism: fc.integer({ min: 1, max: 4 }),
            prometheusRemoteWriteUrl: fc.constantFrom('', 'http://prometheus.monitoring.svc:9090/api/v1/write', 'https://mimir.example.com/api/v1/push'),
            prometheusNamespace: fc.constantFrom('', 'monitoring'),
          },
          { requiredKeys: ['enabled', 'tenant'] },
        ),
      }),
      tenants: fc.record(Object.fromEntries(names.map((n) => [n, tenantArb(n)])) as Record<string, fc.Arbitrary<TenantInput>>),
    }),
  );

/** A jurisdiction policy with its header (D-144, D-192). */
export const TRUST_POLICY = { GEO_BLOCKED_COUNTRIES: 'XB', GEO_COUNTRY_HEADER: 'CF-IPCountry' };
/**
 * Whom the API believes (D-230, D-192): what both doors refuse, each a change to (a copy of) the
 * staging environment and the words of the refusal; kit-synth and kit-helm run the same rows.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const TRUST_REFUSALS: [string, (e: any) => unknown, string][] = [
  [
    "an ingress without the controller's addresses",
    (e) => (e.tenants.alpha.api.ingress = { enabled: true, host: 'alpha-old.staging.markets.example' }),
    "api.ingress.trustedProxies: required when api.ingress.enabled is true (the ingress controller's pod addresses or subnets, e.g. the pod network's CIDR; the API's TRUST_PROXY, D-230)",
  ],
  [
    'a values file written for trustedHops (migration)',
    (e) => (e.api.ingress = { trustedHops: 1 }),
    "api.ingress.trustedHops: removed (D-230): a hop count lets whoever reaches the API choose its address; list the ingress controller's addresses or subnets in api.ingress.trustedProxies",
  ],
  [
    "a route without the Gateway's proxies' addresses",
    (e) => (e.api.httpRoute.trustedProxies = []),
    "api.httpRoute.trustedProxies: required when the HTTPRoute renders (the Gateway's data-plane pod addresses or subnets, e.g. the pod network's CIDR; the API's TRUST_PROXY, D-230)",
  ],
  [
    'a route without a Gateway',
    (e) => (e.api.httpRoute.parentRefs = []),
    "api.httpRoute.parentRefs: required when api.httpRoute.hostnames are given (the platform's Gateway the route attaches to, D-480)",
  ],
  [
    "a CDN's country header through a Gateway anyone reaches",
    (e) => (e.tenants.alpha.api.httpRoute.cdn = { enabled: true }),
    "api.httpRoute.cdn.gatewayAdmitsOnlyCdn: required with api.httpRoute.cdn.enabled: an HTTPRoute cannot limit who connects, so the platform's Gateway (or its load balancer) must admit only the CDN's addresses, or a client's own country header reaches the API (docs/deploy.md, D-482)",
  ],
  [
    'a snippet annotation on the Ingress (migration)',
    (e) => (e.tenants.alpha.api.ingress = { enabled: true, host: 'alpha-old.staging.markets.example', trustedProxies: ['10.16.0.0/14'], annotations: { 'nginx.ingress.kubernetes.io/configuration-snippet': 'proxy_set_header CF-IPCountry "";' } }),
    'api.ingress.annotations["nginx.ingress.kubernetes.io/configuration-snippet"]: refused (D-484): the kit renders no snippet annotation; what it did with one, the HTTPRoute does in Gateway API\'s core (api.httpRoute, docs/deploy.md "Upgrading")',
  ],
  [
    "the hour-long timeout of 0.1's Ingress (migration)",
    (e) => (e.tenants.alpha.api.ingress = { enabled: true, host: 'alpha-old.staging.markets.example', trustedProxies: ['10.16.0.0/14'], annotations: { 'nginx.ingress.kubernetes.io/proxy-read-timeout': '3600' } }),
    'api.ingress.annotations["nginx.ingress.kubernetes.io/proxy-read-timeout"]: set by the kit (D-484): REST and /tx wait 10 s, /ws 45 s on an Ingress of its own, and the CDN\'s addresses come from api.ingress.cdnSourceRanges; remove it (docs/deploy.md "Upgrading")',
  ],
  [
    'a country header on an Ingress without a CDN',
    (e) => ((e.tenants.alpha.api.ingress = { enabled: true, host: 'alpha-old.staging.markets.example', trustedProxies: ['10.16.0.0/14'] }), (e.tenants.alpha.settings = TRUST_POLICY)),
    'api.ingress.cdnSourceRanges: required with settings.GEO_COUNTRY_HEADER when api.ingress.enabled is true: an Ingress cannot remove the header clients send without a snippet (D-484); use the HTTPRoute (api.httpRoute.hostnames), which removes it, or state the CDN that sets it',
  ],
  ['a hop count in settings', (e) => (e.tenants.beta.settings.TRUST_PROXY = 2), "settings.TRUST_PROXY: a hop count or true trusts whoever connects; list the proxies' addresses or subnets"],
  ['true in settings', (e) => (e.settings.TRUST_PROXY = true), "settings.TRUST_PROXY: a hop count or true trusts whoever connects"],
  [
    'a jurisdiction policy without trusted proxies (no edge)',
    (e) => ((e.tenants.alpha.api.httpRoute.enabled = false), (e.tenants.alpha.settings = TRUST_POLICY)),
    "settings.GEO_BLOCKED_COUNTRIES, settings.ATTESTATION_REQUIRED_COUNTRIES: a jurisdiction policy needs the proxies' addresses (api.httpRoute.trustedProxies with api.httpRoute.hostnames, api.ingress.enabled with api.ingress.trustedProxies, or settings.TRUST_PROXY as addresses)",
  ],
  [
    'a jurisdiction policy trusting no address',
    (e) => (e.tenants.alpha.settings = { ...TRUST_POLICY, ATTESTATION_REQUIRED_COUNTRIES: 'XA', TRUST_PROXY: false }),
    "settings.GEO_BLOCKED_COUNTRIES, settings.ATTESTATION_REQUIRED_COUNTRIES: a jurisdiction policy needs the proxies' addresses",
  ],
  [
    'a jurisdiction policy without its header',
    (e) => (e.tenants.alpha.settings = { ATTESTATION_REQUIRED_COUNTRIES: 'XA' }),
    'settings.GEO_COUNTRY_HEADER: required with settings.GEO_BLOCKED_COUNTRIES or settings.ATTESTATION_REQUIRED_COUNTRIES',
  ],
];
