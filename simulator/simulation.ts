import { MarketState } from '../core/domain';
import { Chain, type SlotContext } from './chain/chain';
import type { PrecompileOptions } from './chain/precompiles';
import type { AccountSnapshot, Block, RpcChain } from './chain/types';
import { addressOf, keyPairOf } from './ids';
import { createMarketProgram, type MarketProgram } from './program/program';
import { createLifecycle } from './traders/lifecycle';
import { createPriceFeeds, walkPrices } from './traders/prices';
import { Random } from './traders/random';
import { createHousekeeping, createTraders } from './traders/traders';
import type { Crowd } from './traders/wallet';
import { createTruthRecord, type Truth } from './truth';

export type { Block } from './chain/types';

export interface SimulatorOptions {
  seed: number;
  programId: string;
  feeds?: number;
  epochSeconds?: number;
  slotMs?: number;
  wallets?: number;
  /** Unix seconds of slot 1. */
  startTime?: number;
  /** Orders per trading market per slot, on average. */
  ordersPerSlot?: number;
  /** How events leave the program: `Program data:` logs or emit_cpi (alternating per transaction with 'mixed'). */
  emit?: 'log' | 'cpi' | 'mixed';
  /** Precompile instructions in front of some transactions' (chain/precompiles.ts; off unless set). */
  precompiles?: PrecompileOptions;
  /** A transaction's log is cut past this many bytes, as a validator cuts it (10,000 unless a test shrinks it). */
  logBytesLimit?: number;
}

/**
 * A seeded, deterministic simulated chain with the market program on it and a crowd using it:
 * the chain (`chain/`), the program (`program/`: the only place its rules live), the
 * participants (`traders/`: the price feeds, the keeper, the traders, the admin, each acting
 * through the program's instructions), and the truth record watching the program's events.
 * Each block is a list of real transactions (the `getTransaction` shape with the program's
 * event bytes); the same seed always yields the same chain.
 */
export class MarketSimulator implements RpcChain {
  readonly programId: string;
  readonly epochSeconds: number;
  /** Real Ed25519 key pairs, so tests can sign as any simulated wallet. */
  readonly walletKeys: { address: string; secretKey: Uint8Array }[];
  readonly chain: Chain;
  readonly program: MarketProgram;
  private readonly crowd: Crowd;
  private readonly record: ReturnType<typeof createTruthRecord>;

  constructor(opts: SimulatorOptions) {
    this.programId = opts.programId;
    this.epochSeconds = opts.epochSeconds ?? 60;
    this.walletKeys = Array.from({ length: opts.wallets ?? 40 }, (_, i) => keyPairOf(`wallet:${opts.seed}:${i}`));
    const wallets = this.walletKeys.map((k) => k.address);
    this.program = createMarketProgram({ programId: opts.programId, admin: wallets[0]!, emit: opts.emit });
    this.chain = new Chain({ program: this.program, startTime: opts.startTime ?? 1_767_225_600, slotMs: opts.slotMs ?? 400, precompiles: opts.precompiles, logBytesLimit: opts.logBytesLimit });
    const feeds = createPriceFeeds(opts.seed, opts.feeds ?? 2);
    for (const f of feeds) this.chain.defineAccount(f.address, () => f.oracle.snapshot());
    this.crowd = {
      rng: new Random(opts.seed),
      programId: opts.programId,
      program: this.program.state,
      wallets,
      walletSet: new Set(wallets),
      mints: [addressOf('mint:usdc'), addressOf('mint:usdt')],
      feeds,
      marketFeed: new Map(),
      recentBlockhash: () => this.chain.latestBlockhash().blockhash,
    };
    this.record = createTruthRecord(this.program, this.chain);
    this.program.onEvents(this.record.observe);
    // A block, in order: prices move and are published; markets are opened, cranked and
    // redeemed; what wallets sent since the last block runs; the traders trade; the rest.
    this.chain.join((s: SlotContext) => walkPrices(feeds, this.crowd.rng, s.slot, s.blockTime));
    this.chain.join(createLifecycle(this.crowd, this.epochSeconds));
    this.chain.join(this.chain.runQueued);
    this.chain.join(createTraders(this.crowd, opts.ordersPerSlot ?? 1.5));
    this.chain.join(createHousekeeping(this.crowd));
  }

  get slot(): number {
    return this.chain.slot;
  }
  get slotMs(): number {
    return this.chain.slotMs;
  }
  get startTime(): number {
    return this.chain.startTime;
  }
  /** Produces the next slot's block (possibly without transactions). */
  nextBlock(): Block {
    return this.chain.nextBlock();
  }
  /** `sendTransaction`: checked as a validator's preflight would; runs in the next block (`Chain.submit`). */
  submit(base64: string): string {
    return this.chain.submit(base64);
  }
  blockTimeOf(slot: number): number {
    return this.chain.blockTimeOf(slot);
  }
  blockhashOf(slot: number): string {
    return this.chain.blockhashOf(slot);
  }
  latestBlockhash(): { slot: number; blockhash: string; lastValidBlockHeight: number } {
    return this.chain.latestBlockhash();
  }
  /** The simulated chain as the API's /tx builders reach it in single-process mode. */
  chainAccess(): { recentBlockhash(): Promise<{ blockhash: string; lastValidBlockHeight: bigint; slot: number }> } {
    return {
      recentBlockhash: async () => {
        const r = this.latestBlockhash();
        return { blockhash: r.blockhash, lastValidBlockHeight: BigInt(r.lastValidBlockHeight), slot: r.slot };
      },
    };
  }
  account(address: string): AccountSnapshot | null {
    return this.chain.account(address);
  }
  /** Every feed's Pyth price account address (markets on a third feed name none, D-150). */
  oracleFeeds(): string[] {
    return this.crowd.feeds.map((f) => f.address);
  }
  /** A Pyth price account as the chain holds it now, or null (unknown address, not yet published). */
  oracleAccount(address: string): AccountSnapshot | null {
    return this.chain.account(address);
  }
  /** What a client reads off the chain to build a transaction for a market. */
  marketAccounts(): { address: string; marketId: bigint; state: MarketState; mint: string; creator: string; tEnd: number }[] {
    return [...this.program.state.markets.values()].map((m) => ({ address: m.address, marketId: m.marketId, state: m.state, mint: m.mint, creator: m.creator, tEnd: m.tEnd }));
  }
  get tickSizeBps(): number {
    return this.program.state.tickSize;
  }
  truth(): Truth {
    return this.record.snapshot();
  }
}
