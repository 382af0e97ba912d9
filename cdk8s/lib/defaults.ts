import { SETTINGS } from '../../core/config/settings';
import { SYNCED_MAX_SLOT_LAG } from '../../core/health';
import { RELEASE_VERSION } from '../../core/release';
import { RULE_DEFAULTS } from '../../observability/prometheus/rules';
import { CLOUDNATIVEPG_DEFAULTS } from './cloudnativepg-defaults';
import type { PlatformValues, TenantValues } from './values';

/** The Secret every tenant namespace is expected to hold, unless its references say otherwise. */
export const DEFAULT_SECRET_NAME = 'market-indexer';

/**
 * The kit's defaults for every tenant: secure, production-shaped, sized for a small tenant.
 * An environment file states only what differs. `charts/market-indexer/values.yaml` holds the
 * same values (a test keeps them equal).
 */
export const TENANT_DEFAULTS: TenantValues = {
  image: { repository: 'ghcr.io/market-indexer/market-indexer', tag: RELEASE_VERSION, pullPolicy: 'IfNotPresent' },
  variant: 'v1',
  source: {
    type: 'rpc',
    programId: SETTINGS.PROGRAM_ID.default,
    rpcUrlSecretRef: { name: DEFAULT_SECRET_NAME, key: 'RPC_URL' },
    simulator: { seed: 1, feeds: 2, epochSeconds: 60 },
  },
  // No secretRef: the Secret market-indexer's DATABASE_URL unless one is stated, or the Cluster's
  // own -app Secret with cloudnativepg (databaseSecretRef, D-500).
  database: { cloudnativepg: CLOUDNATIVEPG_DEFAULTS },
  redis: { secretRef: { name: DEFAULT_SECRET_NAME, key: 'REDIS_URL' } },
  api: {
    replicas: 2,
    autoscaling: { enabled: false, minReplicas: 2, maxReplicas: 6, targetCPUUtilizationPercentage: 70 },
    // Measured idle (npm run bench -- tenant-cost): 8 m CPU and 96–132 MiB of RSS; 1,000 /ws
    // clients take it to 120–225 MiB. A tenant with traffic states its own (D-380).
    resources: { requests: { cpu: '100m', memory: '256Mi' }, limits: { cpu: '1', memory: '512Mi' } },
    // No page may send signed requests from a browser until its origin is named (D-521).
    corsAllowedOrigins: [],
    // The edge (D-480): a route on the platform's Gateway for every tenant with a host name; the
    // Gateway and where its proxies run are the cluster's to say, so an environment states them.
    httpRoute: {
      enabled: true,
      parentRefs: [],
      hostnames: [],
      annotations: {},
      labels: {},
      trustedProxies: [],
      // No CDN stated: with a country header, the route removes what clients send (D-482).
      cdn: { enabled: false, gatewayAdmitsOnlyCdn: false },
    },
    ingress: {
      enabled: false,
      className: 'nginx',
      host: '',
      tlsSecretName: '',
      // The timeouts are the kit's, per Ingress: REST and /tx 10 s, /ws 45 s (D-484).
      annotations: {},
      // Where the controller's pods are is the cluster's to say: a tenant with an ingress states it (D-230).
      trustedProxies: [],
      // No CDN stated: a tenant with a country header is refused on the Ingress (D-484).
      cdnSourceRanges: [],
    },
  },
  indexer: {
    replicas: 2,
    // Measured idle: the writer 35 m CPU and 270 MiB of RSS (its young generation is large,
    // --max-semi-space-size=64), a standby 5 m and 128 MiB; the row cache (INDEXER_CACHE_ROWS,
    // D-62) adds 70–200 MB when full. A standby becomes the writer, so both are sized as one (D-380).
    resources: { requests: { cpu: '100m', memory: '512Mi' }, limits: { cpu: '1', memory: '1Gi' } },
    // A re-index is asked for, never started by an upgrade alone (D-440).
    build: { enabled: false, imageTag: '' },
  },
  settings: {},
  networkPolicy: {
    enabled: true,
    // Envoy Gateway's default: its proxies run in the controller's namespace (D-483).
    gatewayNamespace: 'envoy-gateway-system',
    ingressControllerNamespace: 'ingress-nginx',
    monitoringNamespace: 'monitoring',
    webhookSenders: [],
    egress: {
      database: { ipBlocks: [], ports: [5432] },
      redis: { ipBlocks: [], ports: [6379] },
      rpc: { ipBlocks: [], ports: [443] },
      otlp: { ipBlocks: [], ports: [4318] },
    },
  },
  monitoring: {
    enabled: true,
    interval: '30s',
    labels: {},
    // The warning threshold is where /status stops calling the indexer synced (spec 4.9).
    slotLag: { warning: SYNCED_MAX_SLOT_LAG, critical: RULE_DEFAULTS.slotLag.critical, for: RULE_DEFAULTS.slotLag.for },
    slo: { ...RULE_DEFAULTS.slo },
  },
  quota: {
    enabled: true,
    requestsCpu: '4',
    requestsMemory: '6Gi',
    limitsCpu: '12',
    limitsMemory: '16Gi',
    pods: 30,
    // Room for a CloudNativePG Cluster of up to three instances, one volume each (D-502).
    persistentVolumeClaims: 3,
  },
  devStores: { enabled: false, storage: '2Gi', postgresImage: 'postgres:15-alpine', redisImage: 'redis:7-alpine' },
};

/** The cluster-level part of every environment (`platform:` in the chart's values.yaml). */
export const PLATFORM_DEFAULTS: PlatformValues = {
  namespace: 'market-indexer-system',
  operator: {
    enabled: true,
    replicas: 2,
    // It renders tenants with the kit in process (cdk8s and its schemas: ~150 MB of RSS) and
    // caches every tenant's objects (~0.14 MB of heap a tenant, D-323): sized for 1,000 tenants;
    // its heap cap is half the memory limit (D-420), so more tenants raise both here.
    resources: { requests: { cpu: '100m', memory: '384Mi' }, limits: { cpu: '500m', memory: '512Mi' } },
    settings: {},
    // A MarketIndexer may name only the environment's own images and open no egress of its own
    // until the environment says otherwise (D-200).
    policy: { imageRepositories: [], egressBlocks: [] },
    // What RBAC cannot narrow (create on rolebindings), closed by admission (D-260).
    admissionPolicy: true,
    // Where the API server is depends on the cluster (`kubectl get endpoints kubernetes`): state
    // it; by default the ports only are narrowed.
    apiServer: { ipBlocks: [{ cidr: '0.0.0.0/0' }], ports: [443, 6443] },
  },
  // kube-prometheus-stack's Grafana sidecar: label grafana_dashboard "1" (its searchNamespace
  // must include this namespace, or set `namespace` to one it watches).
  dashboards: { enabled: true, namespace: '', labels: { grafana_dashboard: '1' }, annotations: {} },
  // Off until asked for: a TestRun starts the test as soon as it is applied.
  loadTest: {
    enabled: false,
    tenant: '',
    script: 'load',
    profile: 'smoke',
    rate: 20,
    parallelism: 1,
    image: 'grafana/k6:1.3.0',
    // kube-prometheus-stack's Prometheus, with its remote-write receiver enabled.
    prometheusRemoteWriteUrl: 'http://kube-prometheus-stack-prometheus.monitoring.svc:9090/api/v1/write',
    prometheusNamespace: 'monitoring',
    resources: { requests: { cpu: '500m', memory: '256Mi' }, limits: { cpu: '2', memory: '1Gi' } },
  },
};
