import { randomBytes } from 'node:crypto';
import bs58 from 'bs58';
import { IDL } from '../../core/events';
import { buildProgramTransaction, decodeWireTransaction, encodeInstructionData as coreEncode, INSTRUCTION_NAMES, isOnCurve as coreIsOnCurve, resolveAccounts as coreResolve, callerAccounts as coreCallers } from '../../core/tx';
import { callerAccounts, decodeWireMessage, encodeInstructionData, expectedFor, IDL_PROGRAM, isOnCurve, resolveAccounts } from '../../client/src/check';

/**
 * The SDK's transaction check (D-532) holds the program's facts in a file generated from the
 * service's IDL (client/src/check/idl.ts, kept current by the generated-files test) and
 * derives, decodes and encodes with its own browser-safe code: here each is held to the
 * service's own (core/tx, built on @solana/kit and node:crypto) on the same inputs.
 */
const key = () => bs58.encode(randomBytes(32));

describe("the SDK's transaction check agrees with the service's builder", () => {
  it('names the IDL program and the same caller accounts for every instruction', () => {
    expect(IDL_PROGRAM).toBe(IDL.address);
    for (const name of INSTRUCTION_NAMES) expect([name, callerAccounts(name).map((a) => a.name)]).toEqual([name, coreCallers(name)]);
  });

  it('derives every account of every instruction as the builder does, under the IDL program and another', async () => {
    for (const program of [IDL.address, key()])
      for (const name of INSTRUCTION_NAMES) {
        const given = Object.fromEntries(coreCallers(name).map((n) => [n, key()]));
        expect(await resolveAccounts(name, program, given)).toEqual(await coreResolve(name, program, given));
      }
  });

  it('tells curve points from program addresses as the builder does', () => {
    const samples = Array.from({ length: 300 }, () => new Uint8Array(randomBytes(32)));
    // Public keys are points; SHA-256 outputs are about half points, half not.
    samples.push(...Array.from({ length: 20 }, () => new Uint8Array(bs58.decode(key()))));
    const verdicts = samples.map((b) => isOnCurve(b));
    expect(verdicts).toEqual(samples.map((b) => coreIsOnCurve(b)));
    expect(new Set(verdicts)).toEqual(new Set([true, false]));
  });

  it('encodes the instruction data a request implies as the builder does', () => {
    const market = key();
    const { expected } = expectedFor('place-order', { market, side: 'sell_no', priceBps: 4321, quantity: '18446744073709551615', orderType: 2 }, { market, settlement_mint: key() });
    expect([...encodeInstructionData(expected)]).toEqual([...coreEncode('place_order', { side: 3, priceBps: 4321, quantity: 18446744073709551615n, orderType: 2 })]);
    const cancel = expectedFor('cancel-order', { market, orderId: '77' }, { market }).expected;
    expect([...encodeInstructionData(cancel)]).toEqual([...coreEncode('cancel_order', { orderId: 77n })]);
  });

  it('reads a built transaction as kit reads it: signers, accounts, writable ones, instructions', async () => {
    const owner = key();
    const built = await buildProgramTransaction({ programId: IDL.address, name: 'place_order', signer: owner, accounts: { owner, market: key(), settlement_mint: key() }, args: { side: 0, priceBps: 5000, quantity: 1n, orderType: 0 }, recent: { blockhash: key(), lastValidBlockHeight: 9n }, microLamportsPerCu: 5n });
    const core = decodeWireTransaction(built.transaction);
    const mine = decodeWireMessage(built.transaction);
    expect(mine).toEqual({ signers: core.signers, staticAccounts: core.staticAccounts, writable: core.writable, instructions: core.instructions });
    expect(mine.instructions).toHaveLength(3);
  });

  it('refuses bytes that are not a whole transaction, naming where they end', () => {
    expect(() => decodeWireMessage('AQ==')).toThrow('undecodable transaction: it ends inside the signatures');
    expect(() => decodeWireMessage('not base64!')).toThrow('not base64');
  });
});
