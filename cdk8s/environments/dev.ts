import { defineEnvironment } from './define';

// A developer's cluster (kind, minikube): one tenant on the simulated chain, with its own
// PostgreSQL and Redis, no prometheus-operator needed; its route on the cluster's Gateway
// (Envoy Gateway's quickstart: Gateway eg in namespace default).
export default defineEnvironment({
  environment: 'dev',
  image: { tag: 'dev', pullPolicy: 'IfNotPresent' },
  source: { type: 'simulator' },
  devStores: { enabled: true },
  api: {
    replicas: 1,
    // The quickstart Gateway's proxies: anywhere on the pod network of a kind or minikube cluster.
    httpRoute: { parentRefs: [{ name: 'eg', namespace: 'default' }], trustedProxies: ['10.244.0.0/16'] },
    resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '384Mi' } },
  },
  indexer: {
    resources: { requests: { cpu: '100m', memory: '192Mi' }, limits: { cpu: '500m', memory: '512Mi' } },
  },
  settings: { LOG_LEVEL: 'debug' },
  // A single instance where a tenant asks for CloudNativePG instead of the dev stores (D-502).
  database: { cloudnativepg: { instances: 1 } },
  monitoring: { enabled: false },
  quota: { requestsCpu: '2', requestsMemory: '2Gi', limitsCpu: '6', limitsMemory: '6Gi', pods: 10, persistentVolumeClaims: 3 },
  tenants: { demo: { api: { httpRoute: { hostnames: ['demo.localtest.me'] } } } },
});
