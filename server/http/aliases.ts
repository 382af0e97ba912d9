/**
 * Spec 4.1's deprecated paths, declared once: the alias middleware serves them from this list,
 * and the OpenAPI documents' alias operations are generated from it and the route table
 * (`scripts/generated/openapi-aliases.ts`, D-168).
 */

/** A root-level alias of the operations under the API prefix. */
export interface RootAlias {
  /**
   * The root path. Ending in `/`, it covers every path under it (`/v2/x` is `<prefix>/v2/x`);
   * otherwise that one path.
   */
  path: string;
  /**
   * Only a request naming this query parameter exactly once is the alias: `/orders?tx=` is the
   * public trades lookup (the route picks it by the same test, one `tx` value), while `/orders`
   * without it (the caller's own orders) has no root form and answers 404.
   */
  query?: string;
}

/** The root aliases the spec names (4.1), in the order it names them. */
export const ROOT_ALIASES: readonly RootAlias[] = [
  { path: '/v2/' },
  { path: '/tx/' },
  { path: '/orders', query: 'tx' },
  { path: '/config' },
  { path: '/trades' },
  { path: '/orderbook/top' },
  { path: '/status' },
  { path: '/admin/' },
];

/** The legacy prefix: `/api/<path>` is `<prefix>/<path>` for every path (headers: `Deprecation` only). */
export const LEGACY_PREFIX = '/api';

/** The root alias covering a path (a request's, or a route's in route-table syntax), ignoring its query rule. */
export function rootAliasOf(path: string, aliases: readonly RootAlias[] = ROOT_ALIASES): RootAlias | undefined {
  return aliases.find((a) => (a.path.endsWith('/') ? path.startsWith(a.path) : path === a.path));
}

/**
 * The root aliases a presentation serves: those covering at least one of its routes (paths
 * relative to its prefix). The appendix variant has no `/orderbook/top`, so its root form is
 * not rewritten into `/orderbook/:marketId` with `top` as the id: it is the variant's 404, as
 * its document (which declares no root aliases) says.
 */
export function servedRootAliases(routePaths: readonly string[]): RootAlias[] {
  return ROOT_ALIASES.filter((a) => routePaths.some((p) => rootAliasOf(p, [a]) !== undefined));
}

/** How a deprecated request target is served: the canonical path, and which kind of alias it used. */
export interface AliasMatch {
  canonical: string;
  kind: 'root' | 'legacy-prefix';
}

/**
 * The canonical path a request path (without its query) is served as, or undefined when it is
 * not an alias. `search` is the query string with its `?` ('' without one).
 */
export function aliasOf(prefix: string, path: string, search: string, aliases: readonly RootAlias[] = ROOT_ALIASES): AliasMatch | undefined {
  const root = rootAliasOf(path, aliases);
  if (root) {
    if (root.query !== undefined && new URLSearchParams(search).getAll(root.query).length !== 1) return undefined;
    return { canonical: `${prefix}${path}`, kind: 'root' };
  }
  if (path.startsWith(`${LEGACY_PREFIX}/`) && !path.startsWith(`${prefix}/`) && path !== prefix) {
    return { canonical: `${prefix}${path.slice(LEGACY_PREFIX.length)}`, kind: 'legacy-prefix' };
  }
  return undefined;
}

/** The response headers each kind of alias adds (spec 4.1). */
export function aliasHeaders(match: AliasMatch): Record<string, string> {
  switch (match.kind) {
    case 'root':
      return { Deprecation: 'true', Link: `<${match.canonical}>; rel=canonical`, 'X-Service-Canonical-Path': match.canonical };
    case 'legacy-prefix':
      return { Deprecation: 'true' };
    default: {
      const never: never = match.kind;
      throw new Error(`unknown alias kind ${String(never)}`);
    }
  }
}

/** The header names each kind of alias adds, for the documents. */
export const ALIAS_HEADER_NAMES: Record<AliasMatch['kind'], string[]> = {
  root: Object.keys(aliasHeaders({ canonical: '/', kind: 'root' })),
  'legacy-prefix': Object.keys(aliasHeaders({ canonical: '/', kind: 'legacy-prefix' })),
};
