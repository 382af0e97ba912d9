import { parseTransaction, type RawTransaction } from '../../core/events';
import { collectLogs, LOG_MESSAGES_BYTES_LIMIT } from '../../simulator/chain/log-collector';
import { PROGRAM_ID, projectionDb, simulate } from '../support/indexer';
import { tableDigests } from '../support/tables';

// Logs cut as a validator cuts them (10,000 bytes, D-471); a smaller limit here so a short chain
// has enough cut transactions (its logs are 0.5 to 10 KB).
const LIMIT = 1_500;
const SLOTS = 250;
const cut = (t: RawTransaction) => (t.meta?.logMessages ?? []).includes('Log truncated');

describe('the validator\'s log collector, as the simulated chain applies it', () => {
  it('keeps messages under 10,000 bytes, writes `Log truncated` once and still keeps a later short message (as Agave does)', () => {
    expect(LOG_MESSAGES_BYTES_LIMIT).toBe(10_000);
    const lengths = (logs: string[]) => logs.map((l) => (l === 'Log truncated' ? l : l.length));
    expect(lengths(collectLogs(['a'.repeat(9_990), 'c'.repeat(20), 'b'.repeat(9), 'd', 'e'.repeat(30)]))).toEqual([9_990, 'Log truncated', 9]);
    expect(collectLogs(Array(20_000).fill('x'))).toEqual([...Array(9_999).fill('x'), 'Log truncated']);
  });
});

describe('transactions whose log the validator cut', () => {
  it('emit! events past the cut are dead-lettered with their transaction, never silently lost', async () => {
    const full = simulate(SLOTS, { emit: 'log' }).txs;
    const { txs } = simulate(SLOTS, { emit: 'log', logBytesLimit: LIMIT });
    const cutWithEvents = txs.filter((t, i) => cut(t) && t.meta!.err === null && parseTransaction(full[i]!, PROGRAM_ID).events.length > 0);
    expect(cutWithEvents.length).toBeGreaterThan(5);
    const p = await projectionDb();
    try {
      await p.apply(txs, 500);
      const applied = new Set((await p.database.db.any<{ k: string }>(`SELECT signature || ':' || event_index AS k FROM raw_events`)).map((r) => r.k));
      const dead = await p.database.db.any<{ signature: string; event_index: number; reason: string }>('SELECT signature, event_index, reason FROM dead_letters');
      const heldWhole = new Set(dead.filter((d) => d.event_index === -1 && d.reason === 'log_truncated').map((d) => d.signature));
      const deadEvent = new Set(dead.map((d) => `${d.signature}:${d.event_index}`));
      // Every transaction that lost events to the cut is held back whole, with that reason.
      expect([...heldWhole].sort()).toEqual(cutWithEvents.map((t) => t.transaction.signatures[0]!).sort());
      // And every event of the uncut chain is applied or accounted for by a dead letter.
      const lost = full.flatMap((t) => parseTransaction(t, PROGRAM_ID).events.map((e) => `${t.transaction.signatures[0]}:${e.index}`)).filter((k) => !applied.has(k) && !deadEvent.has(k) && !heldWhole.has(k.split(':')[0]!));
      expect(lost).toEqual([]);
    } finally {
      await p.close();
    }
  });

  it('emit_cpi! events survive the cut (inner instructions are not logs): tables equal the uncut chain\'s', async () => {
    const full = simulate(SLOTS, { emit: 'cpi' }).txs;
    const { txs } = simulate(SLOTS, { emit: 'cpi', logBytesLimit: LIMIT });
    expect(txs.filter((t) => cut(t) && parseTransaction(t, PROGRAM_ID).events.length > 0).length).toBeGreaterThan(5);
    const [a, b] = await Promise.all([projectionDb(), projectionDb()]);
    try {
      await a.apply(full, 500);
      await b.apply(txs, 500);
      expect(await b.database.db.any(`SELECT reason, count(*)::int AS n FROM dead_letters WHERE reason = 'log_truncated' AND event_index = -1 AND signature IN (SELECT signature FROM raw_events) GROUP BY 1`)).toEqual([]);
      expect(await tableDigests(b.database.db)).toEqual(await tableDigests(a.database.db));
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});
