import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { API_VARIANTS, SETTINGS, SOURCE_TYPES, TENANT_PATTERN, settingSpec, type SettingName } from '../../core/config/settings';
import { METRICS } from '../../core/telemetry/metrics';
import { CloudNativePg } from './cloudnativepg-values';
import { ADDRESS_OR_CIDR, Destination, DNS_LABEL, DNS_SUBDOMAIN, DURATION, IpBlock, Quantity, Resources, SecretKeyRef, StringEnum, StringMap } from './schema-parts';

export type { Destination, Resources, SecretKeyRef } from './schema-parts';

/**
 * What one tenant is made of, as data: the schema of a tenant's values. It is the single
 * description behind the environment files (`cdk8s/environments/*.ts`), the Helm chart's
 * `values.schema.json` (generated from it) and the construct's props, so a field renamed here
 * is renamed everywhere or fails a test.
 *
 * `TenantValues` is complete (every field present); files state only what differs from
 * `TENANT_DEFAULTS`, and are validated against the deep-partial form of the same schema.
 */

/**
 * The settings a tenant may tune: non-secret settings read by the API or the indexer that the
 * kit does not set itself. Secrets come only through the secret references; the kit-managed ones
 * follow from other fields (tenant, ports, ingress, source).
 */
export const KIT_MANAGED_SETTINGS = [
  'NODE_ENV',
  'TENANT_ID',
  'PROGRAM_ID',
  'API_HOST',
  'API_PORT',
  // An alias of API_PORT (D-78): the kit always sets API_PORT, which wins.
  'PORT',
  'INDEXER_PORT',
  'ALLOW_EMBEDDED_STORES',
  'DATA_DIR',
  // Follows from the tenant's `variant` (D-159): one field says what a tenant serves.
  'API_VARIANT',
  // Follows from the workload (D-440): `build` only in the builder's Deployment, never tenant-wide,
  // where it would make every indexer replica a builder and leave the live tables unwritten.
  'INDEXER_MODE',
] as const satisfies readonly SettingName[];

export const TUNABLE_SETTINGS = (Object.keys(SETTINGS) as SettingName[]).filter((name) => {
  const s = settingSpec(name);
  return (
    !s.secret &&
    !(KIT_MANAGED_SETTINGS as readonly string[]).includes(name) &&
    (s.readBy.includes('api') || s.readBy.includes('indexer'))
  );
});

const Settings = Type.Object(
  Object.fromEntries(
    TUNABLE_SETTINGS.map((name) => [name, Type.Optional(Type.Unsafe({ ...settingSpec(name).jsonSchema, description: settingSpec(name).description }))]),
  ),
  { additionalProperties: false, description: 'settings for this tenant\'s processes' },
);
export type SettingsValues = Partial<Record<SettingName, string | number | boolean>>;


