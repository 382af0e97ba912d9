// `npm run chain`: the simulated chain alone, as a local validator would run, behind its Solana
// JSON-RPC (HTTP and WebSocket on CHAIN_RPC_PORT, 8899). What a simulator-source tenant of the
// kit runs as its chain, and what `npm run tenant` starts for the others. Not a Solana node: it
// runs only the market program (simulator/), with simulated traders.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { intOption, parseArgsOrExit } from '../core/cli';
import { loadConfigOrExit } from '../core/config';
import { createLogger } from '../core/telemetry/logger';
import { GenesisMismatchError, openChainNode } from './node';
import { listenScope } from './rpc-http';

const USAGE = `usage: npm run chain -- [options]
  --data-dir PATH      genesis and accepted transactions (default: DATA_DIR when set, else .data/chain)
  --fresh              delete the data folder first: a new chain
  --seed N             simulator seed (default 1; kept in the data folder)
  --epoch-seconds N    market duration (default 60; kept in the data folder)
  --feeds N            oracle feeds, one market per epoch each (default 2; kept in the data folder)
  --history-slots N    slots of history the RPC keeps (default 20000, about 2 h)
  --port N             RPC port (default CHAIN_RPC_PORT, 8899)
 answering like a hosted RPC provider (all off by default; D-240):
  --latency-ms N       added to every answer (e.g. 40)
  --jitter-ms N        the latency varies by up to this much either way
  --rate-limit N       credits per second (a light call costs 1, getTransaction 2: core/rpc-credits.ts);
                       past it HTTP 429 with Retry-After
  --no-batches         refuse JSON-RPC batch requests
  --fault-rate P       this share (0-1) of requests gets a 429, a 5xx or no answer, at random
 as a provider's pool of nodes that lag behind each other: CHAIN_RPC_POOL_LAGS (D-460)
  --help`;

const { values } = parseArgsOrExit(
  {
    options: {
      'data-dir': { type: 'string' },
      fresh: { type: 'boolean', default: false },
      seed: { type: 'string' },
      'epoch-seconds': { type: 'string' },
      feeds: { type: 'string' },
      'history-slots': { type: 'string' },
      port: { type: 'string' },
      'latency-ms': { type: 'string' },
      'jitter-ms': { type: 'string' },
      'rate-limit': { type: 'string' },
      'no-batches': { type: 'boolean', default: false },
      'fault-rate': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  },
  USAGE,
);

function faultRate(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const p = Number(value);
  if (!(p >= 0 && p <= 1)) {
    process.stderr.write(`--fault-rate must be a number from 0 to 1 (got ${value})\n`);
    process.exit(2);
  }
  return p;
}

const config = loadConfigOrExit();
const logger = createLogger({ level: config.logLevel, format: config.logFormat, service: 'chain', tenant: config.tenantId });
const dataDir = path.resolve(values['data-dir'] ?? (process.env.DATA_DIR ? config.dataDir : path.join('.data', 'chain')));
if (values.fresh) rmSync(dataDir, { recursive: true, force: true });

void (async () => {
  let node: ReturnType<typeof openChainNode>;
  try {
    node = openChainNode({
      programId: config.programId,
      dataDir,
      seed: intOption('seed', values.seed),
      epochSeconds: intOption('epoch-seconds', values['epoch-seconds'], 10),
      feeds: intOption('feeds', values.feeds, 1),
      historySlots: intOption('history-slots', values['history-slots'], 1),
      provider: {
        latencyMs: intOption('latency-ms', values['latency-ms']),
        jitterMs: intOption('jitter-ms', values['jitter-ms']),
        requestsPerSecond: intOption('rate-limit', values['rate-limit']),
        batches: !values['no-batches'],
        faultRate: faultRate(values['fault-rate']),
      },
      pool: { lags: config.chainRpcPoolLags },
    });
  } catch (err) {
    if (!(err instanceof GenesisMismatchError)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
  const port = intOption('port', values.port) ?? config.chainRpcPort;
  // A taken port is one line (PortInUseError names CHAIN_RPC_PORT); so is a host it cannot bind.
  const endpoints = await node.rpc.listen(port, config.chainRpcHost).catch((err: Error) => {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  });
  const stop = node.runRealtime();
  const due = node.dueSlot();
  logger.info({ dataDir, genesis: node.genesis, dueSlot: due }, 'chain started; rebuilding to the wall clock');
  process.stdout.write(`simulated chain: RPC ${endpoints.url}, ${endpoints.wsUrl} (program ${config.programId}, data in ${dataDir})\n  ${listenScope(endpoints.address)}\n`);
  if (config.chainRpcPoolLags.length) process.stdout.write(`  served as a pool of ${config.chainRpcPoolLags.length} nodes, ${config.chainRpcPoolLags.join(', ')} slots behind (CHAIN_RPC_POOL_LAGS)\n`);
  process.send?.({ type: 'listening', port: endpoints.port, address: endpoints.address });
  const caughtUp = setInterval(() => {
    if (!node.caughtUp()) return;
    clearInterval(caughtUp);
    logger.info({ slot: node.simulator.slot, replay: node.replayStats() }, 'chain caught up with the wall clock');
  }, 200);
  const shutdown = (signal: string) => {
    logger.info({ signal }, 'chain stopping');
    clearInterval(caughtUp);
    stop();
    void node.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
})();
