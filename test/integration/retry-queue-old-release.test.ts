import path from 'node:path';
import { createDatabase, type Database } from '../../core/db';
import { createProjectionSchema, ensureRetryQueue, inSchema } from '../../core/db/projection-schema';
import { RELEASE_VERSION } from '../../core/release';
import { previousRelease, readChangelog } from '../../local/release/changelog';
import { git } from '../../local/release/git';
import { requestRetry } from '../../server/read/queries/admin';
import { createTestDatabase, type TestDatabase } from '../support/pg';

const ROOT = path.resolve(__dirname, '../..');

/**
 * Issue 50, finding 4 (D-455): the previous release's writer (0.1.1, which knows no schemas)
 * takes retry requests with `WHERE outcome IS NULL` where its names resolve, in `public`. A
 * request the API made for a built schema must not be among them: that writer would apply its
 * own dead letter of the same id and mark the other schema's request done. The statements are
 * the previous release's own, read from its commit, run on a session with the default search
 * path, as that writer's are.
 */
describe("a release that knows no schemas never sees another schema's retry requests", () => {
  const prev = previousRelease(readChangelog(ROOT), RELEASE_VERSION);
  const source = ['indexer/projection/retry.ts', 'indexer/projection/index.ts'].map((f) => git(ROOT, ['show', `${prev.commit!}:${f}`])).join('\n');
  const sql = [...source.matchAll(/'((?:SELECT|UPDATE)[^']*\bdead_letter_retries\b[^']*)'/g)].map((m) => m[1]!);
  const [pending, take, settle] = [/^SELECT EXISTS/, /FOR UPDATE$/, /^UPDATE/].map((re) => sql.find((s) => re.test(s)));
  let tdb: TestDatabase;
  let live: Database;
  let built: Database;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    live = createDatabase({ url: tdb.url, poolMax: 2 });
    await createProjectionSchema(live.db, 9);
    built = createDatabase({ url: inSchema(tdb.url, 'p9'), poolMax: 2 });
  });
  afterAll(async () => {
    await built?.close();
    await live?.close();
    await tdb?.drop();
  });

  /** What the previous release's writer does at a heartbeat: takes and settles every request it sees, one transaction each. */
  async function oldWriterSettles(): Promise<string[]> {
    const settled: string[] = [];
    if (!(await live.db.one<{ any: boolean }>(pending!)).any) return settled;
    for (;;) {
      const id = await live.db.tx(async (t) => {
        const req = await t.oneOrNone<{ id: string }>(take!);
        if (req) await t.none(settle!, [req.id, 'not_retryable', 'no_event', 'settled by the previous release']);
        return req?.id;
      });
      if (id === undefined) return settled;
      settled.push(id);
    }
  }

  it(`release ${prev.version}'s writer settles public's requests and none of a built schema's`, async () => {
    expect([pending, take, settle].every((s) => s !== undefined)).toBe(true);
    // The same id in each schema (dead letters are numbered per schema): whole transactions held back.
    for (const db of [live.db, built.db]) {
      await db.none("INSERT INTO dead_letters (id, signature, event_index, reason, detail, source) VALUES (1, 'sig', -1, 'malformed', 'held back', 'test')");
    }
    const forBuilt = await requestRetry(built.db, '1', 'admin', 'dead_letter_retry');
    const forLive = await requestRetry(live.db, '1', 'admin', 'dead_letter_retry');
    expect(await oldWriterSettles()).toEqual([forLive!.id]);
    // Its own schema's writer finds the request pending, where the API reads it back.
    expect(await built.db.one('SELECT outcome FROM dead_letter_retries WHERE id = $1', [forBuilt!.id])).toEqual({ outcome: null });
    expect(await live.db.one('SELECT outcome FROM dead_letter_retries WHERE id = $1', [forLive!.id])).toEqual({ outcome: 'not_retryable' });
  });

  it("a built schema's requests kept in public's queue before it had its own move to it when its writer starts", async () => {
    // A schema built before D-455: no queue of its own, its requests in public's.
    await live.db.none('DROP TABLE p9.dead_letter_retries');
    const { id } = await live.db.one<{ id: string }>("INSERT INTO dead_letter_retries (dead_letter_id, requested_by, schema_name) VALUES (1, 'admin', 'p9') RETURNING id");
    await ensureRetryQueue(live.db, 'p9');
    expect(await oldWriterSettles()).toEqual([]);
    expect(await live.db.any('SELECT id, outcome FROM p9.dead_letter_retries')).toEqual([{ id, outcome: null }]);
  });
});
