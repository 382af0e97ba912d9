import { address } from '@solana/kit';
import bs58 from 'bs58';
import { COMPUTE_BUDGET_PROGRAM, IDL, parseTransaction, type RawTransaction } from '../../core/events';
import { accountRole, compileWireTransaction, decodeInstructionData, INSTRUCTION_NAMES } from '../../core/tx';
import { encodeBase58 } from '../../simulator/chain/base58';
import { Chain, type SlotContext } from '../../simulator/chain/chain';
import { RpcSubmitError } from '../../simulator/chain/preflight';
import type { Execution, Program } from '../../simulator/chain/types';
import { signatureOf } from '../../simulator/ids';
import { accountNames, decodeProgramInstruction, encodeProgramInstruction, instructionAccounts, logNameOf, type ProgramInstructionName } from '../../simulator/program/interface';
import { MarketSimulator } from '../../simulator/simulation';
import { programTransaction } from '../../simulator/traders/wallet';
import { signWireTransaction } from '../support/tx';

const PROGRAM = IDL.address;

/** A program that is not the market program: logs its data's first byte, calls itself once, fails on 0xff. */
const echo: Program = {
  id: PROGRAM,
  simulate: (ix) => (ix.data[0] === 0xff ? { code: 7, logs: ['Program log: no'] } : undefined),
  execute(ix): Execution {
    const output: Execution['output'] = [{ log: `Program log: echo ${ix.data[0]}` }, { invoke: { programId: PROGRAM, accounts: [ix.accounts[0]!], data: Uint8Array.of(1, 2, 3) } }];
    return ix.data[0] === 0xff ? { output, units: 10, error: 7 } : { output, units: 10 };
  },
};

const unsigned = (chain: Chain, data: number[], payer = 'Payer111111111111111111111111111111111111111'): Parameters<SlotContext['send']>[0] => ({
  feePayer: payer,
  recentBlockhash: chain.latestBlockhash().blockhash,
  instructions: [
    { programId: COMPUTE_BUDGET_PROGRAM, accounts: [], data: Uint8Array.of(2, 0x40, 0x0d, 0x03, 0) },
    { programId: PROGRAM, accounts: [{ address: payer, signer: true, writable: true }], data: Uint8Array.from(data) },
  ],
});

/** A wallet's wire transaction of any of the program's instructions (the IDL's builders know only five). */
function wire(sim: MarketSimulator, key: { address: string; secretKey: Uint8Array }, tx: ReturnType<typeof programTransaction>): string {
  const ix = tx.instructions.map((i) => ({
    programAddress: address(i.programId),
    accounts: i.accounts.map((a) => ({ address: address(a.address), role: accountRole(a) })),
    data: i.data,
  }));
  const r = sim.latestBlockhash();
  return signWireTransaction(compileWireTransaction(key.address, { blockhash: r.blockhash, lastValidBlockHeight: BigInt(r.lastValidBlockHeight) }, ix), key.secretKey);
}

