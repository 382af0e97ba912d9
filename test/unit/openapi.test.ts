import { readFileSync } from 'node:fs';
import { createConfig, lint } from '@redocly/openapi-core';
import YAML from 'yaml';
import { OPENAPI_LEGACY_PATH, OPENAPI_PATH } from '../support/openapi';
import { ERROR_STATUS } from '../../core/http/errors';
import { v1Presentation } from '../../server/routes';
import { legacyPresentation } from '../../server/routes/legacy';
import { LEGACY_ERROR_STATUS } from '../../server/routes/legacy/envelope';
import { legacyV1Routes } from '../../server/routes/legacy/v1-routes';
import type { Presentation, RouteDef, RouteDeps } from '../../server/routes/table';
import { ALIAS_HEADER_NAMES } from '../../server/http/aliases';
import { aliasOperationsOf, openapiPath, parametersOf, statusesOf } from '../../server/routes/contract';

/**
 * Every operation a presentation serves, as the document must declare it: the route table's
 * under the prefix, then the deprecated aliases (root aliases and the legacy `/api/` prefix, D-168).
 */
function operationsOf(presentation: Presentation): { method: string; path: string; route: RouteDef; alias?: 'root' | 'legacy-prefix' }[] {
  // The route table only needs its dependencies when a handler runs.
  const routes = presentation.routes({ chainId: 'devnet' } as RouteDeps);
  return [
    ...routes.map((route) => ({ method: route.method.toLowerCase(), path: openapiPath(presentation.prefix, route), route })),
    ...aliasOperationsOf(presentation.prefix, routes).map((a) => ({ method: a.method.toLowerCase(), path: a.path, route: a.route, alias: a.kind })),
  ];
}
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const ROOT_ONLY = ['/health', '/ready', '/metrics'];

