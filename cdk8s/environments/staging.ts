import { defineEnvironment } from './define';

// Shared staging cluster: external PostgreSQL and Redis in the platform's private ranges, a
// public RPC provider, one host per tenant on the platform's Gateway.
const PRIVATE = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16'];

export default defineEnvironment({
  environment: 'staging',
  // The platform's Gateway (namespace gateway-system, listener https) takes every tenant's route;
  // its Envoy proxies are on the cluster's pod network: the only proxies the API believes about a
  // client's address and country (TRUST_PROXY, D-230).
  api: { httpRoute: { parentRefs: [{ name: 'public', namespace: 'gateway-system', sectionName: 'https' }], trustedProxies: ['10.16.0.0/14'] } },
  // Every trace goes to the collector, whose tail sampling keeps errors and slow ones
  // (observability/otel/collector.yaml): staging pays for tracing every request to lose none.
  settings: {
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector.observability.svc:4318',
    OTEL_TRACES_SAMPLER: 'parentbased_always_on',
  },
  // A tenant that turns database.cloudnativepg.enabled on gets a primary and one asynchronous
  // standby; alpha and beta keep the platform's PostgreSQL (D-502).
  database: { cloudnativepg: { instances: 2 } },
  networkPolicy: {
    egress: {
      database: { ipBlocks: [{ cidr: '10.20.0.0/16' }] },
      redis: { ipBlocks: [{ cidr: '10.21.0.0/16' }] },
      rpc: { ipBlocks: [{ cidr: '0.0.0.0/0', except: PRIVATE }] },
      otlp: { ipBlocks: [{ cidr: '10.40.0.0/16' }] },
    },
  },
  monitoring: { labels: { release: 'kube-prometheus-stack' } },
  tenants: {
    alpha: {
      api: { httpRoute: { hostnames: ['alpha.staging.markets.example'] } },
    },
    beta: {
      source: { programId: '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin' },
      api: { replicas: 1, httpRoute: { hostnames: ['beta.staging.markets.example'] } },
      indexer: { replicas: 1 },
      settings: { LOG_LEVEL: 'debug', RATE_LIMIT_MAX_REQUESTS: 200 },
    },
  },
});
