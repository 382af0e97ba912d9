/**
 * The projection's version: which rows the projected tables (core/db/tables.ts) hold for a
 * given chain. Two releases with the same version build the same tables from the same
 * transactions; a release whose version differs from the one that built a database's tables
 * needs those tables rebuilt from the chain (a re-index, D-330).
 *
 * test/unit/projection-version.test.ts fingerprints the table descriptors and the sources listed
 * in `PROJECTION_STEPS` and fails when the fingerprint is not in `PROJECTION_HISTORY`: a change
 * there either bumps `PROJECTION_VERSION` or is declared, under the current version, as one that
 * leaves the rows as they were.
 */
export const PROJECTION_VERSION = 1;

/**
 * A re-index is due when the tables were built by another version than the writer's release, or
 * by an unrecorded one (D-331). `release` null: a writer of a release before versions were
 * recorded, which says nothing.
 */
export const reindexDue = (v: { release: number | null; tables: number | null }) => v.release !== null && v.tables !== v.release;

/**
 * The sources that decide which rows an event becomes (paths from the repository root): the
 * projector's steps, the domain rules they call and the event decoder. A change to one of them
 * may change the tables.
 */
export const PROJECTION_STEPS = [
  'core/domain/book.ts',
  'core/domain/codes.ts',
  'core/domain/fees.ts',
  'core/domain/positions.ts',
  'core/events/codec.ts',
  'core/events/idl.json',
  'core/events/parser.ts',
  'core/events/types.ts',
  'indexer/projection/achievements.ts',
  'indexer/projection/apply-events.ts',
  'indexer/projection/apply.ts',
  'indexer/projection/book.ts',
  'indexer/projection/context.ts',
  'indexer/projection/creators.ts',
  'indexer/projection/markets.ts',
  'indexer/projection/orders.ts',
  'indexer/projection/prepare.ts',
  'indexer/projection/program-config.ts',
  'indexer/projection/referrals.ts',
  'indexer/projection/rows.ts',
  'indexer/projection/settle.ts',
  'indexer/projection/state.ts',
  'indexer/projection/write.ts',
] as const;

/**
 * The projector's files that move rows without deciding them (batching, caching, the ledger,
 * the cursor, retries, published messages). Every file of indexer/projection is in exactly one
 * of the two lists, so a new file is classified when it is added.
 */
export const PROJECTION_MECHANICS = [
  'indexer/projection/batch.ts',
  'indexer/projection/cache.ts',
  'indexer/projection/cursor.ts',
  'indexer/projection/dead-letters.ts',
  'indexer/projection/index.ts',
  'indexer/projection/ledger.ts',
  'indexer/projection/load.ts',
  'indexer/projection/messages.ts',
  'indexer/projection/pg-binary.ts',
  'indexer/projection/pipeline.ts',
  'indexer/projection/retry.ts',
  'indexer/projection/slices.ts',
] as const;

/** One accepted fingerprint of the descriptors and steps: the version it belongs to and why. */
export interface ProjectionFingerprint {
  version: number;
  fingerprint: string;
  /** What changed: for an entry under an unchanged version, why the rows stay the same. */
  change: string;
}

/** Every fingerprint accepted so far, oldest first; append only. */
export const PROJECTION_HISTORY: readonly ProjectionFingerprint[] = [
  { version: 1, fingerprint: '2a0e2ce554553fd2', change: 'The projection of releases 0.1.0 and 0.2.0 (no step or descriptor changed between them): what every database built before versions were recorded holds.' },
  {
    version: 1,
    fingerprint: 'b3e21584ff00f272',
    change:
      'The parser places emit_cpi events behind a precompile under the right instruction (D-470), and a body the provider never serves becomes a dead letter instead of a stall (D-463): a transaction without a precompile in front of the program\'s instruction yields the same rows as before; one with a precompile lost its emit_cpi events before, so a database that indexed such a transaction is rebuilt by a re-index (docs/deploy.md, Re-indexing).',
  },
];
