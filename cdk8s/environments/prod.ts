import { defineEnvironment } from './define';

// Production: autoscaled API, traces to the cluster's collector (one in ten), each tenant's
// PostgreSQL a three-instance CloudNativePG Cluster with synchronous replication, three tenants,
// one of which is fed only by its chain-data provider's webhook.
const PRIVATE = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16'];

export default defineEnvironment({
  environment: 'prod',
  api: {
    autoscaling: { enabled: true, minReplicas: 3, maxReplicas: 10 },
    // The platform's Gateway takes every tenant's route; its Envoy proxies are on the cluster's pod
    // network: the only proxies the API believes about a client's address and country (TRUST_PROXY, D-230).
    httpRoute: { parentRefs: [{ name: 'public', namespace: 'gateway-system', sectionName: 'https' }], trustedProxies: ['10.24.0.0/14'] },
    resources: { requests: { cpu: '500m', memory: '384Mi' }, limits: { cpu: '1', memory: '768Mi' } },
  },
  indexer: {
    resources: { requests: { cpu: '500m', memory: '512Mi' }, limits: { cpu: '2', memory: '1536Mi' } },
  },
  // A primary and two standbys, each commit on one of them before it returns: losing the primary
  // loses no committed write, and losing a standby stalls none (D-502, D-503).
  database: {
    cloudnativepg: { enabled: true, instances: 3, storage: { size: '50Gi' }, synchronous: { enabled: true, number: 1, dataDurability: 'required' } },
  },
  settings: {
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector.observability.svc:4318',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: 0.1,
  },
  networkPolicy: {
    egress: {
      redis: { ipBlocks: [{ cidr: '10.31.0.0/16' }] },
      rpc: { ipBlocks: [{ cidr: '0.0.0.0/0', except: PRIVATE }] },
      otlp: { ipBlocks: [{ cidr: '10.40.0.0/16' }] },
    },
  },
  monitoring: { labels: { release: 'kube-prometheus-stack' }, slotLag: { critical: 500 } },
  quota: { requestsCpu: '10', requestsMemory: '10Gi', limitsCpu: '28', limitsMemory: '20Gi', pods: 20 },
  tenants: {
    alpha: {
      api: { httpRoute: { hostnames: ['alpha.markets.example'] } },
      source: { rpcWsUrlSecretRef: { name: 'market-indexer', key: 'RPC_WS_URL' } },
    },
    beta: {
      source: { programId: '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin' },
      api: { httpRoute: { hostnames: ['beta.markets.example'] } },
    },
    gamma: {
      source: { type: 'webhook', webhookSecretRef: { name: 'market-indexer', key: 'WEBHOOK_SECRET' } },
      indexer: { replicas: 1 },
      networkPolicy: { webhookSenders: [{ cidr: '203.0.113.0/24' }] },
      api: {
        autoscaling: { minReplicas: 2, maxReplicas: 4 },
        httpRoute: { hostnames: ['gamma.markets.example'] },
      },
      settings: { PUBLIC_READ_RATE_LIMIT_MAX_REQUESTS: 600 },
    },
  },
});
