import { readFileSync } from 'node:fs';
import { createConfig, lint } from '@redocly/openapi-core';
import YAML from 'yaml';
import { OPENAPI_PATH } from '../support/openapi';

describe('api-reference/openapi.yaml', () => {
  it('passes the Redocly linter (recommended rules) with no errors', async () => {
    const config = await createConfig({ extends: ['recommended'], rules: { 'info-license': 'off' } });
    const problems = await lint({ ref: OPENAPI_PATH, config });
    const errors = problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
    expect(errors).toEqual([]);
  });

  it('documents every error code of spec 7.2 and every API route the server registers', () => {
    const doc = YAML.parse(readFileSync(OPENAPI_PATH, 'utf8'));
    expect(doc.components.schemas.Error.properties.code.enum).toHaveLength(21);
    const routes = readFileSync(`${__dirname}/../../server/routes/markets.ts`, 'utf8') + readFileSync(`${__dirname}/../../server/app.ts`, 'utf8');
    for (const file of ['book-trades-fees', 'orders-positions', 'stats', 'achievements-referrals-creators', 'public-stats']) {
      const src = readFileSync(`${__dirname}/../../server/routes/${file}.ts`, 'utf8');
      for (const m of src.matchAll(/r\.get\('([^']+)'/g)) {
        expect(Object.keys(doc.paths)).toContain(`/api/v1${m[1]!.replace(/:(\w+)/g, '{$1}')}`);
      }
    }
    expect(routes).toContain("api.get('/status'");
  });
});
