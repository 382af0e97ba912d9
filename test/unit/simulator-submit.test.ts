import nacl from 'tweetnacl';
import bs58 from 'bs58';
import { MarketState, Side, OrderType } from '../../core/domain';
import { parseTransaction, IDL } from '../../core/events';
import { buildProgramTransaction, type InstructionArgs, type InstructionName } from '../../core/tx';
import { BLOCKHASH_VALID_SLOTS } from '../../simulator/chain/chain';
import { MarketSimulator } from '../../simulator/simulation';
import { RpcSubmitError } from '../../simulator/chain/preflight';
import { signWireTransaction } from '../support/tx';

const PROGRAM = IDL.address;

function wallet() {
  const k = nacl.sign.keyPair();
  return { address: bs58.encode(k.publicKey), secretKey: k.secretKey };
}

/** A simulator advanced until a market trades, with that market's accounts. */
function trading(seed = 5) {
  const sim = new MarketSimulator({ seed, programId: PROGRAM, epochSeconds: 30 });
  for (let i = 0; i < 400; i++) {
    sim.nextBlock();
    const m = sim.marketAccounts().find((x) => x.state === MarketState.Trading);
    if (m) return { sim, market: m };
  }
  throw new Error('no market started trading');
}

async function signed<N extends InstructionName>(sim: MarketSimulator, w: { address: string; secretKey: Uint8Array }, name: N, accounts: Record<string, string>, args: InstructionArgs[N], recent = sim.latestBlockhash()) {
  const built = await buildProgramTransaction({
    programId: PROGRAM, name, signer: w.address, accounts, args,
    recent: { blockhash: recent.blockhash, lastValidBlockHeight: BigInt(recent.lastValidBlockHeight) },
  });
  return { built, wire: signWireTransaction(built.transaction, w.secretKey) };
}

const rpcError = (f: () => unknown): RpcSubmitError => {
  try {
    f();
  } catch (err) {
    if (err instanceof RpcSubmitError) return err;
    throw err;
  }
  throw new Error('submit accepted the transaction');
};

