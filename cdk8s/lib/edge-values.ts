import type { TenantValues } from './values';

/** What the tenant's edge (its HTTPRoute, its optional Ingress) is, read from its values (cdk8s/lib/edge.ts renders it). */

/** Whether the tenant gets an HTTPRoute: on (the default) and with a public host name. */
export const httpRouteRenders = (values: TenantValues): boolean => values.api.httpRoute.enabled && values.api.httpRoute.hostnames.length > 0;

/**
 * The headers the route removes from every request: the country header a client sends itself,
 * unless a CDN in front of the Gateway sets it (then the Gateway admits only the CDN, D-482).
 */
export function removedHeaders(values: TenantValues): string[] {
  const header = (values.settings as Record<string, unknown>).GEO_COUNTRY_HEADER;
  if (typeof header !== 'string' || header === '' || values.api.httpRoute.cdn.enabled) return [];
  return [header];
}

/**
 * The host names the edge serves (the API's PUBLIC_HOSTS: signed messages name one) and the
 * proxies whose forwarded headers the API believes (TRUST_PROXY, D-230): the route's, then the
 * Ingress's, each only when it renders.
 */
export function edgeOf(values: TenantValues): { hosts: string[]; proxies: string[] } {
  const { httpRoute, ingress } = values.api;
  const route = httpRouteRenders(values);
  const hosts = [...(route ? httpRoute.hostnames : []), ...(ingress.enabled && ingress.host ? [ingress.host] : [])];
  const proxies = [...(route ? httpRoute.trustedProxies : []), ...(ingress.enabled ? ingress.trustedProxies : [])];
  return { hosts: [...new Set(hosts)], proxies: [...new Set(proxies)] };
}
