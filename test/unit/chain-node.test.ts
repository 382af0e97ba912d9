import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import nacl from 'tweetnacl';
import bs58 from 'bs58';
import { MarketState, OrderType, Side } from '../../core/domain';
import { IDL } from '../../core/events';
import { buildProgramTransaction } from '../../core/tx';
import type { Block } from '../../simulator/simulation';
import { GenesisMismatchError, openChainNode, type ChainNode } from '../../simulator/node';
import { signWireTransaction } from '../support/tx';

const PROGRAM = IDL.address;
const GENESIS_MS = Date.UTC(2026, 10, 1) + 0;

async function rpc(url: string, method: string, params: unknown[] = []) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return (await res.json()) as { result?: any; error?: { code: number; message: string } }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** A wallet's signed place_order on the first trading market, as any wallet would send it. */
async function placeOrder(node: ChainNode, w: { address: string; secretKey: Uint8Array }): Promise<string> {
  const m = node.simulator.marketAccounts().find((x) => x.state === MarketState.Trading)!;
  const r = node.simulator.latestBlockhash();
  const built = await buildProgramTransaction({
    programId: PROGRAM, name: 'place_order', signer: w.address,
    accounts: { owner: w.address, market: m.address, settlement_mint: m.mint },
    args: { side: Side.BuyYes, priceBps: node.simulator.tickSizeBps * 2, quantity: 1_000_000n, orderType: OrderType.Limit },
    recent: { blockhash: r.blockhash, lastValidBlockHeight: BigInt(r.lastValidBlockHeight) },
  });
  return signWireTransaction(built.transaction, w.secretKey);
}

const digest = (blocks: Block[]) => blocks.flatMap((b) => b.transactions.map((t) => JSON.stringify(t)));

describe('the simulated chain as a node: one chain across restarts, its history bounded', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(path.join(os.tmpdir(), 'mi-chain-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('rebuilds the same chain after a restart, wallets\' transactions included in the slots they ran in', async () => {
    let clock = GENESIS_MS;
    const first = openChainNode({ programId: PROGRAM, dataDir: dir, seed: 7, epochSeconds: 30, now: () => clock });
    const blocks: Block[] = [];
    while (!first.simulator.marketAccounts().some((m) => m.state === MarketState.Trading)) blocks.push(first.produce());
    const k = nacl.sign.keyPair();
    const w = { address: bs58.encode(k.publicKey), secretKey: k.secretKey };
    const endpoints = await first.rpc.listen();
    const sent = await rpc(endpoints.url, 'sendTransaction', [await placeOrder(first, w), { encoding: 'base64' }]);
    expect(sent.error).toBeUndefined();
    for (let i = 0; i < 30; i++) blocks.push(first.produce());
    const ran = blocks.find((b) => b.transactions.some((t) => t.transaction.signatures[0] === sent.result))!;
    expect(ran.transactions.find((t) => t.transaction.signatures[0] === sent.result)!.meta!.err).toBeNull();
    expect(JSON.parse(readFileSync(path.join(dir, 'submitted.jsonl'), 'utf8').trim())).toMatchObject({ slot: ran.slot });
    await first.close();

    // Later, on the same folder: the same genesis, and block for block the same transactions.
    clock += 3_600_000;
    const second = openChainNode({ programId: PROGRAM, dataDir: dir, now: () => clock });
    expect(second.genesis).toEqual(first.genesis);
    const rebuilt = blocks.map(() => second.produce());
    expect(digest(rebuilt)).toEqual(digest(blocks));
    expect(second.replayStats()).toEqual({ replayed: 1, failed: 0, pending: 0 });
    await second.close();
  });

  it('refuses a data folder that holds a chain of another shape', () => {
    openChainNode({ programId: PROGRAM, dataDir: dir, seed: 3 });
    expect(() => openChainNode({ programId: PROGRAM, dataDir: dir, seed: 4 })).toThrow(GenesisMismatchError);
    expect(() => openChainNode({ programId: PROGRAM, dataDir: dir, seed: 4 })).toThrow('the data folder holds a chain with seed 3; start with --fresh to change it');
  });

  it('keeps historySlots of history, like a pruned RPC node, and says behind until it reaches the wall clock', async () => {
    let clock = GENESIS_MS;
    const node = openChainNode({ programId: PROGRAM, seed: 2, epochSeconds: 30, historySlots: 100, now: () => clock });
    const { url } = await node.rpc.listen();
    const health = async () => {
      const r = await fetch(`${url}/health`);
      return [r.status, await r.text()];
    };
    // The genesis lies two epochs back: 150 slots are owed to the wall clock.
    expect(node.dueSlot()).toBe(151);
    expect(await health()).toEqual([503, 'behind']);
    const blocks: Block[] = [];
    for (let i = 0; i < 151; i++) blocks.push(node.produce());
    expect(await health()).toEqual([200, 'ok']);
    clock += 400 * 400;
    for (let i = 0; i < 400; i++) blocks.push(node.produce());

    const oldest = blocks.find((b) => b.transactions.length)!.transactions[0]!.transaction.signatures[0]!;
    expect((await rpc(url, 'getTransaction', [oldest, { maxSupportedTransactionVersion: 0 }])).result).toBeNull();
    const listed = (await rpc(url, 'getSignaturesForAddress', [PROGRAM, { limit: 1000 }])).result as { slot: number }[];
    const slots = listed.map((s) => s.slot);
    // Kept: the last 100 slots, trimmed in steps of a tenth, so at most 110.
    expect(Math.min(...slots)).toBeGreaterThan(node.simulator.slot - 111);
    expect(Math.max(...slots)).toBe(blocks.filter((b) => b.transactions.length).at(-1)!.slot);
    const newest = blocks.at(-1)!.transactions[0] ?? blocks.filter((b) => b.transactions.length).at(-1)!.transactions[0]!;
    const got = await rpc(url, 'getTransaction', [newest.transaction.signatures[0], { maxSupportedTransactionVersion: 0 }]);
    expect(got.result).toEqual(JSON.parse(JSON.stringify(newest)));
    await node.close();
  });
});