const tenantProperties = {
  image: Type.Object(
    {
      repository: Type.String({ minLength: 1, description: 'image repository' }),
      tag: Type.String({ pattern: '^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$', description: 'image tag' }),
      pullPolicy: StringEnum(['IfNotPresent', 'Always', 'Never'] as const),
    },
    { additionalProperties: false },
  ),
  variant: StringEnum(API_VARIANTS, {
    description: "interface variant the API serves (its API_VARIANT): `v1`, the spec's contract, or `legacy`, the spec appendix's envelope, cursor pagination and plans by API key",
  }),
  source: Type.Object(
    {
      type: StringEnum(SOURCE_TYPES, {
        description: 'rpc: Solana JSON-RPC (webhook pushes, if configured, only speed it up); webhook: a provider pushes transactions only; simulator: the simulated chain (dev)',
      }),
      programId: Type.String({ pattern: settingSpec('PROGRAM_ID').jsonSchema.pattern as string, description: 'market program address' }),
      rpcUrlSecretRef: Type.Optional(SecretKeyRef),
      rpcWsUrlSecretRef: Type.Optional(SecretKeyRef),
      webhookSecretRef: Type.Optional(SecretKeyRef),
      simulator: Type.Object(
        {
          seed: Type.Integer({ minimum: 0 }),
          feeds: Type.Integer({ minimum: 1, maximum: 16 }),
          epochSeconds: Type.Integer({ minimum: 10, maximum: 86_400 }),
        },
        { additionalProperties: false },
      ),
    },
    { additionalProperties: false },
  ),
  database: Type.Object(
    {
      secretRef: Type.Optional({
        ...SecretKeyRef,
        description: "bring your own PostgreSQL: the Secret key holding DATABASE_URL (postgres://…); unset: the Secret market-indexer's key DATABASE_URL, or with cloudnativepg.enabled the uri of the Cluster's generated <cluster>-app Secret",
      }),
      cloudnativepg: CloudNativePg,
    },
    { additionalProperties: false },
  ),
  redis: Type.Object({ secretRef: SecretKeyRef }, { additionalProperties: false }),
  api: Type.Object(
    {
      replicas: Type.Integer({ minimum: 1, maximum: 100, description: 'replicas when autoscaling is off' }),
      autoscaling: Type.Object(
        {
          enabled: Type.Boolean(),
          minReplicas: Type.Integer({ minimum: 1, maximum: 100 }),
          maxReplicas: Type.Integer({ minimum: 1, maximum: 100 }),
          targetCPUUtilizationPercentage: Type.Integer({ minimum: 10, maximum: 100 }),
        },
        { additionalProperties: false },
      ),
      resources: Resources,
      corsAllowedOrigins: Type.Array(Type.String({ pattern: '^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?$', maxLength: 260 }), { description: "the web origins (scheme://host[:port]) whose pages may send signed and API-key requests from a browser (the API's CORS_ALLOWED_ORIGINS); public reads answer any origin" }),
      httpRoute: Type.Object(
        {
          enabled: Type.Boolean({
            description:
              "a Gateway API HTTPRoute for the tenant's hostnames, attached to the platform's Gateway (also sets PUBLIC_HOSTS, and TRUST_PROXY from trustedProxies); rendered when hostnames are given",
          }),
          parentRefs: Type.Array(
            Type.Object(
              {
                name: Type.String({ pattern: DNS_SUBDOMAIN, maxLength: 253, description: "the Gateway's name" }),
                namespace: Type.Optional(Type.String({ pattern: DNS_LABEL, maxLength: 63, description: "the Gateway's namespace (default: the tenant's)" })),
                sectionName: Type.Optional(Type.String({ pattern: DNS_SUBDOMAIN, maxLength: 253, description: 'one listener of the Gateway (default: every listener that admits the route)' })),
              },
              { additionalProperties: false },
            ),
            { maxItems: 32, description: 'the Gateways the route attaches to (Gateway API parentRefs); required when hostnames are given' },
          ),
          hostnames: Type.Array(Type.String({ pattern: DNS_SUBDOMAIN, maxLength: 253 }), {
            maxItems: 16,
            description: 'public host names, e.g. alpha.markets.example; none: no route',
          }),
          annotations: StringMap('annotations of the HTTPRoute'),
          labels: StringMap('labels of the HTTPRoute, beside the kit\'s own'),
          trustedProxies: Type.Array(Type.String({ pattern: ADDRESS_OR_CIDR }), {
            description:
              "the Gateway's data-plane pod addresses or subnets (TRUST_PROXY): the only peers whose X-Forwarded-For and country header the API believes; required when the route renders",
          }),
          cdn: Type.Object(
            {
              enabled: Type.Boolean({
                description: 'a CDN in front of the Gateway sets settings.GEO_COUNTRY_HEADER: the route passes it on instead of removing it',
              }),
              gatewayAdmitsOnlyCdn: Type.Boolean({
                description:
                  "the platform's Gateway (or its load balancer) admits only the CDN's addresses, so no client reaches it with a header of its own; required with cdn.enabled (an HTTPRoute cannot limit who connects)",
              }),
            },
            { additionalProperties: false },
          ),
        },
        { additionalProperties: false },
      ),
      ingress: Type.Object(
        {
          enabled: Type.Boolean(),
          className: Type.String({ minLength: 1 }),
          host: Type.String({ pattern: `^(${DNS_SUBDOMAIN.slice(1, -1)})?$`, maxLength: 253 }),
          tlsSecretName: Type.String({ pattern: `^(${DNS_SUBDOMAIN.slice(1, -1)})?$`, maxLength: 253, description: 'empty: no TLS section' }),
          annotations: StringMap("annotations of both Ingresses; the timeouts, the CDN's allow-list and any snippet are the kit's to set or refuse"),
          trustedProxies: Type.Array(Type.String({ pattern: ADDRESS_OR_CIDR }), {
            description:
              "the ingress controller's pod addresses or subnets (TRUST_PROXY): the only peers whose X-Forwarded-For and country header the API believes; required when the ingress is on",
          }),
          cdnSourceRanges: Type.Array(Type.String({ pattern: ADDRESS_OR_CIDR }), {
            description:
              "a CDN in front of the Ingress that sets settings.GEO_COUNTRY_HEADER: its egress addresses or subnets, the only ones the Ingress then admits; required with a country header (an Ingress cannot remove the header clients send; the HTTPRoute does)",
          }),
          // Kept only to refuse it by name (tenantProblems), so a file written for it says what replaced it (D-230).
          trustedHops: Type.Optional(Type.Integer({ description: "removed: a hop count trusts whoever connects; list the ingress controller's addresses in trustedProxies" })),
        },
        { additionalProperties: false },
      ),
    },
    { additionalProperties: false },
  ),
  indexer: Type.Object(
    {
      replicas: Type.Integer({ minimum: 1, maximum: 5, description: 'one writer, the rest hot standbys (rpc and simulator sources)' }),
      resources: Resources,
      build: Type.Object(
        {
          enabled: Type.Boolean({
            description:
              "a re-index: one more indexer, in INDEXER_MODE=build, rebuilds the tables of its release's projection in a schema of their own while the live indexer keeps writing, and switches the API to them once caught up (rpc and simulator sources)",
          }),
          imageTag: Type.String({
            pattern: '^([A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?$',
            description: "the builder's image tag: the release whose projection it builds; empty: the tenant's image.tag",
          }),
        },
        { additionalProperties: false },
      ),
    },
    { additionalProperties: false },
  ),
  settings: Settings,
  networkPolicy: Type.Object(
    {
      enabled: Type.Boolean(),
      gatewayNamespace: Type.String({ pattern: DNS_LABEL, description: "namespace of the Gateway's data plane (its proxy pods) that may reach the API when the HTTPRoute renders" }),
      ingressControllerNamespace: Type.String({ pattern: DNS_LABEL, description: 'namespace of the ingress controller that may reach the API when the Ingress is on' }),
      monitoringNamespace: Type.String({ pattern: DNS_LABEL, description: 'namespace whose Prometheus may scrape both processes' }),
      webhookSenders: Type.Array(IpBlock, { description: 'address blocks allowed to post to the indexer\'s webhook route' }),
      egress: Type.Object(
        { database: Destination, redis: Destination, rpc: Destination, otlp: Destination },
        { additionalProperties: false },
      ),
    },
    { additionalProperties: false },
  ),
  monitoring: Type.Object(
    {
      enabled: Type.Boolean({ description: 'ServiceMonitors and the PrometheusRule (needs the prometheus-operator CRDs)' }),
      interval: Type.String({ pattern: DURATION }),
      labels: StringMap('labels the Prometheus selects ServiceMonitors and rules by'),
      slotLag: Type.Object(
        {
          warning: Type.Integer({ minimum: 1 }),
          critical: Type.Integer({ minimum: 1 }),
          for: Type.String({ pattern: DURATION }),
        },
        { additionalProperties: false },
      ),
      slo: Type.Object(
        {
          availability: Type.Number({ minimum: 0.5, exclusiveMaximum: 1, description: 'share of API requests (probes and scrapes aside) that must not fail with 5xx' }),
          latency: Type.Number({ minimum: 0.5, exclusiveMaximum: 1, description: 'share of API requests that must be faster than latencyThreshold' }),
          latencyThreshold: Type.Unsafe<number>({
            type: 'number',
            enum: [...METRICS.apiRequestDuration.buckets],
            description: 'seconds; a bucket of service_api_request_duration_seconds',
          }),
        },
        { additionalProperties: false, description: 'API objectives of the multi-window, multi-burn-rate alerts' },
      ),
    },
    { additionalProperties: false },
  ),
  quota: Type.Object(
    {
      enabled: Type.Boolean(),
      requestsCpu: Quantity('sum of CPU requests'),
      requestsMemory: Quantity('sum of memory requests'),
      limitsCpu: Quantity('sum of CPU limits'),
      limitsMemory: Quantity('sum of memory limits'),
      pods: Type.Integer({ minimum: 1 }),
      persistentVolumeClaims: Type.Integer({ minimum: 0 }),
    },
    { additionalProperties: false },
  ),
  devStores: Type.Object(
    {
      enabled: Type.Boolean({ description: 'in-cluster single-instance PostgreSQL and Redis (dev only)' }),
      storage: Quantity('volume size of each store'),
      postgresImage: Type.String({ minLength: 1 }),
      redisImage: Type.String({ minLength: 1 }),
    },
    { additionalProperties: false },
  ),
};

