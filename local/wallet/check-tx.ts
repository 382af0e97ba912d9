import { COMPUTE_BUDGET_PROGRAM, SYSTEM_PROGRAM } from '../../core/events/builder';
import { IDL } from '../../core/events/codec';
import { SIDE_LABELS, type SideLabel } from '../../core/domain';
import { decodeInstructionData, decodeWireTransaction, encodeInstructionData, instructionDef, resolveAccounts, WireTransactionError, type InstructionArgs, type InstructionName } from '../../core/tx';

/**
 * What the wallet checks in a transaction `/tx/*` built before it signs it (issue 41, D-281):
 * the API (or anyone between it and the wallet over plain http) chooses every byte of it, and
 * a signature makes all of it the wallet's. Allowed: the compute-budget program's limit and a
 * bounded price, and exactly one instruction of the market program, the one the request names,
 * with the data the request implies and the accounts the IDL derives from it; the wallet the
 * only signer. Anything else is refused naming the instruction; nothing is signed.
 */

/** The market program the wallet trusts unless told another (`--program`): the one the spec's IDL names. */
export const DEFAULT_MARKET_PROGRAM = IDL.address;

/** A priority fee above this (compute-unit limit × price) is refused: the API never sets one (D-140). */
export const MAX_PRIORITY_FEE_LAMPORTS = 1_000_000n;

/** Programs a built transaction may name only to be refused by name. */
const KNOWN_PROGRAMS: Record<string, string> = {
  [SYSTEM_PROGRAM]: 'the System Program',
  TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA: 'the Token Program',
  TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb: 'the Token-2022 Program',
  ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL: 'the Associated Token Program',
  BPFLoaderUpgradeab1e11111111111111111111111: 'the upgradeable BPF loader',
  Stake11111111111111111111111111111111111111: 'the Stake Program',
  Vote111111111111111111111111111111111111111: 'the Vote Program',
};

export class TransactionRefused extends Error {
  override name = 'TransactionRefused';
  constructor(reason: string) {
    super(`refused to sign the transaction the API built: ${reason}; nothing was signed or sent`);
  }
}

/** What the wallet asked `/tx/<route>` for, as the instruction it implies. */
export type ExpectedInstruction = { [N in InstructionName]: { name: N; args: InstructionArgs[N] } }[InstructionName];

export interface CheckInput {
  /** The base64 wire transaction `/tx/*` answered. */
  transaction: string;
  wallet: string;
  program: string;
  expected: ExpectedInstruction;
  /**
   * Accounts the caller names (`callerAccounts`) other than the wallet: from the request where it
   * names them (a market address, a mint), else the API's `accounts` answer (a market's mint
   * and creator come from its index).
   */
  given: Record<string, string>;
}

const programName = (id: string, market: string) => (id === market ? `the market program ${id}` : id === COMPUTE_BUDGET_PROGRAM ? 'the compute-budget program' : `${KNOWN_PROGRAMS[id] ?? 'program'} ${id}`);

/** Throws TransactionRefused naming what is wrong; returns when the transaction is the one asked for. */
export async function checkBuiltTransaction(c: CheckInput): Promise<void> {
  let tx: ReturnType<typeof decodeWireTransaction>;
  try {
    tx = decodeWireTransaction(c.transaction);
  } catch (err) {
    throw new TransactionRefused(err instanceof WireTransactionError ? err.message : 'undecodable transaction');
  }
  if (tx.signers.length !== 1 || tx.signers[0] !== c.wallet) throw new TransactionRefused(`its signers are ${tx.signers.join(', ')}, not the wallet ${c.wallet} alone`);
  const expectedAccounts = await resolveAccounts(c.expected.name, c.program, { ...c.given, [signerName(c.expected.name)]: c.wallet });
  const expectedData = encodeInstructionData(c.expected.name, c.expected.args as never);
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
    if (Buffer.compare(Buffer.from(ix.data), Buffer.from(expectedData)) !== 0) throw new TransactionRefused(`instruction ${n} (${what}) carries arguments ${JSON.stringify(decoded.args, bigintJson)}, not the ones asked for`);
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

/** The IDL's one signer account of an instruction (owner, referrer, caller). */
const signerName = (name: InstructionName) => instructionDef(name).accounts.find((a) => a.signer)!.name;

/** The `/tx/<route>` routes the wallet calls and their instructions (server/routes/tx.ts `TX_ROUTES`). */
const ROUTES = { 'place-order': 'place_order', 'cancel-order': 'cancel_order', 'claim-payout': 'claim_payout', 'claim-referral': 'claim_referral', 'claim-creator-fees': 'claim_creator_fees' } as const;
export type TxRoute = keyof typeof ROUTES;

const BASE58_ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

/**
 * The instruction a request body implies, and the caller accounts to derive the rest from: what
 * the request names itself (a market address, a mint) wins, and the API's answer must agree;
 * the rest (a market given by id, its mint and creator) is the API's `accounts` answer.
 */
export function expectedFor(route: TxRoute, body: Record<string, unknown>, answered: Record<string, string>): { expected: ExpectedInstruction; given: Record<string, string> } {
  const name = ROUTES[route];
  const given: Record<string, string> = {};
  for (const a of instructionDef(name).accounts) if (!a.signer && a.address === undefined && a.pda === undefined) given[a.name] = answered[a.name] ?? '';
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
      return { given, expected: { name, args: { side: SIDE_LABELS.indexOf(body.side as SideLabel), priceBps: Number(body.priceBps), quantity: BigInt(String(body.quantity)), orderType: Number(body.orderType ?? 0) } } };
    case 'cancel_order':
      return { given, expected: { name, args: { orderId: BigInt(String(body.orderId)) } } };
    case 'claim_payout':
    case 'claim_referral':
    case 'claim_creator_fees':
      return { given, expected: { name, args: {} } };
  }
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

const bigintJson = (_: string, v: unknown) => (typeof v === 'bigint' ? v.toString() : v);

/** An `http://` URL to anything but this machine: the API's answers can be read and changed on the way. */
export function plainHttpBeyondLoopback(url: string): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  return u.protocol === 'http:' && !['localhost', '[::1]'].includes(u.hostname) && !/^127\./.test(u.hostname);
}
