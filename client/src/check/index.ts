import { COMPUTE_BUDGET_PROGRAM, IDL_PROGRAM, INSTRUCTIONS, SIDE_LABELS, TX_ROUTES } from './idl';
import { resolveAccounts, type InstructionName } from './pda';
import { decodeWireMessage, WireFormatError } from './wire';

/**
 * What a client checks in a transaction `/tx/*` built before it signs it (D-281, in the SDK
 * since D-532): the API (or anyone between it and the client over plain http) chooses every
 * byte, and a signature makes all of it the wallet's. Allowed: the compute-budget program's
 * limit and a bounded price, and exactly one instruction of the market program, the one the
 * request names, with the data the request implies and the accounts the IDL derives from it;
 * the wallet the only signer. Anything else is refused naming the instruction.
 */
export { IDL_PROGRAM, TX_ROUTES } from './idl';
export { callerAccounts, derivePda, isOnCurve, resolveAccounts, type InstructionName, type ResolvedAccount } from './pda';
export { decodeWireMessage, WireFormatError, type WireInstruction, type WireMessage } from './wire';

export type TxRoute = keyof typeof TX_ROUTES;

/** A priority fee above this (compute-unit limit × price) is refused: the API never sets one (D-140). */
export const MAX_PRIORITY_FEE_LAMPORTS = 1_000_000n;

/** Programs a built transaction may name only to be refused by name. */
const KNOWN_PROGRAMS: Record<string, string> = {
  '11111111111111111111111111111111': 'the System Program',
  TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA: 'the Token Program',
  TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb: 'the Token-2022 Program',
  ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL: 'the Associated Token Program',
  BPFLoaderUpgradeab1e11111111111111111111111: 'the upgradeable BPF loader',
  Stake11111111111111111111111111111111111111: 'the Stake Program',
  Vote111111111111111111111111111111111111111: 'the Vote Program',
};

export class TransactionRefused extends Error {
  override name = 'TransactionRefused';
  constructor(readonly reason: string) {
    super(`refused to sign the transaction the API built: ${reason}; nothing was signed or sent`);
  }
}

/** An instruction and its arguments (u8/u16 as numbers, u64 as bigint), camel-cased as the IDL's. */
export interface ExpectedInstruction {
  name: InstructionName;
  args: Record<string, number | bigint>;
}

const WIDTH = { u8: 1, u16: 2, u64: 8 } as const;
const discriminator = (name: InstructionName) => Uint8Array.from(INSTRUCTIONS[name].discriminator.match(/../g)!, (h) => parseInt(h, 16));

/** discriminator (8 bytes) + Borsh arguments: an instruction's data. */
export function encodeInstructionData(e: ExpectedInstruction): Uint8Array {
  const def = INSTRUCTIONS[e.name];
  const out = new Uint8Array(8 + def.args.reduce((n, [, t]) => n + WIDTH[t], 0));
  const view = new DataView(out.buffer);
  out.set(discriminator(e.name));
  let at = 8;
  for (const [name, type] of def.args) {
    const v = e.args[name];
    if (type === 'u64') view.setBigUint64(at, BigInt(v ?? 0), true);
    else if (type === 'u16') view.setUint16(at, Number(v ?? 0), true);
    else view.setUint8(at, Number(v ?? 0));
    at += WIDTH[type];
  }
  return out;
}

/** Inverse of encodeInstructionData; undefined for data that is not exactly one of the program's. */
export function decodeInstructionData(data: Uint8Array): ExpectedInstruction | undefined {
  for (const [name, def] of Object.entries(INSTRUCTIONS) as [InstructionName, (typeof INSTRUCTIONS)[InstructionName]][]) {
    if (!discriminator(name).every((b, i) => data[i] === b)) continue;
    if (data.length !== 8 + def.args.reduce((n, [, t]) => n + WIDTH[t], 0)) return undefined;
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    let at = 8;
    const args: Record<string, number | bigint> = {};
    for (const [arg, type] of def.args) {
      args[arg] = type === 'u64' ? view.getBigUint64(at, true) : type === 'u16' ? view.getUint16(at, true) : view.getUint8(at);
      at += WIDTH[type];
    }
    return { name, args };
  }
  return undefined;
}

