import { Construct } from 'constructs';
import { API_PREFIX, WS_PATH } from '../../core/constants';
import { HttpRoute, HttpRouteSpecRulesFiltersType, HttpRouteSpecRulesMatchesPathType, type HttpRouteSpecRules } from '../imports/gateway.networking.k8s.io';
import { k8s } from 'cdk8s-plus-33';
import { API_SERVICE_PORT, HTTP_PORT_NAME } from './api';
import { ingressAnnotations, type IngressPart } from './country-header';
import { metadataOf, type TenantContext } from './context';
import { NAMES } from './names';
import { removedHeaders } from './edge-values';
import type { TenantValues } from './values';

/**
 * The tenant's public edge: a Gateway API HTTPRoute attached to the platform's Gateway (D-480).
 * The platform owns the Gateway (listeners, certificates, addresses); the tenant owns its route.
 * One rule per kind of traffic, so each gets the timeouts it needs (D-481):
 * - `/ws`: an upgraded connection lives as long as the client stays; a request timeout would cut
 *   it, so the rule disables it ("0s", Gateway API's "no timeout"). The API pings every 30 s
 *   (WS_PING_INTERVAL_MS), so an implementation's idle timeout above that keeps a live socket.
 * - the transaction builders (`/api/v1/tx/`, the root alias `/tx/`): POSTs that read the RPC node
 *   (a recent blockhash, the accounts), never retried by the Gateway (not idempotent).
 * - everything else (REST reads): answered in milliseconds; a reader waits at most
 *   `backendRequest` for one backend, `request` in all (room for one retry where the
 *   implementation retries: Envoy Gateway's BackendTrafficPolicy, D-485).
 * Longest match wins in Gateway API (Exact, then the longest PathPrefix), so the order is the
 * reader's, not the matcher's.
 */
export interface EdgeRule {
  /** What the rule carries, for the docs and the chart's facts. */
  readonly name: 'ws' | 'tx' | 'rest';
  readonly matches: readonly { readonly type: 'Exact' | 'PathPrefix'; readonly value: string }[];
  readonly timeouts: { readonly request: string; readonly backendRequest?: string };
}

export const EDGE_RULES: readonly EdgeRule[] = [
  { name: 'ws', matches: [{ type: 'Exact', value: WS_PATH }], timeouts: { request: '0s' } },
  {
    name: 'tx',
    matches: [
      { type: 'PathPrefix', value: `${API_PREFIX}/tx/` },
      { type: 'PathPrefix', value: '/tx/' },
    ],
    timeouts: { request: '10s', backendRequest: '10s' },
  },
  { name: 'rest', matches: [{ type: 'PathPrefix', value: '/' }], timeouts: { request: '10s', backendRequest: '5s' } },
];

/** The rules of the tenant's route, as the HTTPRoute spec has them. */
export function httpRouteRules(values: TenantValues): HttpRouteSpecRules[] {
  const remove = removedHeaders(values);
  return EDGE_RULES.map((r) => ({
    matches: r.matches.map((m) => ({ path: { type: m.type as HttpRouteSpecRulesMatchesPathType, value: m.value } })),
    ...(remove.length ? { filters: [{ type: HttpRouteSpecRulesFiltersType.REQUEST_HEADER_MODIFIER, requestHeaderModifier: { remove } }] } : {}),
    backendRefs: [{ name: NAMES.api, port: API_SERVICE_PORT }],
    timeouts: { ...r.timeouts },
  }));
}

export class TenantHttpRoute extends Construct {
  constructor(scope: Construct, id: string, ctx: TenantContext) {
    super(scope, id);
    const route = ctx.values.api.httpRoute;
    const metadata = metadataOf(ctx, NAMES.api, 'api', route.annotations);
    new HttpRoute(this, 'route', {
      metadata: { ...metadata, labels: { ...route.labels, ...metadata.labels } },
      spec: {
        parentRefs: route.parentRefs.map((p) => ({ ...p })),
        hostnames: [...route.hostnames],
        rules: httpRouteRules(ctx.values),
      },
    });
  }
}

/**
 * The optional Ingress (`api.ingress.enabled`, D-484): for REST and `/tx`, and for `/ws` on an
 * Ingress of its own, since a controller's timeouts are per Ingress.
 */
export class TenantIngress extends Construct {
  constructor(scope: Construct, id: string, ctx: TenantContext) {
    super(scope, id);
    const ingress = ctx.values.api.ingress;
    const parts: [IngressPart, string, string, 'Prefix' | 'Exact'][] = [
      ['rest', NAMES.api, '/', 'Prefix'],
      ['ws', `${NAMES.api}-ws`, WS_PATH, 'Exact'],
    ];
    for (const [part, name, path, pathType] of parts) {
      new k8s.KubeIngress(this, part, {
        metadata: metadataOf(ctx, name, 'api', ingressAnnotations(ctx.values, part)),
        spec: {
          ingressClassName: ingress.className,
          ...(ingress.tlsSecretName ? { tls: [{ hosts: [ingress.host], secretName: ingress.tlsSecretName }] } : {}),
          rules: [{ host: ingress.host, http: { paths: [{ path, pathType, backend: { service: { name: NAMES.api, port: { name: HTTP_PORT_NAME } } } }] } }],
        },
      });
    }
  }
}