describe('the chain knows programs only by their interface', () => {
  it('runs an in-process sender\'s unsigned transaction at once, names it, and records what the program output', () => {
    const chain = new Chain({ program: echo, startTime: 1_767_225_600, slotMs: 400 });
    const sent: { signature: string; failed: boolean }[] = [];
    chain.join((s) => {
      sent.push(s.send(unsigned(chain, [5])));
      sent.push(s.send(unsigned(chain, [0xff])));
    });
    const block = chain.nextBlock();
    expect(sent).toEqual([
      { signature: signatureOf('sim:1:1'), failed: false },
      { signature: signatureOf('sim:2:1'), failed: true },
    ]);
    const [ok, failed] = block.transactions as [RawTransaction, RawTransaction];
    expect(ok.transaction.message.accountKeys).toEqual(['Payer111111111111111111111111111111111111111', COMPUTE_BUDGET_PROGRAM, PROGRAM]);
    expect(ok.meta!.logMessages).toEqual([
      `Program ${COMPUTE_BUDGET_PROGRAM} invoke [1]`,
      `Program ${COMPUTE_BUDGET_PROGRAM} success`,
      `Program ${PROGRAM} invoke [1]`,
      'Program log: echo 5',
      `Program ${PROGRAM} invoke [2]`,
      `Program ${PROGRAM} consumed 1200 of 180000 compute units`,
      `Program ${PROGRAM} success`,
      `Program ${PROGRAM} consumed 10 of 200000 compute units`,
      `Program ${PROGRAM} success`,
    ]);
    expect(ok.meta!.innerInstructions).toEqual([{ index: 1, instructions: [{ programIdIndex: 2, accounts: [0], data: bs58.encode(Uint8Array.of(1, 2, 3)), stackHeight: 2 }] }]);
    expect(failed.meta!.err).toEqual({ InstructionError: [1, { Custom: 7 }] });
    expect(failed.meta!.logMessages!.at(-1)).toBe(`Program ${PROGRAM} failed: custom program error: 0x7`);
    expect(chain.stats()).toEqual({ transactions: 2, failed: 1 });
  });

  it('refuses from in-process senders what it refuses from anyone: stale blockhashes, other programs; and sending outside a slot', () => {
    const chain = new Chain({ program: echo, startTime: 1_767_225_600, slotMs: 400 });
    const old = unsigned(chain, [1]);
    let slot: SlotContext | undefined;
    chain.join((s) => (slot = s));
    for (let i = 0; i < 152; i++) chain.nextBlock();
    const errors: unknown[] = [];
    chain.join((s) => {
      for (const tx of [old, { ...unsigned(chain, [1]), instructions: [...unsigned(chain, [1]).instructions, unsigned(chain, [2]).instructions[1]!] }]) {
        try {
          s.send(tx);
        } catch (err) {
          errors.push(err);
        }
      }
    });
    chain.nextBlock();
    expect(errors.map((e) => (e as RpcSubmitError).data)).toEqual([{ err: 'BlockhashNotFound', logs: [] }, { err: 'UnsupportedProgramId', logs: [] }]);
    expect(() => slot!.send(unsigned(chain, [1]))).toThrow('a transaction sent outside its slot');
  });

  it('encodes base58 as bs58 does, at every length and with leading zeros', () => {
    for (let n = 0; n < 400; n++) {
      const bytes = Uint8Array.from({ length: n % 260 }, (_, i) => (i < n % 5 ? 0 : (i * 131 + n * 17) % 256));
      expect(encodeBase58(bytes)).toBe(bs58.encode(bytes));
    }
  });
});

