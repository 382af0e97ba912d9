import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openChainNode, type ChainNode, type Genesis } from '../../simulator/node';

/**
 * The simulated chain of a real-time bench, in this process, from a genesis a second ago: it has
 * (almost) no history to backfill, and its one market per epoch trades for the whole run. Its
 * data folder is temporary; `close` closes the node and removes the folder.
 */
export function openFreshChain(opts: { name: string; programId: string; seed: number; epochSeconds: number }): { chain: ChainNode; close: () => Promise<void> } {
  const dataDir = mkdtempSync(path.join(tmpdir(), `${opts.name}-chain-`));
  const genesis: Genesis = { seed: opts.seed, epochSeconds: opts.epochSeconds, feeds: 1, startTime: Math.floor(Date.now() / 1000) - 1 };
  writeFileSync(path.join(dataDir, 'simulation.json'), JSON.stringify(genesis));
  const chain = openChainNode({ programId: opts.programId, dataDir });
  return {
    chain,
    close: async () => {
      await chain.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
