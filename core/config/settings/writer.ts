/**
 * The indexer's writer lease (D-300): client-go's leader-election shape, shortened so a hung
 * writer is replaced within 15 s (D-303: client-go's own 15 s lease measured 16.0–17.0 s). The writer renews
 * every retry period and steps down when it has not renewed for the renew deadline; a standby
 * polls every retry period and takes the lease once it has gone unrenewed for its duration, so a
 * hung writer is replaced within about the duration plus one retry period.
 */
import { int, oneOf, type SettingSpec } from './kinds';

/** What an indexer writes (D-411): the live schema, or this release's projection version's own schema until it switches the API to it. */
export const INDEXER_MODES = ['live', 'build'] as const;
export type IndexerMode = (typeof INDEXER_MODES)[number];

export const WRITER_SETTINGS = {
  INDEXER_LEASE_DURATION_MS: int({
    min: 1_000,
    max: 300_000,
    default: 10_000,
    readBy: ['indexer'],
    description:
      "the writer's lease: a standby takes the writer's place this long after the writer last renewed (timed by PostgreSQL's clock); must exceed `INDEXER_LEASE_RENEW_DEADLINE_MS` (D-300)",
  }),
  INDEXER_LEASE_RENEW_DEADLINE_MS: int({
    min: 500,
    max: 300_000,
    default: 7_000,
    readBy: ['indexer'],
    description:
      'a writer that has not renewed its lease for this long stops committing and exits (a standby or its restart takes over); must exceed `INDEXER_LEASE_RETRY_PERIOD_MS` (D-300)',
  }),
  INDEXER_LEASE_RETRY_PERIOD_MS: int({
    min: 100,
    max: 60_000,
    default: 2_000,
    readBy: ['indexer'],
    description: 'how often the writer renews its lease and a standby looks whether it can take it (D-300)',
  }),
  INDEXER_MODE: oneOf(INDEXER_MODES, {
    default: 'live',
    readBy: ['indexer'],
    description:
      "`live`: write the live schema's tables; `build`: build this release's projection version in schema `p<version>` (created if missing) from the chain's start, switch the API to it once within `INDEXER_BUILD_SWITCH_SLOTS` of the live writer, and write it from then on (D-411)",
  }),
  INDEXER_BUILD_SWITCH_SLOTS: int({
    min: 0,
    max: 10_000,
    default: 4,
    readBy: ['indexer'],
    description: "in `build` mode: how close to the live writer's last processed slot the build must be for the API to be switched to it (D-411)",
  }),
  PROJECTION_RETAIN_HOURS: int({
    min: 0,
    max: 8_760,
    default: 72,
    readBy: ['indexer'],
    description:
      'how long the projection schema switched away from is kept (to switch back to it) before the live writer drops it; `public` is never dropped (D-412)',
  }),
} as const satisfies Record<string, SettingSpec<any>>;
