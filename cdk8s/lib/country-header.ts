import type { TenantValues } from './values';

/**
 * What the tenant's Ingress does about the country header (`settings.GEO_COUNTRY_HEADER`) a
 * client sends itself (issue 41, D-284). ingress-nginx passes clients' headers through, and the
 * API believes the header from the controller (TRUST_PROXY), so:
 * - with a CDN that sets the header stated (`api.ingress.cdnSourceRanges`), the Ingress admits
 *   only the CDN's addresses (`whitelist-source-range`, no snippet needed): whatever reaches the
 *   API came through the CDN, which overwrote the header;
 * - without one, the Ingress drops the header (`proxy_set_header <header> ""` in a configuration
 *   snippet): the country is unknown rather than the client's choice. Snippets are off by default
 *   in recent ingress-nginx: there its admission refuses the Ingress, which fails closed.
 * Nothing without a country header or an Ingress.
 */
export const INGRESS_ALLOWLIST_ANNOTATION = 'nginx.ingress.kubernetes.io/whitelist-source-range';
export const INGRESS_SNIPPET_ANNOTATION = 'nginx.ingress.kubernetes.io/configuration-snippet';

export function ingressAnnotations(values: TenantValues): Record<string, string> {
  const ingress = values.api.ingress;
  const header = (values.settings as Record<string, unknown>).GEO_COUNTRY_HEADER;
  const out = { ...ingress.annotations };
  if (!ingress.enabled || typeof header !== 'string' || header === '') return out;
  if (ingress.cdnSourceRanges.length) {
    out[INGRESS_ALLOWLIST_ANNOTATION] = ingress.cdnSourceRanges.join(',');
    return out;
  }
  const drop = `proxy_set_header ${header} "";`;
  const theirs = out[INGRESS_SNIPPET_ANNOTATION];
  out[INGRESS_SNIPPET_ANNOTATION] = theirs ? `${drop}\n${theirs}` : drop;
  return out;
}
