// Single-process mode (`npm start`): simulated chain + indexer + API in one process, on
// embedded PostgreSQL and in-memory stand-ins for Redis. Nothing to install.
import { intOption, parseArgsOrExit } from '../core/cli';
import { loadConfigOrExit } from '../core/config';
import { requireAllowed } from '../core/process';

const USAGE = `usage: npm start -- [options]
  --fresh              delete the data folder first (a clean start)
  --data-dir PATH      where PostgreSQL (PGlite) keeps its files (default: DATA_DIR, .data)
  --seed N             simulator seed (default 1; kept in the data folder)
  --epoch-seconds N    market duration (default 60; kept in the data folder)
  --feeds N            oracle feeds, one market per epoch each (default 2; kept in the data folder)
  --variant V          the API's shape: v1 (default) or legacy (the spec appendix's, D-155; API_VARIANT)
  --help`;

const { values } = parseArgsOrExit(
  {
    options: {
      fresh: { type: 'boolean', default: false },
      'data-dir': { type: 'string' },
      seed: { type: 'string' },
      'epoch-seconds': { type: 'string' },
      feeds: { type: 'string' },
      variant: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  },
  USAGE,
);
// A newcomer's terminal shows the banner, not logs, unless LOG_LEVEL asks for them.
const config = loadConfigOrExit({
  ...process.env,
  LOG_LEVEL: process.env.LOG_LEVEL || 'warn',
  ...(values.variant === undefined ? {} : { API_VARIANT: values.variant }),
});
requireAllowed(config, 'npm start runs on embedded PostgreSQL and in-memory stores, which production refuses');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { runEmbedded } = require('./run') as typeof import('./run');
void runEmbedded(config, {
  fresh: values.fresh ?? false,
  dataDir: values['data-dir'] ?? config.dataDir,
  seed: intOption('seed', values.seed),
  epochSeconds: intOption('epoch-seconds', values['epoch-seconds'], 10),
  feeds: intOption('feeds', values.feeds, 1),
});
