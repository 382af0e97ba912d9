import { createHash } from 'node:crypto';
import bs58 from 'bs58';
import type { RawTransaction } from '../../core/events';
import { signatureOf } from '../ids';
import { acceptWire, blockhashNotFound, programInstructionIndex, RpcSubmitError, simulationFailed, type Accepted } from './preflight';
import { ed25519Instruction, wantsPrecompile, type PrecompileOptions } from './precompiles';
import { compile, recordTransaction } from './record';
import type { AccountSnapshot, Block, Program, RpcChain, UnsignedTransaction } from './types';

/** A blockhash is accepted for this many blocks after its own, as on a real cluster. */
export const BLOCKHASH_VALID_SLOTS = 150;

export interface ChainOptions {
  program: Program;
  /** Unix seconds of slot 1. */
  startTime: number;
  slotMs: number;
  /** Precompile instructions in front of some in-process transactions (off unless set). */
  precompiles?: PrecompileOptions;
  /** A transaction's log is cut past this many bytes (chain/log-collector.ts; Agave's 10,000 unless a test shrinks it). */
  logBytesLimit?: number;
}

/** The block being produced, as the chain's in-process participants see it. */
export interface SlotContext {
  slot: number;
  blockTime: number;
  /**
   * Runs an unsigned transaction at once, in this block. Only code the chain hands a slot to
   * holds this: the trusted in-process path (no signature to check; the chain names the
   * transaction; no simulation first, as `skipPreflight`, so a failing one lands as failed).
   */
  send(tx: UnsignedTransaction): { signature: string; failed: boolean };
}

export type Participant = (slot: SlotContext) => void;

/**
 * The simulated chain: slots and their block times, blockhashes, the queue of transactions
 * wallets sent, the accounts it serves, and the program it hosts. A block is produced by
 * handing the slot to each participant in the order they joined; the wallets' queue is one of
 * them (`runQueued`). Every transaction, whoever sent it, runs through `run`: the program
 * executes its instruction and the chain records what it output.
 */
export class Chain implements RpcChain {
  readonly programId: string;
  readonly startTime: number;
  readonly slotMs: number;
  private readonly program: Program;
  private readonly precompiles: PrecompileOptions | undefined;
  private readonly logBytesLimit: number | undefined;
  private slotNo = 0;
  private ordinal = 0;
  private failedCount = 0;
  private queue: (Accepted & { signature: string })[] = [];
  private readonly seenSignatures = new Set<string>();
  /**
   * Blockhashes handed out, by their slot, oldest first: a hash is computed when someone asks
   * for it (a block costs nothing when nobody does), and a transaction's can only be one that
   * was handed out or one computed from its slot (checked the long way).
   */
  private readonly recentHashes = new Map<string, number>();
  private readonly accounts = new Map<string, () => AccountSnapshot | null>();
  private readonly participants: Participant[] = [];
  private open: { slot: number; blockTime: number; transactions: RawTransaction[] } | undefined;
  private latestHash: string | undefined;

  constructor(opts: ChainOptions) {
    this.program = opts.program;
    this.precompiles = opts.precompiles;
    this.logBytesLimit = opts.logBytesLimit;
    this.programId = opts.program.id;
    this.startTime = opts.startTime;
    this.slotMs = opts.slotMs;
  }

  get slot(): number {
    return this.slotNo;
  }

  blockTimeOf(slot: number): number {
    return this.startTime + Math.floor(((slot - 1) * this.slotMs) / 1000);
  }

  /** The blockhash of a slot's block (deterministic); block height equals slot here. */
  blockhashOf(slot: number): string {
    return bs58.encode(createHash('sha256').update(`blockhash:${this.programId}:${slot}`).digest());
  }

  /** As `getLatestBlockhash`: valid for 150 more blocks, like a real cluster's. */
  latestBlockhash(): { slot: number; blockhash: string; lastValidBlockHeight: number } {
    if (this.latestHash === undefined) {
      this.latestHash = this.blockhashOf(this.slotNo);
      this.recentHashes.set(this.latestHash, this.slotNo);
    }
    return { slot: this.slotNo, blockhash: this.latestHash, lastValidBlockHeight: this.slotNo + BLOCKHASH_VALID_SLOTS };
  }