export interface CheckInput {
  /** The base64 wire transaction `/tx/*` answered. */
  transaction: string;
  wallet: string;
  /** The market program the client signs for (a tenant's PROGRAM_ID). */
  program: string;
  expected: ExpectedInstruction;
  /** Accounts the caller names (callerAccounts) other than the signer. */
  given: Record<string, string>;
}

const programName = (id: string, market: string) => (id === market ? `the market program ${id}` : id === COMPUTE_BUDGET_PROGRAM ? 'the compute-budget program' : `${KNOWN_PROGRAMS[id] ?? 'program'} ${id}`);
const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((x, i) => x === b[i]);
const bigintJson = (_: string, v: unknown) => (typeof v === 'bigint' ? v.toString() : v);
/** The IDL's one signer account of an instruction (owner, referrer, caller). */
const signerName = (name: InstructionName) => INSTRUCTIONS[name].accounts.find((a) => a.signer)!.name;

/** Throws TransactionRefused naming what is wrong; returns when the transaction is the one asked for. */
export async function checkBuiltTransaction(c: CheckInput): Promise<void> {
  let tx: ReturnType<typeof decodeWireMessage>;
  try {
    tx = decodeWireMessage(c.transaction);
  } catch (err) {
    throw new TransactionRefused(err instanceof WireFormatError ? err.message : 'undecodable transaction');
  }
  if (tx.signers.length !== 1 || tx.signers[0] !== c.wallet) throw new TransactionRefused(`its signers are ${tx.signers.join(', ')}, not the wallet ${c.wallet} alone`);
  const expectedAccounts = await resolveAccounts(c.expected.name, c.program, { ...c.given, [signerName(c.expected.name)]: c.wallet });
  const expectedData = encodeInstructionData(c.expected);
  let budget: { limit?: bigint; price?: bigint } = {};
  let programCalls = 0;
  tx.instructions.forEach((ix, i) => {
    const n = i + 1;
    if (ix.programId === COMPUTE_BUDGET_PROGRAM) {
      budget = computeBudget(n, ix.data, ix.accounts, budget);
      return;
    }
    if (ix.programId !== c.program) throw new TransactionRefused(`instruction ${n} calls ${programName(ix.programId, c.program)}, not the market program ${c.program}`);
    const decoded = decodeInstructionData(ix.data);
    const what = decoded ? decoded.name : 'an instruction the IDL does not know';
    if (decoded?.name !== c.expected.name) throw new TransactionRefused(`instruction ${n} is ${what} of the market program, not the ${c.expected.name} asked for`);
    if (!sameBytes(ix.data, expectedData)) throw new TransactionRefused(`instruction ${n} (${what}) carries arguments ${JSON.stringify(decoded.args, bigintJson)}, not the ones asked for`);
    if (++programCalls > 1) throw new TransactionRefused(`instruction ${n} (${what}) repeats the market program's instruction`);
    const got = ix.accounts;
    if (got.length !== expectedAccounts.length) throw new TransactionRefused(`instruction ${n} (${what}) names ${got.length} accounts, the IDL ${expectedAccounts.length}`);
    expectedAccounts.forEach((a, k) => {
      if (got[k] !== a.address) throw new TransactionRefused(`instruction ${n} (${what}) passes ${got[k]} as ${a.name}, not ${a.address}`);
      if (tx.writable.has(a.address) && !a.writable && a.address !== c.wallet) throw new TransactionRefused(`instruction ${n} (${what}) makes ${a.name} writable`);
    });
  });
  if (programCalls === 0) throw new TransactionRefused(`it has no ${c.expected.name} instruction of the market program`);
  const allowed = new Set([c.wallet, c.program, COMPUTE_BUDGET_PROGRAM, ...expectedAccounts.map((a) => a.address)]);
  const extra = tx.staticAccounts.find((k) => !allowed.has(k));
  if (extra !== undefined) throw new TransactionRefused(`it names account ${extra}, which ${c.expected.name} does not use`);
  const fee = ((budget.limit ?? 1_400_000n) * (budget.price ?? 0n)) / 1_000_000n;
  if (fee > MAX_PRIORITY_FEE_LAMPORTS) throw new TransactionRefused(`its priority fee is ${fee} lamports (more than ${MAX_PRIORITY_FEE_LAMPORTS})`);
}