describe('the market program on the chain, and the simulated crowd using it like any wallet', () => {
  const sim = new MarketSimulator({ seed: 11, programId: PROGRAM, epochSeconds: 30 });
  const txs: RawTransaction[] = [];
  for (let i = 0; i < 600; i++) txs.push(...sim.nextBlock().transactions);

  it('every transaction is a program instruction as a client builds it: decodable bytes (the IDL\'s five with core/tx), the accounts the interface derives, its log name', () => {
    const seen = new Set<ProgramInstructionName>();
    for (const tx of txs) {
      const keys = tx.transaction.message.accountKeys as string[];
      const ix = tx.transaction.message.instructions.find((i) => keys[i.programIdIndex!] === PROGRAM)!;
      const data = bs58.decode(ix.data!);
      const decoded = decodeProgramInstruction(data)!;
      seen.add(decoded.name);
      if ((INSTRUCTION_NAMES as readonly string[]).includes(decoded.name)) expect(decodeInstructionData(data)).toEqual(decoded);
      expect(tx.meta!.logMessages).toContain(`Program log: Instruction: ${logNameOf(decoded.name)}`);
      expect(encodeProgramInstruction(decoded.name, decoded.args as never)).toEqual(data);
      const accounts = (ix.accounts as number[]).map((k) => keys[k]!);
      const named = Object.fromEntries(accountNames(decoded.name).map((n, k) => [n, accounts[k]!]));
      expect(instructionAccounts(decoded.name, PROGRAM, named).map((a) => a.address)).toEqual(accounts);
    }
    // Seed 11 over 600 slots of 30 s markets reaches every instruction, the admin's included.
    expect([...seen].sort()).toEqual([...INSTRUCTION_NAMES, 'initialize_market', 'start_trading', 'settle_market', 'resolve_market', 'close_market', 'set_fee_config', 'set_tick_size', 'lock_referral'].sort());
  });

  it('a place_order names exactly the accounts the IDL derives, the position among them', () => {
    const tx = txs.find((t) => t.meta!.logMessages!.includes('Program log: Instruction: PlaceOrder') && !t.meta!.err)!;
    const placed = parseTransaction(tx, PROGRAM).events[0]!.event;
    if (placed.kind !== 'OrderPlaced') throw new Error('first event is not OrderPlaced');
    const m = sim.marketAccounts().find((x) => x.address === placed.data.market)!;
    const want = instructionAccounts('place_order', PROGRAM, { owner: placed.data.owner, market: m.address, settlement_mint: m.mint }).map((a) => a.address);
    const keys = tx.transaction.message.accountKeys as string[];
    const ix = tx.transaction.message.instructions[1]!;
    expect((ix.accounts as number[]).map((k) => keys[k])).toEqual(want);
    expect(keys[0]).toBe(placed.data.owner);
  });

  it('a precompile in front of the program\'s instruction, logged or not as Agave does (D-470), loses no event', () => {
    const run = (precompiles?: { share: number; logged: boolean }) => {
      const s = new MarketSimulator({ seed: 11, programId: PROGRAM, emit: 'mixed', precompiles });
      const all: RawTransaction[] = [];
      for (let i = 0; i < 150; i++) all.push(...s.nextBlock().transactions);
      return { sim: s, all, events: all.flatMap((t) => parseTransaction(t, PROGRAM).events.map((e) => [t.transaction.signatures[0], e.index, e.via, e.event])) };
    };
    const plain = run();
    for (const logged of [false, true]) {
      const withPrecompiles = run({ share: 0.5, logged });
      const fronted = withPrecompiles.all.filter((t) => (t.transaction.message.accountKeys as string[]).includes('Ed25519SigVerify111111111111111111111111111'));
      expect(fronted.length).toBeGreaterThan(withPrecompiles.all.length / 4);
      expect(fronted.some((t) => (t.meta!.innerInstructions ?? []).length > 0)).toBe(true);
      expect(fronted.every((t) => t.meta!.logMessages!.some((l) => l.startsWith('Program Ed25519SigVerify111111111111111111111111111 invoke [1]')) === logged)).toBe(true);
      expect(withPrecompiles.events).toEqual(plain.events);
      expect(withPrecompiles.events.length).toBe(withPrecompiles.sim.truth().events);
    }
  });

  it('a crossing post-only order fails after emitting OrderPlaced, and its events are not counted', () => {
    const failed = txs.filter((t) => t.meta!.err);
    expect(failed.length).toBeGreaterThan(0);
    for (const t of failed) expect(t.meta!.err).toEqual({ InstructionError: [1, { Custom: 6010 }] });
    expect(failed.some((t) => t.meta!.logMessages!.some((l) => l.startsWith('Program data: ')) || t.meta!.innerInstructions!.length > 0)).toBe(true);
    expect(sim.truth().failedTransactions).toBe(failed.length);
    expect(sim.truth().events).toBe(txs.reduce((n, t) => n + parseTransaction(t, PROGRAM).events.length, 0));
  });

  it('runs the instructions the IDL leaves out from a wallet over sendTransaction too, with the program\'s authority rules', () => {
    const admin = sim.walletKeys[0]!;
    const other = sim.walletKeys[1]!;
    const setTick = (k: typeof admin) => wire(sim, k, programTransaction(PROGRAM, sim.latestBlockhash().blockhash, 'set_tick_size', k.address, { admin: k.address }, { tickSizeBps: 20 }));
    let refused: unknown;
    try {
      sim.submit(setTick(other));
    } catch (err) {
      refused = err;
    }
    expect((refused as RpcSubmitError).data).toEqual({ err: { InstructionError: [1, { Custom: 6008 }] }, logs: ['Program log: AnchorError: InvalidAccount'] });
    const signature = sim.submit(setTick(admin));
    const ran = sim.nextBlock().transactions.find((t) => t.transaction.signatures[0] === signature)!;
    expect(parseTransaction(ran, PROGRAM).events.map((e) => e.event)).toEqual([{ kind: 'TickSizeChanged', data: { tickSizeBps: 20 } }]);
    expect(sim.tickSizeBps).toBe(20);
  });
});
