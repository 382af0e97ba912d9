import { readFileSync } from 'node:fs';
import { createConfig, lint } from '@redocly/openapi-core';
import YAML from 'yaml';
import { OPENAPI_LEGACY_PATH, OPENAPI_PATH } from '../support/openapi';
import { ERROR_STATUS } from '../../core/http/errors';
import { v1Presentation } from '../../server/routes';
import { legacyPresentation } from '../../server/routes/legacy';
import { LEGACY_ERROR_STATUS } from '../../server/routes/legacy/envelope';
import type { RouteDeps } from '../../server/routes/table';
import { openapiPath, parametersOf, statusesOf } from '../../server/routes/contract';

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
    for (const route of v1Presentation.routes({ chainId: 'devnet' } as RouteDeps)) {
      const path = openapiPath(v1Presentation.prefix, route);
      const op = doc.paths[path]?.[route.method.toLowerCase()];
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
    for (const route of v1Presentation.routes({ chainId: 'devnet' } as RouteDeps)) {
      const path = openapiPath(v1Presentation.prefix, route);
      const documented = Object.keys(doc.paths[path]?.[route.method.toLowerCase()]?.responses ?? {}).sort();
      const possible = statusesOf(route).map(String).sort();
      if (JSON.stringify(documented) !== JSON.stringify(possible)) mismatches.push(`${route.method} ${path}: documented ${documented}, possible ${possible}`);
    }
    expect(mismatches).toEqual([]);
  });

  it('declares the request id and the rate-limit headers on every answer of a rate-limited operation', () => {
    const doc = YAML.parse(readFileSync(OPENAPI_PATH, 'utf8'));
    const missing: string[] = [];
    for (const route of v1Presentation.routes({ chainId: 'devnet' } as RouteDeps)) {
      const path = openapiPath(v1Presentation.prefix, route);
      for (const [status, r] of Object.entries(doc.paths[path][route.method.toLowerCase()].responses as Record<string, { $ref?: string; headers?: object }>)) {
        const response = r.$ref ? doc.components.responses[r.$ref.split('/').pop()!] : r;
        const wanted = ['x-request-id', ...(status === '200' || status === '429' ? ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'] : [])];
        for (const h of wanted) if (!(h in (response.headers ?? {}))) missing.push(`${route.method} ${path} ${status}: ${h}`);
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
      .flatMap(([path, ops]) => Object.keys(ops).filter((k) => ['get', 'post', 'put', 'patch', 'delete'].includes(k)).map((m) => `${m.toUpperCase()} ${path}`))
      .sort();
    expect(served).toHaveLength(16); // the rows of the appendix table
    expect(documented).toEqual(served);
  });
});
