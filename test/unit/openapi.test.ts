import { readFileSync } from 'node:fs';
import { createConfig, lint } from '@redocly/openapi-core';
import YAML from 'yaml';
import { OPENAPI_PATH } from '../support/openapi';
import { ERROR_STATUS } from '../../core/http/errors';
import { v1Presentation } from '../../server/routes';
import type { RouteDeps } from '../../server/routes/table';

describe('api-reference/openapi.yaml', () => {
  it('passes the Redocly linter (recommended rules) with no errors', async () => {
    const config = await createConfig({ extends: ['recommended'], rules: { 'info-license': 'off' } });
    const problems = await lint({ ref: OPENAPI_PATH, config });
    const errors = problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
    expect(errors).toEqual([]);
  });

  it('documents every error code of spec 7.2, and exactly the operations of the route table', () => {
    const doc = YAML.parse(readFileSync(OPENAPI_PATH, 'utf8'));
    expect(doc.components.schemas.Error.properties.code.enum.sort()).toEqual(Object.keys(ERROR_STATUS).sort());
    // The route table only needs its dependencies when a handler runs.
    const routes = v1Presentation.routes({ chainId: 'devnet' } as RouteDeps);
    const served = routes.map((r) => `${r.method} ${v1Presentation.prefix}${r.path.replace(/:(\w+)/g, '{$1}')}`).sort();
    const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
      .filter(([path]) => path.startsWith(`${v1Presentation.prefix}/`))
      .flatMap(([path, ops]) => Object.keys(ops).filter((k) => ['get', 'post', 'put', 'patch', 'delete'].includes(k)).map((m) => `${m.toUpperCase()} ${path}`))
      .sort();
    expect(served.length).toBeGreaterThan(20);
    expect(documented).toEqual(served);
  });
});
