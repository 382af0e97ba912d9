// Indexer process entry point: `npm run indexer -- --source rpc|simulator|webhook [...]`.
// Tracing starts before anything else is loaded (it patches http, pg and ioredis on load).
import { intOption, parseArgsOrExit } from '../core/cli';
import { loadConfigOrExit } from '../core/config';
import { startTracing } from '../core/telemetry/tracing';

const USAGE = `usage: npm run indexer -- [options]
  --source rpc|simulator|webhook   where transactions come from (default rpc: RPC_URL / RPC_WS_URL)
  --seed N                         simulator seed (default 1)
  --until-slot N                   simulator: stop after slot N (a reproducible run)
  --realtime                       simulator: one slot per 400 ms instead of as fast as possible
  --feeds N                        simulator: oracle feeds, one market per epoch each (default 2)
  --epoch-seconds N                simulator: market duration (default 60)
  --batch-size N                   most transactions per database transaction (default 2000)
  --no-progress                    no progress bar
  --help`;

const args = parseArgsOrExit(
  {
    options: {
      source: { type: 'string', default: 'rpc' },
      seed: { type: 'string', default: '1' },
      'until-slot': { type: 'string' },
      realtime: { type: 'boolean', default: false },
      feeds: { type: 'string', default: '2' },
      'epoch-seconds': { type: 'string', default: '60' },
      'batch-size': { type: 'string', default: '2000' },
      'no-progress': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  },
  USAGE,
);
const source = args.values.source;
if (source !== 'rpc' && source !== 'simulator' && source !== 'webhook') {
  process.stderr.write(`--source must be rpc, simulator or webhook (got ${source})\n`);
  process.exit(2);
}

const config = loadConfigOrExit();
const tracing = startTracing({ endpoint: config.otel.endpoint, serviceName: config.otel.serviceName ?? 'market-indexer-indexer', tenant: config.tenantId });

// Loaded after tracing on purpose.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { runIndexer } = require('./run') as typeof import('./run');
const seed = intOption('seed', args.values.seed)!;
const untilSlot = intOption('until-slot', args.values['until-slot']);
const realtime = args.values.realtime ?? false;
const feeds = intOption('feeds', args.values.feeds)!;
const epochSeconds = intOption('epoch-seconds', args.values['epoch-seconds'])!;
/**
 * `--source simulator`: the simulated chain in this process, wired here (and only here) so the
 * indexer knows sources by their interface and production code does not load the test chain
 * (D-220).
 */
function simulated(): import('./run').InProcessSource {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { createSimulatorSource } = require('../simulator/source') as typeof import('../simulator/source');
  return ({ programId, maxBatchTransactions }) => createSimulatorSource({ seed, programId, untilSlot, realtime, feeds, epochSeconds, maxBatchTransactions });
}
void runIndexer(config, tracing, {
  source,
  simulated: source === 'simulator' ? simulated() : undefined,
  batchSize: intOption('batch-size', args.values['batch-size'])!,
  progress: !args.values['no-progress'],
});
