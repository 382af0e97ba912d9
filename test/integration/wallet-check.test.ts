import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AccountRole, address, type Instruction } from '@solana/kit';
import bs58 from 'bs58';
import nacl from 'tweetnacl';
import { COMPUTE_BUDGET_PROGRAM, SYSTEM_PROGRAM } from '../../core/events/builder';
import { IDL } from '../../core/events';
import { buildProgramTransaction, compileWireTransaction, decodeWireTransaction } from '../../core/tx';
import { checkBuiltTransaction, expectedFor, TransactionRefused } from '../../client/src';
import { createWalletClient, plainHttpBeyondLoopback, walletKeyFromBytes } from '../../local/wallet/client';
import { ROOT } from '../support/processes';

const PROGRAM = IDL.address;
const RECENT = { blockhash: 'EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N', lastValidBlockHeight: 100n };
const key = () => {
  const kp = nacl.sign.keyPair();
  return { address: bs58.encode(kp.publicKey), bytes: kp.secretKey };
};
const [market, mint, creator, thief] = [key().address, key().address, key().address, key().address] as const;

/** A transaction of raw instructions, fee payer first (what a hostile API may answer). */
const rawTransaction = (feePayer: string, instructions: Instruction[]): string => compileWireTransaction(feePayer, RECENT, instructions);

/** System Program Transfer (instruction 2) of `lamports` from `from` to `to`. */
const transfer = (from: string, to: string, lamports: bigint): Instruction => {
  const data = new Uint8Array(12);
  const view = new DataView(data.buffer);
  view.setUint32(0, 2, true);
  view.setBigUint64(4, lamports, true);
  return { programAddress: address(SYSTEM_PROGRAM), accounts: [{ address: address(from), role: AccountRole.WRITABLE_SIGNER }, { address: address(to), role: AccountRole.WRITABLE }], data };
};

/** A fake tenant API: `/config`, and `/tx/*` answered by `answer`; the requests it got. */
async function fakeApi(answer: (route: string, wallet: string) => unknown): Promise<{ url: string; server: Server; got: string[] }> {
  const got: string[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    got.push(`${req.method} ${req.url}`);
    req.resume();
    const wallet = String(req.headers['x-wallet-pubkey'] ?? '');
    const body = req.url === '/api/v1/config' ? { programId: PROGRAM, chainId: 'solana-mainnet' } : answer(req.url!.replace('/api/v1/tx/', ''), wallet);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, got };
}

