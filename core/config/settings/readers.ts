/**
 * Who reads a setting and who must be given it: the processes, the indexer's sources, and the
 * requirements a deployment must meet (D-210). The catalog's entries name them; the kit and
 * `docs/configuration.md` group by them.
 */

/**
 * The programs that read settings. `migrate` is `npm run migrate` (the kit's init container).
 * Single-process mode (`npm start`) runs the API and the indexer in one process and reads what
 * they read; `embedded` marks what only it reads. `operator` is the MarketIndexer controller,
 * `chain` the simulated chain's node (`npm run chain`, a simulator-source tenant's chain).
 */
export type ProcessName = 'api' | 'indexer' | 'embedded' | 'migrate' | 'operator' | 'chain';

/** Where the indexer reads transactions from (`--source`, a tenant's `source.type`). */
export const SOURCE_TYPES = ['rpc', 'webhook', 'simulator'] as const;
export type SourceType = (typeof SOURCE_TYPES)[number];

/**
 * Who cannot do its job on a setting's default, so a deployment must supply it: a process
 * whatever its source (`api`, `migrate`, `chain`), or the indexer with one source
 * (`indexer:rpc`). In production (`NODE_ENV=production`) such a process refuses to start
 * without it, and the kit's synth refuses a tenant whose rendered environment lacks it (D-210).
 */
export type Requirement = 'api' | 'migrate' | 'chain' | `indexer:${SourceType}`;

export const BOTH = ['api', 'indexer'] as const;
export const EVERY_PROCESS = ['api', 'indexer', 'operator', 'chain'] as const;
export const INDEXER_SOURCES = SOURCE_TYPES.map((s) => `indexer:${s}` as const);
