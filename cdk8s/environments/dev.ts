import { defineEnvironment } from './define';

// A developer's cluster (kind, minikube): one tenant on the simulated chain, with its own
// PostgreSQL and Redis, no prometheus-operator needed.
export default defineEnvironment({
  environment: 'dev',
  image: { tag: 'dev', pullPolicy: 'IfNotPresent' },
  source: { type: 'simulator' },
  devStores: { enabled: true },
  api: {
    replicas: 1,
    resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '384Mi' } },
  },
  indexer: {
    resources: { requests: { cpu: '100m', memory: '192Mi' }, limits: { cpu: '500m', memory: '512Mi' } },
  },
  settings: { LOG_LEVEL: 'debug' },
  monitoring: { enabled: false },
  quota: { requestsCpu: '2', requestsMemory: '2Gi', limitsCpu: '6', limitsMemory: '6Gi', pods: 10, persistentVolumeClaims: 3 },
  tenants: { demo: {} },
});