/** A fake chain JSON-RPC that records every call (none may be a sendTransaction). */
async function fakeRpc(): Promise<{ url: string; server: Server; calls: string[] }> {
  const calls: string[] = [];
  const server = createServer((req, res) => {
    let b = '';
    req.on('data', (d: Buffer) => (b += d.toString()));
    req.on('end', () => {
      const { id, method } = JSON.parse(b) as { id: number; method: string };
      calls.push(method);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, result: '1111111111111111111111111111111111111111111111111111111111111111' }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, calls };
}

describe('the wallet checks what /tx/* built before it signs, with the SDK\'s check (issue 41 item 5, D-532)', () => {
  const servers: Server[] = [];
  afterAll(() => servers.forEach((s) => s.close()));

  it('refuses a System Program transfer answered to /tx/claim-payout, signs and sends nothing (the library and the CLI)', async () => {
    const rpc = await fakeRpc();
    const api = await fakeApi((_, wallet) => ({ data: { transaction: rawTransaction(wallet, [transfer(wallet, thief, 5_000_000_000n)]), accounts: { market, settlement_mint: mint } } }));
    servers.push(rpc.server, api.server);
    const me = key();
    const wallet = createWalletClient({ api: api.url, rpc: rpc.url, key: await walletKeyFromBytes(me.bytes) });
    await expect(wallet.send('claim-payout', { market })).rejects.toThrow(
      `refused to sign the transaction the API built: instruction 1 calls the System Program ${SYSTEM_PROGRAM}, not the market program ${PROGRAM}; nothing was signed or sent`,
    );

    // The command a user runs, with a Solana CLI keypair file.
    const dir = mkdtempSync(path.join(tmpdir(), 'wallet-check-'));
    const keypair = path.join(dir, 'id.json');
    writeFileSync(keypair, JSON.stringify([...me.bytes]), { mode: 0o600 });
    const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, ['--import', 'tsx', 'local/wallet/main.ts', 'claim-payout', '--market', market, '--api', api.url, '--rpc', rpc.url, '--keypair', keypair], { cwd: ROOT }, (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
    expect([run.code, run.stdout, run.stderr.trim()]).toEqual([1, '', expect.stringContaining(`instruction 1 calls the System Program ${SYSTEM_PROGRAM}`)]);
    expect(run.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(api.got.filter((r) => r.startsWith('POST'))).toEqual(['POST /api/v1/tx/claim-payout', 'POST /api/v1/tx/claim-payout']);
    expect(rpc.calls).toEqual([]);
  });

  describe('checkBuiltTransaction', () => {
    const me = key().address;
    const genuine = (over: Partial<Parameters<typeof buildProgramTransaction>[0]> = {}) =>
      buildProgramTransaction({ programId: PROGRAM, name: 'place_order', signer: me, accounts: { owner: me, market, settlement_mint: mint }, args: { side: 0, priceBps: 5_000, quantity: 1_000_000n, orderType: 0 }, recent: RECENT, ...over } as never);
    const request = { market, side: 'buy_yes', priceBps: 5_000, quantity: '1000000' };
    /** 'signed' when the wallet would sign it, else the refusal's reason. */
    const check = async (transaction: string, body: Record<string, unknown> = request, route: 'place-order' | 'claim-payout' = 'place-order', answered = { market, settlement_mint: mint }) => {
      try {
        const { expected, given } = expectedFor(route, body, answered);
        await checkBuiltTransaction({ transaction, wallet: me, program: PROGRAM, expected, given });
        return 'signed';
      } catch (e) {
        if (!(e instanceof TransactionRefused)) throw e;
        return e.message.replace(/^refused to sign the transaction the API built: |; nothing was signed or sent$/g, '');
      }
    };

    it('passes the transaction the API builds, with or without a bounded priority fee', async () => {
      expect(await check((await genuine()).transaction)).toBe('signed');
      expect(await check((await genuine({ microLamportsPerCu: 1_000n })).transaction)).toBe('signed');
    });

    it('refuses anything else, naming the instruction', async () => {
      const other = key().address;
      const ix = decodeWireTransaction((await genuine()).transaction).instructions[1]!;
      const programIx = (accounts: string[], data = ix.data, program = PROGRAM): Instruction => ({
        programAddress: address(program),
        accounts: accounts.map((a, i) => ({ address: address(a), role: i === 0 ? AccountRole.WRITABLE_SIGNER : AccountRole.READONLY })),
        data,
      });
      const cases: [string, string, string | RegExp][] = [
        ['another program', rawTransaction(me, [programIx(ix.accounts, ix.data, other)]), `instruction 1 calls program ${other}, not the market program ${PROGRAM}`],
        ['a transfer after the order', rawTransaction(me, [programIx(ix.accounts), transfer(me, thief, 1n)]), `instruction 2 calls the System Program ${SYSTEM_PROGRAM}, not the market program ${PROGRAM}`],
        ['another price', (await genuine({ args: { side: 0, priceBps: 9_900, quantity: 1_000_000n, orderType: 0 } } as never)).transaction, /^instruction 2 \(place_order\) carries arguments \{"side":0,"priceBps":9900/],
        ['another instruction', (await genuine({ name: 'cancel_order', accounts: { owner: me, market }, args: { orderId: 7n } } as never)).transaction, 'instruction 2 is cancel_order of the market program, not the place_order asked for'],
        ['another owner\'s position', rawTransaction(me, [programIx(ix.accounts.map((a, i) => (i === 3 ? other : a)))]), /^instruction 1 \(place_order\) passes \S+ as position, not /],
        ['a second signer', (await genuine({ signer: other, accounts: { owner: other, market, settlement_mint: mint } } as never)).transaction, `its signers are ${other}, not the wallet ${me} alone`],
        ['another market than asked', (await genuine({ accounts: { owner: me, market: other, settlement_mint: mint } } as never)).transaction, `the API built it for market ${other}, the request named ${market}`],
        ['a priority fee of 0.2 SOL', (await genuine({ microLamportsPerCu: 1_000_000_000n })).transaction, 'its priority fee is 200000000 lamports (more than 1000000)'],
        ['a compute-budget heap request', rawTransaction(me, [{ programAddress: address(COMPUTE_BUDGET_PROGRAM), data: Uint8Array.of(1, 0, 0, 1, 0) }, programIx(ix.accounts)]), 'instruction 1 (the compute-budget program) is not one SetComputeUnitLimit or SetComputeUnitPrice (instruction 1)'],
        ['no instruction of the program', rawTransaction(me, [{ programAddress: address(COMPUTE_BUDGET_PROGRAM), data: Uint8Array.of(2, 0, 0, 1, 0) }]), 'it has no place_order instruction of the market program'],
      ];
      for (const [what, tx, refusal] of cases) {
        // The API's answer names the accounts it used; for 'another market' that is not the one asked for.
        const got = await check(tx, request, 'place-order', what === 'another market than asked' ? { market: other, settlement_mint: mint } : undefined);
        expect([what, got]).toEqual([what, typeof refusal === 'string' ? refusal : expect.stringMatching(refusal)]);
      }
      // A claim answered with the market's accounts but a creator's fee claim inside: refused.
      const creatorClaim = await buildProgramTransaction({ programId: PROGRAM, name: 'claim_creator_fees', signer: me, accounts: { caller: me, market, creator, settlement_mint: mint }, args: {}, recent: RECENT });
      expect(await check(creatorClaim.transaction, { market }, 'claim-payout')).toBe('instruction 2 is claim_creator_fees of the market program, not the claim_payout asked for');
    });
  });

  it('advises https for an API beyond this machine', () => {
    expect(['http://api.example.com', 'http://10.0.0.5:3000', 'https://api.example.com', 'http://localhost:3000', 'http://127.0.0.1:3000', 'http://[::1]:3000'].map(plainHttpBeyondLoopback)).toEqual([true, true, false, false, false, false]);
  });
});
