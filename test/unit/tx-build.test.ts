import { createHash, randomBytes } from 'node:crypto';
import { getProgramDerivedAddress, address, isOffCurveAddress } from '@solana/addresses';
import bs58 from 'bs58';
import nacl from 'tweetnacl';
import { COMPUTE_BUDGET_PROGRAM, EVENT_KINDS, IDL } from '../../core/events';
import {
  anchorInstructionDiscriminator,
  buildProgramTransaction,
  callerAccounts,
  COMPUTE_UNIT_LIMITS,
  decodeInstructionData,
  decodeWireTransaction,
  derivePda,
  derivePdaSync,
  deriveAccountSync,
  encodeInstructionData,
  INSTRUCTION_EVENTS,
  INSTRUCTION_NAMES,
  instructionDef,
  isOnCurve,
  resolveAccounts,
} from '../../core/tx';
import { signWireTransaction } from '../support/tx';

const PROGRAM = IDL.address;
const key = () => nacl.sign.keyPair();
const addr = (k: nacl.SignKeyPair) => bs58.encode(k.publicKey);
const someAddress = () => bs58.encode(randomBytes(32));
const recent = { blockhash: bs58.encode(createHash('sha256').update('bh').digest()), lastValidBlockHeight: 1234n };

describe('program instructions in the IDL', () => {
  it('declares the five instructions with Anchor discriminators sha256("global:<name>")[0..8]', () => {
    const raw = (IDL as unknown as { instructions: { name: string; discriminator: number[] }[] }).instructions;
    expect(raw.map((i) => i.name).sort()).toEqual([...INSTRUCTION_NAMES].sort());
    for (const i of raw) expect(Buffer.from(i.discriminator)).toEqual(Buffer.from(anchorInstructionDiscriminator(i.name)));
  });

  it('emits only declared events, and every instruction has exactly one signer', () => {
    for (const n of INSTRUCTION_NAMES) {
      for (const k of INSTRUCTION_EVENTS[n]) expect(EVENT_KINDS).toContain(k);
      expect(instructionDef(n).accounts.filter((a) => a.signer)).toHaveLength(1);
    }
  });

  it('round-trips instruction data and refuses trailing bytes or foreign discriminators', () => {
    const data = encodeInstructionData('place_order', { side: 2, priceBps: 4_500, quantity: 3_000_000n, orderType: 1 });
    expect(data.length).toBe(8 + 1 + 2 + 8 + 1);
    expect(decodeInstructionData(data)).toEqual({ name: 'place_order', args: { side: 2, priceBps: 4_500, quantity: 3_000_000n, orderType: 1 } });
    expect(decodeInstructionData(Uint8Array.from([...data, 0]))).toBeUndefined();
    expect(decodeInstructionData(encodeInstructionData('claim_payout', {}))).toEqual({ name: 'claim_payout', args: {} });
    const other = Uint8Array.from(data);
    other[0] = other[0]! ^ 1;
    expect(decodeInstructionData(other)).toBeUndefined();
  });
});

describe('program-derived addresses', () => {
  it('isOnCurve agrees with kit on random bytes and on real public keys', () => {
    for (let i = 0; i < 300; i++) {
      const b = randomBytes(32);
      expect(isOnCurve(b)).toBe(!isOffCurveAddress(address(bs58.encode(b))));
    }
    for (let i = 0; i < 20; i++) expect(isOnCurve(key().publicKey)).toBe(true);
  });

  it('derivePdaSync agrees with kit getProgramDerivedAddress (and derivePda) on random seeds', async () => {
    for (let i = 0; i < 40; i++) {
      const seeds = [Buffer.from('position'), randomBytes(32), randomBytes(32)];
      const [kit] = await getProgramDerivedAddress({ programAddress: address(PROGRAM), seeds });
      expect(derivePdaSync(PROGRAM, seeds)).toBe(kit);
      expect(await derivePda(PROGRAM, seeds)).toBe(kit);
    }
  });

  it('derives the associated token account a wallet really has (known mainnet USDC ATA)', async () => {
    // A published ATA: wallet 9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM, USDC mint.
    const accounts = await resolveAccounts('claim_payout', PROGRAM, {
      owner: '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM',
      market: someAddress(),
      settlement_mint: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
    });
    const ata = accounts.find((a) => a.name === 'owner_token_account')!.address;
    const [expected] = await getProgramDerivedAddress({
      programAddress: address('ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL'),
      seeds: [
        bs58.decode('9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM'),
        bs58.decode('TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA'),
        bs58.decode('EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v'),
      ],
    });
    expect(ata).toBe(expected);
  });

  it('uses the tenant program id, not the IDL address, for PDAs and the program account', async () => {
    const other = someAddress();
    const given = { owner: someAddress(), market: someAddress() };
    const a = await resolveAccounts('cancel_order', PROGRAM, given);
    const b = await resolveAccounts('cancel_order', other, given);
    expect(a.find((x) => x.name === 'position')!.address).not.toBe(b.find((x) => x.name === 'position')!.address);
    expect(b.find((x) => x.name === 'program')!.address).toBe(other);
    expect(b.find((x) => x.name === 'position')!.address).toBe(deriveAccountSync('cancel_order', 'position', other, given));
  });

  it('names the accounts a caller must give, and refuses to build without them', async () => {
    expect(callerAccounts('place_order')).toEqual(['owner', 'market', 'settlement_mint']);
    expect(callerAccounts('claim_creator_fees')).toEqual(['caller', 'market', 'creator', 'settlement_mint']);
    await expect(resolveAccounts('place_order', PROGRAM, { owner: someAddress() })).rejects.toThrow(/needs account market/);
  });
});