export const TenantValuesSchema = Type.Object(tenantProperties, { additionalProperties: false });
export type TenantValues = Static<typeof TenantValuesSchema>;

export type DeepPartial<T> = T extends readonly (infer _U)[] ? T : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;
export type TenantInput = DeepPartial<TenantValues>;

export const ENVIRONMENT_NAME = '^[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?$';

/**
 * The environment's cluster-level part, shared by its tenants (the operator and the dashboards
 * plug in here). Its own defaults are `PLATFORM_DEFAULTS`.
 */
/** Operator settings an environment may tune (the rest follow from the platform). */
export const OPERATOR_TUNABLE_SETTINGS = [
  'LOG_LEVEL',
  'OPERATOR_LEASE_SECONDS',
  'OPERATOR_RESYNC_SECONDS',
  'OPERATOR_STATUS_SECONDS',
  'OPERATOR_LAG_THRESHOLD',
  'OPERATOR_STATUS_URL',
] as const satisfies readonly SettingName[];

/** The k6 scripts of loadtest/k6 (a test checks the directory) and the profiles of load.ts. */
export const LOAD_TEST_SCRIPTS = ['fanout-ws', 'limits-rest', 'limits-ws', 'load'] as const;
export const LOAD_TEST_PROFILES = ['smoke', 'load', 'stress', 'soak', 'spike'] as const;