describe('api-reference/openapi.yaml', () => {
  it('passes the Redocly linter (recommended rules) with no errors or warnings', async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lint({ ref: OPENAPI_PATH, config });
    expect(problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`)).toEqual([]);
  });

  it('documents every error code of spec 7.2, and exactly the operations of the route table', () => {
    const doc = YAML.parse(readFileSync(OPENAPI_PATH, 'utf8'));
    expect(doc.components.schemas.Error.properties.code.enum.sort()).toEqual(Object.keys(ERROR_STATUS).sort());
    // The route table only needs its dependencies when a handler runs.
    const routes = v1Presentation.routes({ chainId: 'devnet' } as RouteDeps);
    const served = routes.map((r) => `${r.method} ${openapiPath(v1Presentation.prefix, r)}`).sort();
    const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
      .filter(([path]) => path.startsWith(`${v1Presentation.prefix}/`))
      .flatMap(([path, ops]) => Object.keys(ops).filter((k) => ['get', 'post', 'put', 'patch', 'delete'].includes(k)).map((m) => `${m.toUpperCase()} ${path}`))
      .sort();
    expect(served.length).toBeGreaterThan(20);
    expect(documented).toEqual(served);
  });

  it('declares exactly the deprecated aliases of the alias list as deprecated operations, and nothing else outside the prefix', () => {
    const doc = YAML.parse(readFileSync(OPENAPI_PATH, 'utf8'));
    const aliases = operationsOf(v1Presentation).filter((o) => o.alias);
    const documented = Object.entries(doc.paths as Record<string, Record<string, { deprecated?: boolean; tags?: string[] }>>)
      .filter(([path]) => !path.startsWith(`${v1Presentation.prefix}/`) && !ROOT_ONLY.includes(path))
      .flatMap(([path, ops]) => Object.entries(ops).filter(([k]) => METHODS.includes(k)).map(([m, op]) => `${m} ${path} deprecated=${op.deprecated} ${op.tags}`))
      .sort();
    expect(documented).toEqual(aliases.map((a) => `${a.method} ${a.path} deprecated=true deprecated aliases`).sort());
    // Every root alias the spec names covers an operation, and every operation has its /api/ form.
    expect(aliases.filter((a) => a.alias === 'root').map((a) => a.path)).toEqual(
      expect.arrayContaining(['/v2/fee-config', '/tx/place-order', '/orders', '/config', '/trades', '/orderbook/top', '/status', '/admin/indexer']),
    );
    expect(aliases.filter((a) => a.alias === 'legacy-prefix')).toHaveLength(v1Presentation.routes({ chainId: 'devnet' } as RouteDeps).length);
    // An alias takes the body its canonical operation takes.
    const bodies = operationsOf(v1Presentation)
      .filter((o) => o.alias)
      .filter((o) => JSON.stringify(doc.paths[o.path][o.method].requestBody) !== JSON.stringify(doc.paths[openapiPath(v1Presentation.prefix, o.route)][o.method].requestBody))
      .map((o) => `${o.method} ${o.path}`);
    expect(bodies).toEqual([]);
    expect(doc.paths['/tx/place-order'].post.requestBody).toBeDefined();
    // The /orders alias is only the public ?tx= lookup: tx required, no signature, no 401.
    const orders = doc.paths['/orders'].get;
    expect(orders.parameters.find((p: { name: string }) => p.name === 'tx').required).toBe(true);
    expect(orders.security).toBeUndefined();
    expect(Object.keys(orders.responses)).not.toContain('401');
  });

  it("declares each operation's query and path parameters exactly as its joi rules accept them", () => {
    const doc = YAML.parse(readFileSync(OPENAPI_PATH, 'utf8'));
    const resolve = <T>(x: T | { $ref: string }): T => {
      if (!x || typeof x !== 'object' || !('$ref' in x)) return x as T;
      const [, , kind, name] = x.$ref.split('/');
      return resolve(doc.components[kind!][name!]);
    };
    const KEYS = ['type', 'minimum', 'maximum', 'maxLength', 'pattern', 'enum', 'default', 'anyOf'] as const;
    const normalize = (schema: Record<string, unknown>): Record<string, unknown> => {
      const s = resolve(schema);
      const out: Record<string, unknown> = {};
      for (const k of KEYS) if (s[k] !== undefined) out[k] = k === 'anyOf' ? (s[k] as Record<string, unknown>[]).map(normalize) : s[k];
      return out;
    };
    const mismatches: string[] = [];
    for (const { route, path, method } of operationsOf(v1Presentation)) {
      const op = doc.paths[path]?.[method];
      const documented = ((op?.parameters ?? []) as unknown[])
        .map((p) => resolve(p as { name: string; in: string; required?: boolean; schema: Record<string, unknown> }))
        .filter((p) => p.in === 'query' || p.in === 'path')
        .map((p) => ({ name: p.name, in: p.in, required: p.required === true, schema: normalize(p.schema) }));
      const accepted = parametersOf(route).map((p) => ({ ...p, schema: normalize(p.schema as Record<string, unknown>) }));
      const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
      const [d, a] = [JSON.stringify(documented.sort(byName)), JSON.stringify(accepted.sort(byName))];
      if (d !== a) mismatches.push(`${route.method} ${path}\n  documented ${d}\n  accepted   ${a}`);
    }
    expect(mismatches).toEqual([]);
  });

  it('lists exactly the statuses each operation can answer with, and no catch-all', () => {
    const doc = YAML.parse(readFileSync(OPENAPI_PATH, 'utf8'));
    const mismatches: string[] = [];
    for (const { route, path, method } of operationsOf(v1Presentation)) {
      const documented = Object.keys(doc.paths[path]?.[method]?.responses ?? {}).sort();
      const possible = statusesOf(route).map(String).sort();
      if (JSON.stringify(documented) !== JSON.stringify(possible)) mismatches.push(`${route.method} ${path}: documented ${documented}, possible ${possible}`);
    }
    expect(mismatches).toEqual([]);
  });

  it('declares the request id and the rate-limit headers on every answer of a rate-limited operation', () => {
    const doc = YAML.parse(readFileSync(OPENAPI_PATH, 'utf8'));
    const missing: string[] = [];
    for (const { route, path, method, alias } of operationsOf(v1Presentation)) {
      for (const [status, r] of Object.entries(doc.paths[path][method].responses as Record<string, { $ref?: string; headers?: object }>)) {
        const response = r.$ref ? doc.components.responses[r.$ref.split('/').pop()!] : r;
        const wanted = [
          'x-request-id',
          ...(status === '200' || status === '429' ? ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'] : []),
          ...(alias ? ALIAS_HEADER_NAMES[alias] : []),
        ];
        for (const h of wanted) if (!(h in (response.headers ?? {}))) missing.push(`${route.method} ${path} ${status}: ${h}`);
        // An alias's own headers are what tells a client to move: declared required, so a validator checks they are sent.
        for (const h of alias ? ALIAS_HEADER_NAMES[alias] : []) {
          const ref = (response.headers as Record<string, { $ref?: string }> | undefined)?.[h]?.$ref;
          if (ref && doc.components.headers[ref.split('/').pop()!].required !== true) missing.push(`${route.method} ${path} ${status}: ${h} not required`);
        }
      }
    }
    expect(missing).toEqual([]);
  });
});

describe('api-reference/openapi-legacy.yaml (the appendix variant)', () => {
  it('passes the Redocly linter (recommended rules) with no errors', async () => {
    const config = await createConfig({ extends: ['recommended'], rules: { 'info-license': 'off' } });
    const problems = await lint({ ref: OPENAPI_LEGACY_PATH, config });
    const errors = problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
    expect(errors).toEqual([]);
  });

  it("documents the variant's error codes, and exactly the operations of its route table", () => {
    const doc = YAML.parse(readFileSync(OPENAPI_LEGACY_PATH, 'utf8'));
    expect(doc.components.schemas.Error.properties.error.properties.code.enum.sort()).toEqual(Object.keys(LEGACY_ERROR_STATUS).sort());
    const routes = legacyPresentation.routes({ chainId: 'devnet' } as RouteDeps);
    const served = routes.map((r) => `${r.method} ${openapiPath(legacyPresentation.prefix, r)}`).sort();
    const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
      .filter(([path]) => path.startsWith(`${legacyPresentation.prefix}/`))
      .flatMap(([path, ops]) => Object.keys(ops).filter((k) => METHODS.includes(k)).map((m) => `${m.toUpperCase()} ${path}`))
      .sort();
    // The rows of the appendix table, then issue 22's v1 routes it serves too (D-177).
    expect(served).toHaveLength(16 + legacyV1Routes({ chainId: 'devnet' } as RouteDeps).length);
    expect(served).toEqual(expect.arrayContaining(['POST /api/v1/tx/place-order', 'POST /api/v1/attestations', 'GET /api/v1/admin/indexer', 'POST /api/v1/admin/api-keys']));
    expect(documented).toEqual(served);
  });

  it('declares the legacy /api/ prefix of every operation, and the root aliases of the v1 routes it serves, as deprecated operations with their headers', () => {
    const doc = YAML.parse(readFileSync(OPENAPI_LEGACY_PATH, 'utf8'));
    const aliases = operationsOf(legacyPresentation).filter((o) => o.alias);
    // No root alias of spec 4.1 names a path of the appendix table: only /tx/ and /admin/ are served (D-177).
    expect([...new Set(aliases.filter((a) => a.alias === 'root').map((a) => a.path.split('/')[1]))].sort()).toEqual(['admin', 'tx']);
    const documented = Object.entries(doc.paths as Record<string, Record<string, { deprecated?: boolean; parameters?: unknown; responses: Record<string, { headers?: object }> }>>)
      .filter(([path]) => !path.startsWith(`${legacyPresentation.prefix}/`))
      .flatMap(([path, ops]) =>
        Object.entries(ops)
          .filter(([k]) => METHODS.includes(k))
          .map(([m, op]) => {
            const canonical = doc.paths[`${legacyPresentation.prefix}${path.startsWith('/api/') ? path.slice('/api'.length) : path}`][m];
            const headed = Object.values(op.responses).every((r) => 'Deprecation' in (r.headers ?? {}));
            const same = JSON.stringify(op.parameters) === JSON.stringify(canonical.parameters) && JSON.stringify(Object.keys(op.responses)) === JSON.stringify(Object.keys(canonical.responses));
            return `${m} ${path} deprecated=${op.deprecated} headed=${headed} same=${same}`;
          }),
      )
      .sort();
    expect(documented).toEqual(aliases.map((a) => `${a.method} ${a.path} deprecated=true headed=true same=true`).sort());
  });
});