describe('buildProgramTransaction', () => {
  it('builds an unsigned v0 transaction: compute budget, then the instruction with derived accounts', async () => {
    const wallet = key();
    const owner = addr(wallet);
    const market = someAddress();
    const mint = someAddress();
    const built = await buildProgramTransaction({
      programId: PROGRAM,
      name: 'place_order',
      signer: owner,
      accounts: { owner, market, settlement_mint: mint },
      args: { side: 0, priceBps: 5_100, quantity: 1_000_000n, orderType: 0 },
      recent,
    });
    expect(built.blockhash).toBe(recent.blockhash);
    expect(built.lastValidBlockHeight).toBe('1234');
    const tx = decodeWireTransaction(built.transaction);
    expect(tx.version).toBe(0);
    expect(tx.feePayer).toBe(owner);
    expect(tx.signers).toEqual([owner]);
    expect(tx.signatures).toEqual([null]);
    expect(tx.fullySignedAndValid).toBe(false);
    expect(tx.blockhash).toBe(recent.blockhash);
    expect(tx.instructions).toHaveLength(2);
    const [budget, ix] = tx.instructions;
    expect(budget!.programId).toBe(COMPUTE_BUDGET_PROGRAM);
    expect(budget!.data[0]).toBe(2);
    expect(Buffer.from(budget!.data).readUInt32LE(1)).toBe(COMPUTE_UNIT_LIMITS.place_order);
    expect(ix!.programId).toBe(PROGRAM);
    expect(decodeInstructionData(ix!.data)).toEqual({ name: 'place_order', args: { side: 0, priceBps: 5_100, quantity: 1_000_000n, orderType: 0 } });
    const names = instructionDef('place_order').accounts.map((a) => a.name);
    expect(ix!.accounts).toEqual(names.map((n) => built.accounts[n]));
    expect(built.accounts.position).toBe(derivePdaSync(PROGRAM, [Buffer.from('position'), bs58.decode(market), bs58.decode(owner)]));
    expect(built.accounts.event_authority).toBe(derivePdaSync(PROGRAM, [Buffer.from('__event_authority')]));
    // Writability follows the IDL: the market and position are written, the mint is not.
    expect(tx.writable.has(market)).toBe(true);
    expect(tx.writable.has(built.accounts.position!)).toBe(true);
    expect(tx.writable.has(mint)).toBe(false);
    expect(tx.writable.has(PROGRAM)).toBe(false);
  });

  it('adds SetComputeUnitPrice when a priority fee is asked', async () => {
    const owner = addr(key());
    const built = await buildProgramTransaction({
      programId: PROGRAM, name: 'cancel_order', signer: owner, accounts: { owner, market: someAddress() }, args: { orderId: 77n }, recent, microLamportsPerCu: 5_000n,
    });
    const tx = decodeWireTransaction(built.transaction);
    expect(tx.instructions.map((i) => i.programId)).toEqual([COMPUTE_BUDGET_PROGRAM, COMPUTE_BUDGET_PROGRAM, PROGRAM]);
    expect([tx.instructions[0]!.data[0], tx.instructions[1]!.data[0]]).toEqual([2, 3]);
    expect(Buffer.from(tx.instructions[1]!.data).readBigUInt64LE(1)).toBe(5_000n);
    expect(decodeInstructionData(tx.instructions[2]!.data)).toEqual({ name: 'cancel_order', args: { orderId: 77n } });
  });

  it('refuses a signer other than the instruction signer account', async () => {
    const owner = addr(key());
    await expect(
      buildProgramTransaction({ programId: PROGRAM, name: 'claim_payout', signer: someAddress(), accounts: { owner, market: someAddress(), settlement_mint: someAddress() }, args: {}, recent }),
    ).rejects.toThrow(/signer/);
  });

  it("a wallet's signature over the built message verifies; a signature by another key or over changed bytes does not", async () => {
    const wallet = key();
    const owner = addr(wallet);
    const built = await buildProgramTransaction({
      programId: PROGRAM, name: 'claim_referral', signer: owner, accounts: { referrer: owner, settlement_mint: someAddress() }, args: {}, recent,
    });
    const signed = signWireTransaction(built.transaction, wallet.secretKey);
    const tx = decodeWireTransaction(signed);
    expect(tx.fullySignedAndValid).toBe(true);
    expect(tx.signatures[0]).toMatch(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
    // Another key's signature in the owner's slot.
    const forged = Buffer.from(signed, 'base64');
    forged.set(nacl.sign.detached(Uint8Array.from(forged.subarray(65)), key().secretKey), 1);
    expect(decodeWireTransaction(forged.toString('base64')).fullySignedAndValid).toBe(false);
    // One byte of the message changed after signing: the instruction data's last byte (the
    // very last byte is the lookup-table count).
    const tampered = Buffer.from(signed, 'base64');
    tampered[tampered.length - 2] = tampered[tampered.length - 2]! ^ 1;
    expect(decodeWireTransaction(tampered.toString('base64')).fullySignedAndValid).toBe(false);
  });
});
