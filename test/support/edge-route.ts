import type { HTTPRoute } from '../../local/tenant/edge-config';

/** A route in the standard Gateway API v1 shape: REST and /tx with timeouts, /ws without, the country header removed. */
export const ROUTE: HTTPRoute = {
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'HTTPRoute',
  metadata: { name: 'market-indexer-api', namespace: 'mi-alpha' },
  spec: {
    parentRefs: [{ name: 'public', namespace: 'gateway' }],
    hostnames: ['alpha.example'],
    rules: [
      {
        matches: [{ path: { type: 'PathPrefix', value: '/api' } }, { path: { type: 'Exact', value: '/ready' } }],
        filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { remove: ['CF-IPCountry'] } }],
        backendRefs: [{ name: 'market-indexer-api', port: 80 }],
        timeouts: { request: '10s', backendRequest: '5s' },
      },
      {
        matches: [{ path: { type: 'Exact', value: '/ws' } }],
        filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { remove: ['CF-IPCountry'] } }],
        backendRefs: [{ name: 'market-indexer-api', port: 80 }],
      },
    ],
  },
};
