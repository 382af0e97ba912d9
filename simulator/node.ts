import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Block } from './chain/types';
import { MarketSimulator } from './simulation';
import { createSimulatorRpcServer, type SimulatorRpcServer } from './rpc-server';
import type { RpcPoolOptions } from './rpc-pool';
import type { RpcProviderOptions } from './rpc-provider';

/**
 * What makes a simulated chain reproducible: its seed and shape, and its genesis (Unix seconds
 * of slot 1). Kept in `simulation.json` of the node's data folder.
 */
export interface Genesis {
  seed: number;
  epochSeconds: number;
  feeds: number;
  startTime: number;
}

export interface ChainNodeOptions {
  programId: string;
  /** Where the genesis and the journal of accepted transactions live; unset keeps nothing (a chain for one run). */
  dataDir?: string;
  /** Asked for when the data folder holds no chain yet (or there is none); a stored genesis must agree with what is given. */
  seed?: number;
  epochSeconds?: number;
  feeds?: number;
  /** Slots of history the RPC keeps (`SimulatorRpcOptions.historySlots`); 20,000 (about 2 h 13 min, 140 MB) unless set. */
  historySlots?: number;
  /** The RPC behaving like a hosted provider (`SimulatorRpcOptions.provider`); off unless set. */
  provider?: RpcProviderOptions;
  /** The RPC as a pool of nodes that lag (`SimulatorRpcOptions.pool`, D-460); one node unless set. */
  pool?: RpcPoolOptions;
  /** Wall clock, in milliseconds (tests move it). */
  now?: () => number;
}

/** About 2 h 13 min of 400 ms slots: what a new indexer can backfill from the node. */
export const DEFAULT_HISTORY_SLOTS = 20_000;

/** A transaction a wallet sent, in the block it ran in: replayed there when the chain is rebuilt. */
interface JournalEntry {
  slot: number;
  tx: string;
}

export class GenesisMismatchError extends Error {
  override name = 'GenesisMismatchError';
}

/**
 * Reads the stored genesis, or makes one: two epochs before now, so there is history at once.
 * A stored chain's seed, epoch and feeds cannot change under it (its history would).
 */
export function loadGenesis(file: string | undefined, opts: Pick<ChainNodeOptions, 'seed' | 'epochSeconds' | 'feeds'>, nowMs: number): Genesis {
  if (file && existsSync(file)) {
    const saved = JSON.parse(readFileSync(file, 'utf8')) as Genesis;
    for (const k of ['seed', 'epochSeconds', 'feeds'] as const) {
      if (opts[k] !== undefined && opts[k] !== saved[k]) {
        throw new GenesisMismatchError(`the data folder holds a chain with ${k} ${saved[k]}; start with --fresh to change it`);
      }
    }
    return saved;
  }
  const epochSeconds = opts.epochSeconds ?? 60;
  const now = Math.floor(nowMs / 1000);
  const genesis = { seed: opts.seed ?? 1, epochSeconds, feeds: opts.feeds ?? 2, startTime: Math.floor(now / epochSeconds) * epochSeconds - 2 * epochSeconds };
  if (file) writeFileSync(file, `${JSON.stringify(genesis, null, 2)}\n`);
  return genesis;
}

/**
 * The simulated chain as a node: the market simulator, its JSON-RPC, and what a restart needs
 * to come back as the same chain. The chain is deterministic from its genesis, so a restart
 * rebuilds it by producing every block again; the only input that is not, the transactions
 * wallets sent, is journaled with the slot it ran in and sent again just before that slot.
 * Blocks come from `produce` (a source that paces the chain itself) or `runRealtime` (a block
 * per slot by the wall clock, like a validator).
 */
export function openChainNode(opts: ChainNodeOptions) {
  const now = opts.now ?? Date.now;
  if (opts.dataDir) mkdirSync(opts.dataDir, { recursive: true });
  const file = (name: string) => (opts.dataDir ? path.join(opts.dataDir, name) : undefined);
  const genesis = loadGenesis(file('simulation.json'), opts, now());
  const simulator = new MarketSimulator({ seed: genesis.seed, programId: opts.programId, feeds: genesis.feeds, epochSeconds: genesis.epochSeconds, startTime: genesis.startTime });

  const journalFile = file('submitted.jsonl');
  const replay = new Map<number, string[]>();
  if (journalFile && existsSync(journalFile)) {
    for (const line of readFileSync(journalFile, 'utf8').split('\n')) {
      if (!line) continue;
      const e = JSON.parse(line) as JournalEntry;
      replay.set(e.slot, [...(replay.get(e.slot) ?? []), e.tx]);
    }
  }
  let replayed = 0;
  let replayFailures = 0;

  /** The slot the wall clock is at: what a real-time chain has produced by now. */
  const dueSlot = (at = now()) => Math.max(0, Math.floor((at - genesis.startTime * 1000) / simulator.slotMs) + 1);
  let behind = true;

  const rpc: SimulatorRpcServer = createSimulatorRpcServer({
    simulator,
    historySlots: opts.historySlots ?? DEFAULT_HISTORY_SLOTS,
    provider: opts.provider,
    pool: opts.pool,
    health: () => (behind ? 'behind' : 'ok'),
    // Accepted: it runs in the next block; journaled first, so a restart runs it there again.
    submit: (base64) => {
      const signature = simulator.submit(base64);
      if (journalFile) appendFileSync(journalFile, `${JSON.stringify({ slot: simulator.slot + 1, tx: base64 } satisfies JournalEntry)}\n`);
      return signature;
    },
  });

  /** The next block: journaled transactions due in it first, then the chain's own work. */
  function produce(): Block {
    const slot = simulator.slot + 1;
    for (const tx of replay.get(slot) ?? []) {
      try {
        simulator.submit(tx);
        replayed += 1;
      } catch {
        // Only if the journal was written by another chain (a changed program or simulator).
        replayFailures += 1;
      }
    }
    replay.delete(slot);
    const block = simulator.nextBlock();
    rpc.record(block);
    if (behind && simulator.slot >= dueSlot()) behind = false;
    return block;
  }

  return {
    simulator,
    rpc,
    genesis,
    produce,
    dueSlot,
    /** False while the chain is still producing the blocks it owes the wall clock. */
    caughtUp: () => !behind,
    /** Journaled transactions sent again while rebuilding, and those the rebuilt chain refused. */
    replayStats: () => ({ replayed, failed: replayFailures, pending: [...replay.values()].reduce((n, l) => n + l.length, 0) }),
    /**
     * Produces blocks by the wall clock: what it owes first, as fast as it can (in slices, so
     * the RPC keeps answering), then one per slot. Returns the function that stops it.
     */
    runRealtime(): () => void {
      let timer: NodeJS.Timeout | undefined;
      let stopped = false;
      const tick = () => {
        if (stopped) return;
        const due = dueSlot();
        const sliceEnd = Date.now() + 20;
        while (simulator.slot < due && Date.now() < sliceEnd) produce();
        if (simulator.slot < due) {
          timer = setTimeout(tick, 0);
          return;
        }
        behind = false;
        const next = genesis.startTime * 1000 + simulator.slot * simulator.slotMs;
        timer = setTimeout(tick, Math.max(1, next - now()));
      };
      tick();
      return () => {
        stopped = true;
        clearTimeout(timer);
      };
    },
    close: () => rpc.close(),
  };
}

export type ChainNode = ReturnType<typeof openChainNode>;