  isRecentBlockhash(h: string): boolean {
    const oldest = this.slotNo - BLOCKHASH_VALID_SLOTS;
    for (const [hash, slot] of this.recentHashes) {
      if (slot >= oldest) break;
      this.recentHashes.delete(hash);
    }
    const slot = this.recentHashes.get(h);
    if (slot !== undefined) return true;
    for (let s = this.slotNo; s >= Math.max(0, oldest); s--) if (this.blockhashOf(s) === h) return true;
    return false;
  }

  /** An account the chain serves, read when asked (its writer keeps it current). */
  defineAccount(address: string, read: () => AccountSnapshot | null): void {
    this.accounts.set(address, read);
  }

  account(address: string): AccountSnapshot | null {
    return this.accounts.get(address)?.() ?? null;
  }

  /** Joins block production: called with every slot, after those that joined before. */
  join(participant: Participant): void {
    this.participants.push(participant);
  }

  /** The participant that runs what wallets sent since the last block, in the order it came. */
  readonly runQueued: Participant = () => {
    const queue = this.queue;
    this.queue = [];
    for (const tx of queue) this.run(tx);
  };

  /**
   * `sendTransaction`: the validator's preflight (wire format, signatures, blockhash, the
   * program's own simulation against the current state), then the queue; it runs in the next
   * block, where the program checks it again (a failed transaction then lands with its error).
   */
  submit(base64: string): string {
    const tx = acceptWire(base64, this.programId, (h) => this.isRecentBlockhash(h));
    if (this.seenSignatures.has(tx.signature)) throw new RpcSubmitError(-32002, 'Transaction simulation failed: This transaction has already been processed', { err: 'AlreadyProcessed', logs: [] });
    const refused = this.program.simulate(tx.instructions[tx.index]!, this.blockTimeOf(this.slotNo + 1));
    if (refused) throw simulationFailed(tx.index, refused.code, refused.logs);
    this.seenSignatures.add(tx.signature);
    this.queue.push(tx);
    return tx.signature;
  }

  /** Produces the next slot's block (possibly without transactions). */
  nextBlock(): Block {
    this.slotNo += 1;
    const slot = this.slotNo;
    this.latestHash = undefined;
    const block = { slot, blockTime: this.blockTimeOf(slot), transactions: [] as RawTransaction[] };
    this.open = block;
    const context: SlotContext = {
      slot,
      blockTime: block.blockTime,
      send: (unsigned) => {
        if (this.open !== block) throw new Error('a transaction sent outside its slot');
        if (!this.isRecentBlockhash(unsigned.recentBlockhash)) throw blockhashNotFound();
        const last = unsigned.instructions[unsigned.instructions.length - 1];
        const withPrecompile = last && wantsPrecompile(this.precompiles, this.ordinal + 1) ? { ...unsigned, instructions: [ed25519Instruction(last.data), ...unsigned.instructions] } : unsigned;
        const compiled = compile(withPrecompile);
        const tx = { ...compiled, index: programInstructionIndex(compiled.instructions, this.programId) };
        const recorded = this.run(tx);
        return { signature: recorded.transaction.signatures[0]!, failed: recorded.meta!.err !== null };
      },
    };
    try {
      for (const p of this.participants) p(context);
    } finally {
      this.open = undefined;
    }
    return block;
  }

  /** Transactions run so far, and how many of them failed. */
  stats(): { transactions: number; failed: number } {
    return { transactions: this.ordinal, failed: this.failedCount };
  }

  /** Runs one transaction in the open block and records it there. */
  private run(tx: Accepted): RawTransaction {
    const block = this.open;
    if (!block) throw new Error('no block is being produced');
    this.ordinal += 1;
    const signature = tx.signature ?? signatureOf(`sim:${this.ordinal}:${block.slot}`);
    const result = this.program.execute(tx.instructions[tx.index]!, { signature, slot: block.slot, blockTime: block.blockTime, ordinal: this.ordinal });
    if (result.error !== undefined) this.failedCount += 1;
    const recorded = recordTransaction(tx, signature, block.slot, block.blockTime, result, { precompilesLogged: this.precompiles?.logged, logBytesLimit: this.logBytesLimit });
    block.transactions.push(recorded);
    return recorded;
  }
}
