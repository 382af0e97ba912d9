import { readFileSync } from 'node:fs';
import YAML from 'yaml';
import { BATCH_PATHS, RECENT_BATCHES, RETRY_OUTCOMES } from '../../core/indexer-admin';
import { PLAN_NAMES } from '../../core/plans';
import { OPENAPI_PATH } from '../support/openapi';

/** The lists `/admin/*` answers with are the code's, not copies that drift (D-164…D-166). */
describe('openapi.yaml: the admin enums are the code\'s lists', () => {
  const doc = YAML.parse(readFileSync(OPENAPI_PATH, 'utf8'));
  // A schema named under components is reached through its $ref (D-520).
  const deref = (s: { $ref?: string }) => (s.$ref ? s.$ref.slice(2).split('/').reduce((o, k) => o[k], doc) : s);
  const migration = readFileSync(`${__dirname}/../../db/migrations/0010_dead_letter_retries.sql`, 'utf8');

  it('retry outcomes: the code\'s, plus pending; the table\'s CHECK lists the same', () => {
    expect(doc.components.schemas.AdminRetryAnswer.properties.data.properties.retry.properties.outcome.enum).toEqual(['pending', ...RETRY_OUTCOMES]);
    expect(/outcome IN \(([^)]*)\)/.exec(migration)![1]!.split(',').map((s) => s.trim().replace(/'/g, ''))).toEqual([...RETRY_OUTCOMES]);
  });

  it('plans of a new API key, batch paths and the ring size of the indexer view', () => {
    const body = deref(doc.paths['/api/v1/admin/api-keys'].post.requestBody.content['application/json'].schema);
    expect(body.properties.plan.enum).toEqual([...PLAN_NAMES]);
    const indexer = deref(doc.paths['/api/v1/admin/indexer'].get.responses['200'].content['application/json'].schema).properties.data.properties;
    expect(indexer.recentBatches.items.properties.path.enum).toEqual([...BATCH_PATHS]);
    expect(indexer.recentBatches.description).toContain(`last ${RECENT_BATCHES} `);
  });
});