const LoadTest = Type.Object(
  {
    enabled: Type.Boolean({ description: 'render a k6-operator TestRun (needs the k6-operator and its CRD) and the bundled k6 scripts in a ConfigMap' }),
    tenant: Type.String({ pattern: `^(${TENANT_PATTERN.source.slice(1, -1)})?$`, description: 'the tenant whose API Service the test aims at (its namespace holds the TestRun)' }),
    script: StringEnum(LOAD_TEST_SCRIPTS, { description: 'load-test script' }),
    profile: StringEnum(LOAD_TEST_PROFILES, { description: 'profile of the load script' }),
    rate: Type.Integer({ minimum: 1, maximum: 100_000, description: 'arrival rate of the load script, iterations per second (RATE)' }),
    parallelism: Type.Integer({ minimum: 1, maximum: 100, description: 'k6 runner pods' }),
    image: Type.String({ minLength: 1, description: 'k6 runner image' }),
    prometheusRemoteWriteUrl: Type.String({
      pattern: '^(https?://.+)?$',
      description: "the cluster Prometheus's remote-write receiver (K6_PROMETHEUS_RW_SERVER_URL); empty: no remote write",
    }),
    prometheusNamespace: Type.String({ pattern: `^(${DNS_LABEL.slice(1, -1)})?$`, maxLength: 63, description: 'namespace of that Prometheus, which the runners may reach' }),
    resources: Resources,
  },
  { additionalProperties: false },
);

/** What a MarketIndexer may ask for beyond the environment's values (the operator's policy, D-200). */
export const OperatorPolicySchema = Type.Object(
  {
    imageRepositories: Type.Array(Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*(:[0-9]+)?(/[A-Za-z0-9][A-Za-z0-9._-]*)*$' }), {
      description: "image repositories (no tag) a MarketIndexer's spec may name, besides the environment's own image and dev store images",
    }),
    egressBlocks: Type.Array(IpBlock, { description: "address blocks a MarketIndexer's egress rules may open (each of its blocks inside one of these); empty: none" }),
  },
  { additionalProperties: false },
);

