import { createDatabase } from '../../core/db';
import { indexerPoolApplicationName } from '../../core/indexer-admin';
import { differingTables, uninterruptedDigests } from '../faults/digests';
import { createTestDatabase } from '../support/pg';
import { spawnIndexer, tenantEnv, type IndexerChild } from '../support/processes';
import { waitFor } from '../support/tables';

const SEED = 61;
// Paced by the wall clock (a slot per 400 ms): the writer is still writing when it is frozen.
const UNTIL = 150;
// A short lease keeps the test to seconds; `npm run bench -- failover` times the defaults (D-300).
const LEASE = { INDEXER_LEASE_DURATION_MS: '6000', INDEXER_LEASE_RENEW_DEADLINE_MS: '4000', INDEXER_LEASE_RETRY_PERIOD_MS: '1000' };

/**
 * Every committed cursor advance, with the session that committed it: a row exists only for a
 * transaction that committed (one rolled back or refused leaves none).
 */
const AUDIT = `
  CREATE TABLE cursor_commits (n BIGSERIAL PRIMARY KEY, app TEXT NOT NULL, epoch BIGINT NOT NULL, slot BIGINT NOT NULL);
  CREATE FUNCTION audit_cursor() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO cursor_commits (app, epoch, slot) VALUES (current_setting('application_name'), NEW.writer_epoch, NEW.last_processed_slot);
    RETURN NEW;
  END $$;
  CREATE TRIGGER audit_cursor AFTER UPDATE ON indexer_cursor FOR EACH ROW
    WHEN (NEW.last_activity_at IS DISTINCT FROM OLD.last_activity_at) EXECUTE FUNCTION audit_cursor();`;

describe('the writer lease (real indexer processes, real PostgreSQL)', () => {
  it('replaces a frozen writer (SIGSTOP) once its lease expires; woken (SIGCONT), it commits nothing and steps down; the tables equal an uninterrupted run', async () => {
    const expected = await uninterruptedDigests(SEED, UNTIL);
    const tdb = await createTestDatabase();
    const direct = createDatabase({ url: tdb.url, poolMax: 2 });
    await direct.db.none(AUDIT);
    const env = tenantEnv(tdb.url, LEASE);
    const args = ['--source', 'simulator', '--seed', String(SEED), '--until-slot', String(UNTIL), '--realtime', '--batch-size', '20'];
    const children: IndexerChild[] = [];
    try {
      const role = async (c: IndexerChild) => ((await (await fetch(`http://127.0.0.1:${await c.port}/health`)).json()) as { role: string }).role;
      const lease = () => direct.db.one<{ holder: string | null; token: string }>('SELECT holder, token FROM writer_lease WHERE id = 1');
      // Started together, so that the standby is up before the paced chain ends; the first to take the lease writes.
      children.push(spawnIndexer(args, env), spawnIndexer(args, env));
      const [writer, standby] = await waitFor('a writer and a standby', async () => {
        const roles = await Promise.all(children.map((c) => role(c).catch(() => '')));
        if (roles[0] === 'writer' && roles[1] === 'standby') return [children[0]!, children[1]!] as const;
        if (roles[1] === 'writer' && roles[0] === 'standby') return [children[1]!, children[0]!] as const;
        return undefined;
      }, 120_000);
      await waitFor('a first commit', async () => Number((await direct.db.one('SELECT count(*) AS n FROM cursor_commits')).n) > 0, 60_000);
      const held = await lease();
      expect(held.holder).toMatch(new RegExp(`:${writer.child.pid}$`));

      writer.child.kill('SIGSTOP');
      const frozenAt = Number((await direct.db.one('SELECT last_processed_slot AS s FROM indexer_cursor')).s);
      // No kubelet acts here: only the lease can hand over. The standby takes it and commits.
      await waitFor('the standby to take the lease and commit', async () => {
        const now = await lease();
        if (Number(now.token) <= Number(held.token) || !now.holder?.endsWith(`:${standby.child.pid}`)) return false;
        return Number((await direct.db.one('SELECT count(*) AS n FROM cursor_commits WHERE epoch = $1', [now.token])).n) > 0;
      }, 60_000);
      writer.child.kill('SIGCONT');

      const woken = await writer.exited;
      expect(woken.code).toBe(1);
      expect((await standby.exited).code).toBe(0);
      expect(frozenAt).toBeLessThan(UNTIL);

      const writerApp = indexerPoolApplicationName(`${(held.holder ?? '').split(':')[0]}:${writer.child.pid}`);
      const commits = await direct.db.any<{ n: string; app: string; epoch: string }>('SELECT n, app, epoch FROM cursor_commits ORDER BY n');
      const firstByStandby = commits.findIndex((c) => Number(c.epoch) > Number(held.token));
      expect(firstByStandby).toBeGreaterThan(0);
      // Before the take-over only the first writer committed, with its token; after it, only the standby, with the next one.
      expect(new Set(commits.slice(0, firstByStandby).map((c) => `${c.app} ${c.epoch}`))).toEqual(new Set([`${writerApp} ${held.token}`]));
      expect(commits.slice(firstByStandby).filter((c) => c.app === writerApp || Number(c.epoch) !== Number(held.token) + 1)).toEqual([]);
      expect(Number((await direct.db.one('SELECT last_processed_slot AS s FROM indexer_cursor')).s)).toBe(UNTIL);
      expect(await differingTables(expected, direct.db)).toEqual([]);
    } finally {
      for (const c of children) {
        c.child.kill('SIGCONT');
        c.child.kill('SIGKILL');
      }
      await Promise.all(children.map((c) => c.exited));
      await direct.close();
      await tdb.drop();
    }
  }, 300_000);
});