describe('the simulated chain runs signed transactions built from the IDL', () => {
  it('places an outside wallet\'s order in the next block, with the wallet\'s signature, message and events', async () => {
    const { sim, market } = trading();
    const w = wallet();
    const price = sim.tickSizeBps * 3; // far below the market: rests on the book
    const { built, wire } = await signed(sim, w, 'place_order', { owner: w.address, market: market.address, settlement_mint: market.mint }, { side: Side.BuyYes, priceBps: price, quantity: 2_000_000n, orderType: OrderType.Limit });
    const signature = sim.submit(wire);
    const block = sim.nextBlock();
    const tx = block.transactions.find((t) => t.transaction.signatures[0] === signature)!;
    expect(tx).toBeDefined();
    expect(tx.meta!.err).toBeNull();
    expect(tx.transaction.message.accountKeys).toContain(built.accounts.position);
    const parsed = parseTransaction(tx, PROGRAM);
    expect(parsed.events.map((e) => e.event.kind)[0]).toBe('OrderPlaced');
    expect(parsed.events[0]!.event.data).toMatchObject({ market: market.address, owner: w.address, side: Side.BuyYes, priceBps: price, quantity: 2_000_000n, orderType: 0 });
    const order = sim.truth().orders.find((o) => o.owner === w.address)!;
    expect(order).toMatchObject({ market_address: market.address, price_bps: price, quantity: '2000000', status_code: 0 });

    // The owner cancels it; another wallet may not.
    const orderId = BigInt(String(order.order_id));
    const other = wallet();
    const stranger = await signed(sim, other, 'cancel_order', { owner: other.address, market: market.address }, { orderId });
    expect(rpcError(() => sim.submit(stranger.wire))).toMatchObject({ code: -32002, data: { err: { InstructionError: [1, { Custom: 6005 }] } } });
    const cancel = await signed(sim, w, 'cancel_order', { owner: w.address, market: market.address }, { orderId });
    const cancelSig = sim.submit(cancel.wire);
    const next = sim.nextBlock().transactions.find((t) => t.transaction.signatures[0] === cancelSig)!;
    expect(parseTransaction(next, PROGRAM).events.map((e) => e.event)).toEqual([
      { kind: 'OrderCancelled', data: { market: market.address, orderId, owner: w.address, remainingQuantity: 2_000_000n } },
    ]);
    expect(sim.truth().orders.find((o) => o.owner === w.address)!.status_code).toBe(2);
  });

  it('refuses what a validator refuses: missing or wrong signatures, stale blockhash, replay, foreign accounts', async () => {
    const { sim, market } = trading(6);
    const w = wallet();
    const accounts = { owner: w.address, market: market.address, settlement_mint: market.mint };
    const args = { side: Side.BuyNo, priceBps: sim.tickSizeBps * 2, quantity: 1_000n, orderType: OrderType.Limit };
    const { built, wire } = await signed(sim, w, 'place_order', accounts, args);
    expect(rpcError(() => sim.submit(built.transaction))).toMatchObject({ code: -32003 });
    // Another key's signature in the owner's slot.
    const forged = Buffer.from(built.transaction, 'base64');
    forged.set(nacl.sign.detached(Uint8Array.from(forged.subarray(65)), wallet().secretKey), 1);
    expect(rpcError(() => sim.submit(forged.toString('base64')))).toMatchObject({ code: -32003 });
    const sig = sim.submit(wire);
    expect(rpcError(() => sim.submit(wire)).message).toMatch(/already been processed/);
    expect(sig).toBe(bs58.encode(bs58.decode(sig)));
    // A blockhash older than its 150 blocks.
    const old = sim.latestBlockhash();
    for (let i = 0; i <= BLOCKHASH_VALID_SLOTS; i++) sim.nextBlock();
    const live = sim.marketAccounts().find((x) => x.state === MarketState.Trading)!;
    const stale = await signed(sim, w, 'place_order', { ...accounts, market: live.address, settlement_mint: live.mint }, args, old);
    expect(rpcError(() => sim.submit(stale.wire))).toMatchObject({ code: -32002, data: { err: 'BlockhashNotFound' } });
    // Accounts derived under another program id are not this program's PDAs.
    const foreign = await buildProgramTransaction({
      programId: bs58.encode(Buffer.alloc(32, 7)), name: 'place_order', signer: w.address, accounts: { ...accounts, market: live.address, settlement_mint: live.mint }, args,
      recent: { blockhash: sim.latestBlockhash().blockhash, lastValidBlockHeight: 1n },
    });
    expect(rpcError(() => sim.submit(signWireTransaction(foreign.transaction, w.secretKey))).code).toBe(-32002);
  });

  it('applies the program rules: tick grid, quantity bounds, shares to sell, market state', async () => {
    const { sim, market } = trading(7);
    const w = wallet();
    const accounts = { owner: w.address, market: market.address, settlement_mint: market.mint };
    const code = async (args: InstructionArgs['place_order']) => {
      const { wire } = await signed(sim, w, 'place_order', accounts, args);
      return (rpcError(() => sim.submit(wire)).data as { err: { InstructionError: [number, { Custom: number }] } }).err.InstructionError[1].Custom;
    };
    const base = { side: Side.BuyYes, priceBps: sim.tickSizeBps, quantity: 1_000n, orderType: OrderType.Limit };
    if (sim.tickSizeBps > 1) expect(await code({ ...base, priceBps: sim.tickSizeBps + 1 })).toBe(6001);
    expect(await code({ ...base, quantity: 0n })).toBe(6002);
    expect(await code({ ...base, side: Side.SellYes })).toBe(6003);
    expect(await code({ ...base, side: 9 })).toBe(6009);
    const created = sim.marketAccounts().find((x) => x.state === MarketState.Created)!;
    const early = await signed(sim, w, 'place_order', { ...accounts, market: created.address, settlement_mint: created.mint }, base);
    expect((rpcError(() => sim.submit(early.wire)).data as { err: unknown }).err).toEqual({ InstructionError: [1, { Custom: 6000 }] });
  });
});
