import type { TenantValues } from './values';

/**
 * The optional Ingress (D-484): two objects, since an Ingress controller's timeouts are per
 * Ingress, not per path: `market-indexer-api` for REST and `/tx` (`/`), `market-indexer-api-ws`
 * for `/ws`. Their annotations are in ingress-nginx's dialect, which ingress-nginx and Traefik's
 * ingress-nginx provider read. No snippet, ever: the class of annotation behind CVE-2025-1974,
 * off by default in ingress-nginx. The country header (`settings.GEO_COUNTRY_HEADER`) a client
 * sends cannot be removed without one, so a tenant with a country header and an Ingress must
 * state a CDN whose addresses alone the Ingress admits (`whitelist-source-range`: whatever reaches
 * the API came through the CDN, which overwrote the header), or use the HTTPRoute (D-482).
 */
export const INGRESS_ALLOWLIST_ANNOTATION = 'nginx.ingress.kubernetes.io/whitelist-source-range';
export const INGRESS_READ_TIMEOUT_ANNOTATION = 'nginx.ingress.kubernetes.io/proxy-read-timeout';
export const INGRESS_SEND_TIMEOUT_ANNOTATION = 'nginx.ingress.kubernetes.io/proxy-send-timeout';
/** The annotations the kit sets itself: a tenant's own value for one is refused by name (D-484). */
export const KIT_INGRESS_ANNOTATIONS = [INGRESS_ALLOWLIST_ANNOTATION, INGRESS_READ_TIMEOUT_ANNOTATION, INGRESS_SEND_TIMEOUT_ANNOTATION] as const;
/** ingress-nginx's snippet annotations end so (configuration-, server-, stream-, auth-snippet…). */
export const SNIPPET_ANNOTATION = /^nginx\.ingress\.kubernetes\.io\/[a-z-]*snippet$/;

/**
 * Seconds nginx waits between two reads from (or writes to) the API, per Ingress: REST and `/tx`
 * 10 (the HTTPRoute's whole request, D-481; ingress-nginx then retries an idempotent request on
 * the next pod, `proxy-next-upstream: error timeout`); `/ws` 45, above the API's 30 s ping, which
 * resets the timer, so only a silent (dead) upstream is cut.
 */
export const INGRESS_TIMEOUT_SECONDS = { rest: 10, ws: 45 } as const;
export type IngressPart = keyof typeof INGRESS_TIMEOUT_SECONDS;

export function ingressAnnotations(values: TenantValues, part: IngressPart): Record<string, string> {
  const ingress = values.api.ingress;
  const seconds = String(INGRESS_TIMEOUT_SECONDS[part]);
  return {
    ...ingress.annotations,
    [INGRESS_READ_TIMEOUT_ANNOTATION]: seconds,
    [INGRESS_SEND_TIMEOUT_ANNOTATION]: seconds,
    ...(ingress.cdnSourceRanges.length ? { [INGRESS_ALLOWLIST_ANNOTATION]: ingress.cdnSourceRanges.join(',') } : {}),
  };
}

/** What a tenant's Ingress values ask that the kit no longer does (D-484): each refused by name. */
export function ingressProblems(values: TenantValues): string[] {
  const ingress = values.api.ingress;
  if (!ingress.enabled) return [];
  const p: string[] = [];
  for (const key of Object.keys(ingress.annotations).sort()) {
    if (SNIPPET_ANNOTATION.test(key)) {
      p.push(`api.ingress.annotations["${key}"]: refused (D-484): the kit renders no snippet annotation; what it did with one, the HTTPRoute does in Gateway API's core (api.httpRoute, docs/deploy.md "Upgrading")`);
    } else if ((KIT_INGRESS_ANNOTATIONS as readonly string[]).includes(key)) {
      p.push(`api.ingress.annotations["${key}"]: set by the kit (D-484): REST and /tx wait ${INGRESS_TIMEOUT_SECONDS.rest} s, /ws ${INGRESS_TIMEOUT_SECONDS.ws} s on an Ingress of its own, and the CDN's addresses come from api.ingress.cdnSourceRanges; remove it (docs/deploy.md "Upgrading")`);
    }
  }
  const header = (values.settings as Record<string, unknown>).GEO_COUNTRY_HEADER;
  if (typeof header === 'string' && header !== '' && !ingress.cdnSourceRanges.length) {
    p.push(
      `api.ingress.cdnSourceRanges: required with settings.GEO_COUNTRY_HEADER when api.ingress.enabled is true: an Ingress cannot remove the header clients send without a snippet (D-484); use the HTTPRoute (api.httpRoute.hostnames), which removes it, or state the CDN that sets it`,
    );
  }
  return p;
}