export const PlatformValuesSchema = Type.Object(
  {
    namespace: Type.String({ pattern: DNS_LABEL, maxLength: 63, description: 'namespace of the cluster-level objects' }),
    operator: Type.Object(
      {
        enabled: Type.Boolean({ description: 'run the MarketIndexer operator (and install its CRD)' }),
        replicas: Type.Integer({ minimum: 1, maximum: 5, description: 'one leader, the rest standbys (Lease)' }),
        resources: Resources,
        settings: Type.Object(
          Object.fromEntries(
            OPERATOR_TUNABLE_SETTINGS.map((name) => [name, Type.Optional(Type.Unsafe({ ...settingSpec(name).jsonSchema, description: settingSpec(name).description }))]),
          ),
          { additionalProperties: false, description: 'operator settings' },
        ),
        policy: OperatorPolicySchema,
        admissionPolicy: Type.Boolean({
          description:
            "a ValidatingAdmissionPolicy letting the operator's ServiceAccount write only its own RoleBinding, in the tenant namespaces it manages (needs Kubernetes 1.30 or later)",
        }),
        apiServer: { ...Destination, description: "the Kubernetes API server's addresses and ports: the only egress of the operator's pods besides DNS and the tenants' /status (its NetworkPolicy)" },
      },
      { additionalProperties: false },
    ),
    dashboards: Type.Object(
      {
        enabled: Type.Boolean({ description: 'the Grafana dashboards (observability/grafana) as ConfigMaps for Grafana\'s dashboard sidecar' }),
        namespace: Type.String({
          pattern: `^(${DNS_LABEL.slice(1, -1)})?$`,
          maxLength: 63,
          description: 'namespace of the ConfigMaps, one the sidecar watches; empty: the platform namespace',
        }),
        labels: StringMap('labels the sidecar selects ConfigMaps by (kube-prometheus-stack: grafana_dashboard: "1")'),
        annotations: StringMap('annotations of the ConfigMaps, e.g. the sidecar\'s folder annotation'),
      },
      { additionalProperties: false },
    ),
    loadTest: LoadTest,
  },
  { additionalProperties: false },
);
export type PlatformValues = Static<typeof PlatformValuesSchema>;

/** The optional form of a schema, at every depth: what a file may leave out. */
export function deepPartial(schema: TSchema): TSchema {
  const s = schema as Record<string, unknown>;
  const out: Record<string, unknown> = { ...s };
  delete out.required;
  if (s.properties) {
    out.properties = Object.fromEntries(
      Object.entries(s.properties as Record<string, TSchema>).map(([k, v]) => [k, deepPartial(v)]),
    );
  }
  if (s.patternProperties) {
    out.patternProperties = Object.fromEntries(
      Object.entries(s.patternProperties as Record<string, TSchema>).map(([k, v]) => [k, deepPartial(v)]),
    );
  }
  return out as TSchema;
}

/**
 * An environment: what differs from the kit's defaults for every tenant of it, and its tenants
 * with what differs for each. The same shape as the Helm chart's values.
 */
export const EnvironmentSchema: TSchema = Type.Unsafe({
  type: 'object',
  additionalProperties: false,
  required: ['environment', 'tenants'],
  properties: {
    ...(deepPartial(TenantValuesSchema) as unknown as { properties: Record<string, TSchema> }).properties,
    environment: Type.String({ pattern: ENVIRONMENT_NAME, description: 'environment name, a label on every object' }),
    platform: deepPartial(PlatformValuesSchema),
    tenants: Type.Unsafe({
      type: 'object',
      description: 'tenant id (lowercase DNS label, at most 40 characters) → what differs for it',
      propertyNames: { pattern: TENANT_PATTERN.source },
      additionalProperties: deepPartial(TenantValuesSchema),
    }),
  },
});

export type EnvironmentInput = TenantInput & { environment: string; platform?: DeepPartial<PlatformValues>; tenants: Record<string, TenantInput> };