/** SetComputeUnitLimit (2, u32) and SetComputeUnitPrice (3, u64), each at most once; nothing else of that program. */
function computeBudget(n: number, data: Uint8Array, accounts: string[], b: { limit?: bigint; price?: bigint }) {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const refuse = (what: string) => new TransactionRefused(`instruction ${n} (the compute-budget program) ${what}`);
  if (accounts.length) throw refuse('names accounts');
  if (data[0] === 2 && data.length === 5 && b.limit === undefined) return { ...b, limit: BigInt(view.getUint32(1, true)) };
  if (data[0] === 3 && data.length === 9 && b.price === undefined) return { ...b, price: view.getBigUint64(1, true) };
  throw refuse(`is not one SetComputeUnitLimit or SetComputeUnitPrice (instruction ${data[0] ?? 'empty'})`);
}

const BASE58_ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

/**
 * The instruction a request body implies, and the caller accounts to derive the rest from: what
 * the request names itself (a market address, a mint) wins, and the API's answer must agree;
 * the rest (a market given by id, its mint and creator) is the API's `accounts` answer.
 */
export function expectedFor(route: TxRoute, body: Record<string, unknown>, answered: Record<string, string>): { expected: ExpectedInstruction; given: Record<string, string> } {
  const name = TX_ROUTES[route];
  if (name === undefined) throw new TransactionRefused(`${String(route)} is not a /tx route`);
  const given: Record<string, string> = {};
  for (const a of INSTRUCTIONS[name].accounts) if (!a.signer && a.address === undefined && a.seeds === undefined) given[a.name] = answered[a.name] ?? '';
  const named = (account: string, value: unknown) => {
    if (typeof value !== 'string' || !BASE58_ADDRESS.test(value)) return;
    if (given[account] !== value) throw new TransactionRefused(`the API built it for ${account} ${given[account] || '(none)'}, the request named ${value}`);
  };
  if (route === 'claim-referral') {
    given.settlement_mint = answered.settlement_mint ?? String(body.settlementMint);
    named('settlement_mint', body.settlementMint);
  } else named('market', body.market);
  const missing = Object.keys(given).find((k) => !given[k]);
  if (missing) throw new TransactionRefused(`the API's answer does not name the account ${missing}`);
  switch (name) {
    case 'place_order':
      return { given, expected: { name, args: { side: SIDE_LABELS.indexOf(body.side as (typeof SIDE_LABELS)[number]), priceBps: Number(body.priceBps), quantity: BigInt(String(body.quantity)), orderType: Number(body.orderType ?? 0) } } };
    case 'cancel_order':
      return { given, expected: { name, args: { orderId: BigInt(String(body.orderId)) } } };
    default:
      return { given, expected: { name, args: {} } };
  }
}

/** The check `/tx` runs unless given another: the transaction is the instruction the request asked for, of `program`. */
export const marketProgramCheck =
  (program: string = IDL_PROGRAM) =>
  async (built: { name: TxRoute; body: Record<string, unknown>; transaction: string; accounts: Record<string, string>; wallet: string }): Promise<void> => {
    const { expected, given } = expectedFor(built.name, built.body, built.accounts);
    await checkBuiltTransaction({ transaction: built.transaction, wallet: built.wallet, program, expected, given });
  };
