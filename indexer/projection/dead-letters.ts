import type { ITask } from 'pg-promise';
import type { DeadLetter } from './batch';
import { pgBinaryArray } from './pg-binary';

/**
 * Stores dead letters not stored before (a replayed batch finds its own), in the same
 * multi-row `unnest` form as every other write; returns those this call stored.
 */
export async function storeDeadLetters(t: ITask<unknown>, letters: DeadLetter[], source: string): Promise<DeadLetter[]> {
  if (!letters.length) return [];
  const stored = await t.any<{ signature: string; event_index: number }>(
    {
      text: `INSERT INTO dead_letters (signature, event_index, slot, kind, reason, detail, data, source)
             SELECT *, $8::text FROM unnest($1::text[], $2::int[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::bytea[])
             ON CONFLICT DO NOTHING RETURNING signature, event_index`,
      values: [
        pgBinaryArray(letters, 'text', (d) => d.signature),
        pgBinaryArray(letters, 'int4', (d) => d.eventIndex),
        pgBinaryArray(letters, 'int8', (d) => d.slot),
        pgBinaryArray(letters, 'text', (d) => d.kind),
        pgBinaryArray(letters, 'text', (d) => d.reason),
        pgBinaryArray(letters, 'text', (d) => d.detail),
        pgBinaryArray(letters, 'bytea', (d) => (d.data ? Buffer.from(d.data) : null)),
        source,
      ],
    } as never,
  );
  const storedSet = new Set(stored.map((r) => `${r.signature}:${r.event_index}`));
  return letters.filter((d) => storedSet.has(`${d.signature}:${d.eventIndex}`));
}
