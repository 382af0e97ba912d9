import querystring from 'node:querystring';
import type { Request } from 'express';
import { aliasHeaders, aliasOf, ROOT_ALIASES, servedRootAliases } from '../../server/http/aliases';
import { deprecatedAliases } from '../../server/http/middleware';
import { aliasOperationsOf, parametersOf, statusesOf } from '../../server/routes/contract';
import { v1Presentation } from '../../server/routes';
import { legacyPresentation } from '../../server/routes/legacy';
import type { RouteDeps } from '../../server/routes/table';

const PREFIX = '/api/v1';

describe('the deprecated aliases (spec 4.1, D-168)', () => {
  it.each([
    ['/v2/fee-config', '', { canonical: '/api/v1/v2/fee-config', kind: 'root' }],
    ['/v2/', '', { canonical: '/api/v1/v2/', kind: 'root' }],
    ['/tx/place-order', '', { canonical: '/api/v1/tx/place-order', kind: 'root' }],
    ['/admin/anything/else', '', { canonical: '/api/v1/admin/anything/else', kind: 'root' }],
    ['/config', '?x=1', { canonical: '/api/v1/config', kind: 'root' }],
    ['/orders', '?tx=abc&limit=5', { canonical: '/api/v1/orders', kind: 'root' }],
    ['/orders', '?tx=', { canonical: '/api/v1/orders', kind: 'root' }],
    ['/api/markets/current', '', { canonical: '/api/v1/markets/current', kind: 'legacy-prefix' }],
    ['/api/v2/fee-config', '', { canonical: '/api/v1/v2/fee-config', kind: 'legacy-prefix' }],
  ])('%s%s is served as its canonical path', (path, search, expected) => {
    expect(aliasOf(PREFIX, path, search)).toEqual(expected);
  });

  it.each([
    ['/orders', ''],
    ['/orders', '?status=open'],
    ['/orders', '?tx=a&tx=b'],
    ['/config/x', ''],
    ['/trades/x', ''],
    ['/v2', ''],
    ['/markets', ''],
    ['/health', ''],
    ['/api/v1', ''],
    ['/api/v1/markets', ''],
    ['/apix/markets', ''],
  ])('%s%s is not an alias', (path, search) => {
    expect(aliasOf(PREFIX, path, search)).toBeUndefined();
  });

  it('rewrites an alias request and sends the headers of its kind; a canonical one is left alone', () => {
    const run = (url: string) => {
      const headers: Record<string, string> = {};
      const req = { url } as Request;
      let nexted = false;
      deprecatedAliases(PREFIX)(req, { setHeader: (k: string, v: string) => (headers[k] = v) } as never, () => (nexted = true));
      return { url: req.url, headers, nexted };
    };
    expect(run('/orderbook/top?market=abc')).toEqual({
      url: '/api/v1/orderbook/top?market=abc',
      headers: { Deprecation: 'true', Link: '</api/v1/orderbook/top>; rel=canonical', 'X-Service-Canonical-Path': '/api/v1/orderbook/top' },
      nexted: true,
    });
    expect(run('/api/status')).toEqual({ url: '/api/v1/status', headers: { Deprecation: 'true' }, nexted: true });
    expect(run('/orders?owner=x')).toEqual({ url: '/orders?owner=x', headers: {}, nexted: true });
    expect(run('/api/v1/config')).toEqual({ url: '/api/v1/config', headers: {}, nexted: true });
    expect(aliasHeaders({ canonical: '/api/v1/x', kind: 'legacy-prefix' })).toEqual({ Deprecation: 'true' });
  });

  it('covers served operations with every root alias, and narrows /orders to its public ?tx= lookup', () => {
    const routes = v1Presentation.routes({ chainId: 'devnet' } as RouteDeps);
    const ops = aliasOperationsOf(PREFIX, routes);
    const root = ops.filter((o) => o.kind === 'root');
    // No alias of the list is dead: each covers at least one operation of the route table.
    for (const a of ROOT_ALIASES) expect([a.path, root.some((o) => (a.path.endsWith('/') ? o.path.startsWith(a.path) : o.path === a.path))]).toEqual([a.path, true]);
    expect(ops.filter((o) => o.kind === 'legacy-prefix').map((o) => o.path)).toContain('/api/markets/{marketId}');
    const orders = root.find((o) => o.path === '/orders')!;
    expect(orders.query).toBe('tx');
    expect(orders.route.access).toEqual({ by: 'ip', tier: 'public_read' });
    expect(parametersOf(orders.route).map((p) => [p.name, p.required, p.schema.maximum])).toEqual([
      ['tx', true, undefined],
      ['limit', false, 500],
    ]);
    expect(statusesOf(orders.route)).not.toContain(401);
    // The alias and the route agree on what the public lookup is (Express's `simple` query parser).
    const canonical = routes.find((r) => r.path === '/orders')!;
    for (const search of ['?tx=a', '?tx=', '?tx', '?tx=a&tx=b', '?limit=5', '', '?tx=a&limit=5', '?TX=a']) {
      const lookup = canonical.alternative!.when({ query: querystring.parse(search.slice(1)) } as unknown as Request);
      expect([search, aliasOf(PREFIX, '/orders', search) !== undefined]).toEqual([search, lookup]);
    }
    // The /api/ form is the whole operation, signed orders included.
    expect(ops.find((o) => o.path === '/api/orders')!.route.access.by).toBe('wallet');
  });
});

describe('the root aliases a presentation serves', () => {
  const paths = (p: typeof v1Presentation) => p.routes({ chainId: 'devnet' } as RouteDeps).map((r) => r.path);

  it('are all of them for v1, whose operations they name', () => {
    expect(servedRootAliases(paths(v1Presentation))).toEqual([...ROOT_ALIASES]);
  });

  it('are only those covering one of its routes for the appendix variant', () => {
    // Only /tx/ and /admin/: issue 22's v1 routes it serves too (D-177); its tables have no
    // /v2, /config, /trades, /orderbook/top, /status or /orders routes.
    expect(servedRootAliases(paths(legacyPresentation)).map((a) => a.path)).toEqual(['/tx/', '/admin/']);
    // A route under a prefix alias, or at a single-path alias, is enough for it to be served.
    expect(servedRootAliases(['/tx/place-order', '/orderbook/:marketId']).map((a) => a.path)).toEqual(['/tx/']);
    // `/orderbook/top` is not rewritten into its `/orderbook/:marketId`.
    expect(aliasOf(PREFIX, '/orderbook/top', '', servedRootAliases(paths(legacyPresentation)))).toBeUndefined();
    expect(aliasOf(PREFIX, '/api/orderbook/top', '', servedRootAliases(paths(legacyPresentation)))?.kind).toBe('legacy-prefix');
  });
});
