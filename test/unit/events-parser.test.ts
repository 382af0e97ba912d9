import bs58 from 'bs58';
import fc from 'fast-check';
import {
  buildTransaction,
  decodeBase64Strict,
  encodeEvent,
  EVENT_IX_TAG,
  IDL,
  parseTransaction,
  TransactionShapeError,
  type ProgramEvent,
  type RawTransaction,
} from '../../core/events';

const PROGRAM = IDL.address;
const TOKEN = 'TokenkegQfeZyiNwAJbNbGqPFXCwuWvG8hYmmQ3gAoF';
const ROUTER = 'JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4';
const SIGNER = '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin';
const AUTHORITY = 'Ev1Authority1111111111111111111111111111111';
const SIG = '5h6xBEauJ3PK6SWCZ1PGjBvj8vDdWG3KpwATGy1ARAXFSDwt8GFXM7W5Ncn16wmqokgpiKRLuS83KUxyZyv2sUYv';

const placed = (orderId: bigint): ProgramEvent => ({
  kind: 'OrderPlaced',
  data: { market: PROGRAM, orderId, owner: SIGNER, side: 0, priceBps: 5500, quantity: 1_000_000n, orderType: 0 },
});
const tick = (tickSizeBps: number): ProgramEvent => ({ kind: 'TickSizeChanged', data: { tickSizeBps } });
const b64 = (e: ProgramEvent) => Buffer.from(encodeEvent(e)).toString('base64');
const cpiData = (e: ProgramEvent) => bs58.encode(Buffer.concat([Buffer.from(EVENT_IX_TAG), Buffer.from(encodeEvent(e))]));

/** A transaction shell around hand-written logs and inner instructions. */
type InnerGroups = NonNullable<NonNullable<RawTransaction['meta']>['innerInstructions']>;

function tx(logs: string[] | null, inner: InnerGroups = [], extra: Partial<RawTransaction> = {}): RawTransaction {
  return {
    slot: 250_000_123,
    blockTime: 1_763_700_000,
    version: 0,
    transaction: {
      signatures: [SIG],
      message: {
        accountKeys: [SIGNER, AUTHORITY, PROGRAM, TOKEN, ROUTER],
        instructions: [{ programIdIndex: 2, accounts: [0, 1], data: '3Bxs4h24hBtQy9rw', stackHeight: null }],
      },
    },
    meta: { err: null, logMessages: logs, innerInstructions: inner, loadedAddresses: { writable: [], readonly: [] } },
    ...extra,
  };
}

describe('parseTransaction', () => {
  it('reads `Program data:` events in order with their indexes', () => {
    const raw = buildTransaction({
      programId: PROGRAM, signature: SIG, slot: 7, blockTime: 1_763_700_000, signer: SIGNER,
      eventAuthority: AUTHORITY, instructionName: 'PlaceOrder', events: [placed(1n), placed(2n), tick(50)],
    });
    const p = parseTransaction(raw, PROGRAM);
    expect(p).toMatchObject({ signature: SIG, slot: 7, blockTime: 1_763_700_000, failed: false, truncated: false, invalid: [] });
    expect(p.events.map((e) => [e.index, e.via, e.event.kind])).toEqual([
      [0, 'log', 'OrderPlaced'],
      [1, 'log', 'OrderPlaced'],
      [2, 'log', 'TickSizeChanged'],
    ]);
    expect(p.events[1]?.event).toEqual(placed(2n));
  });

  it('reads emit_cpi events from inner instructions', () => {
    const raw = buildTransaction({
      programId: PROGRAM, signature: SIG, slot: 7, blockTime: null, signer: SIGNER, eventAuthority: AUTHORITY,
      instructionName: 'PlaceOrder', events: [placed(1n), tick(25)], via: 'cpi',
    });
    const p = parseTransaction(raw, PROGRAM);
    expect(p.blockTime).toBeNull();
    expect(p.events.map((e) => [e.index, e.via, e.event])).toEqual([
      [0, 'cpi', placed(1n)],
      [1, 'cpi', tick(25)],
    ]);
  });

  it('interleaves log and emit_cpi events in execution order and ignores other programs', () => {
    const logs = [
      'Program ComputeBudget111111111111111111111111111111 invoke [1]',
      'Program ComputeBudget111111111111111111111111111111 success',
      `Program ${PROGRAM} invoke [1]`,
      'Program log: Instruction: PlaceOrder',
      `Program data: ${b64(placed(1n))}`,
      `Program ${TOKEN} invoke [2]`,
      'Program log: Instruction: TransferChecked',
      // Another program's data line, even one carrying our discriminator, is not our event.
      `Program data: ${b64(placed(666n))}`,
      `Program ${TOKEN} consumed 6200 of 181234 compute units`,
      `Program ${TOKEN} success`,
      `Program ${PROGRAM} invoke [2]`,
      `Program ${PROGRAM} consumed 1100 of 170000 compute units`,
      `Program ${PROGRAM} success`,
      `Program data: ${b64(tick(10))}`,
      `Program ${PROGRAM} consumed 40211 of 200000 compute units`,
      `Program return: ${PROGRAM} AQ==`,
      `Program ${PROGRAM} success`,
    ];
    // Our instruction is the second top-level one (after the compute-budget one).
    const inner = [
      {
        index: 1,
        instructions: [
          { programIdIndex: 3, accounts: [0], data: '3Dc8EpW7Kr3R', stackHeight: 2 },
          { programIdIndex: 2, accounts: [1], data: cpiData(placed(2n)), stackHeight: 2 },
        ],
      },
    ];
    const p = parseTransaction(tx(logs, inner), PROGRAM);
    expect(p.events.map((e) => [e.index, e.via, e.event])).toEqual([
      [0, 'log', placed(1n)],
      [1, 'cpi', placed(2n)],
      [2, 'log', tick(10)],
    ]);
  });

  it('counts events of our program when another program invokes it', () => {
    const logs = [
      `Program ${ROUTER} invoke [1]`,
      `Program data: ${b64(placed(9n))}`,
      `Program ${PROGRAM} invoke [2]`,
      `Program data: ${b64(placed(1n))}`,
      `Program ${PROGRAM} success`,
      `Program ${ROUTER} success`,
    ];
    const inner = [{ index: 0, instructions: [{ programIdIndex: 2, accounts: [0], data: '1', stackHeight: 2 }] }];
    const p = parseTransaction(tx(logs, inner), PROGRAM);
    expect(p.events.map((e) => e.event)).toEqual([placed(1n)]);
  });

  it('skips failed transactions entirely', () => {
    const raw = buildTransaction({
      programId: PROGRAM, signature: SIG, slot: 7, blockTime: 1, signer: SIGNER, eventAuthority: AUTHORITY,
      instructionName: 'PlaceOrder', events: [placed(1n)], err: { InstructionError: [1, { Custom: 6001 }] },
    });
    const p = parseTransaction(raw, PROGRAM);
    expect(p.failed).toBe(true);
    expect(p.events).toEqual([]);
  });

  it('detects `Log truncated`, keeps what came before and still reads later emit_cpi events', () => {
    const logs = [
      `Program ${PROGRAM} invoke [1]`,
      `Program data: ${b64(placed(1n))}`,
      `Program ${PROGRAM} invoke [2]`,
      `Program ${PROGRAM} success`,
      'Log truncated',
    ];
    const inner = [
      {
        index: 0,
        instructions: [
          { programIdIndex: 2, accounts: [1], data: cpiData(placed(2n)), stackHeight: 2 },
          { programIdIndex: 2, accounts: [1], data: cpiData(placed(3n)), stackHeight: 2 },
        ],
      },
    ];
    const p = parseTransaction(tx(logs, inner), PROGRAM);
    expect(p.truncated).toBe(true);
    expect(p.events.map((e) => [e.index, e.via, e.event])).toEqual([
      [0, 'log', placed(1n)],
      [1, 'cpi', placed(2n)],
      [2, 'cpi', placed(3n)],
    ]);
  });

  it('reads emit_cpi events when the RPC returned no logs', () => {
    const inner = [{ index: 0, instructions: [{ programIdIndex: 2, accounts: [1], data: cpiData(tick(5)), stackHeight: 2 }] }];
    const p = parseTransaction(tx(null, inner), PROGRAM);
    expect(p.events.map((e) => e.event)).toEqual([tick(5)]);
  });

  it('keeps the index of an undecodable or unknown payload and goes on', () => {
    const unknown = Buffer.concat([Buffer.from('deadbeefdeadbeef', 'hex'), Buffer.alloc(4)]).toString('base64');
    const logs = [
      `Program ${PROGRAM} invoke [1]`,
      `Program data: ${unknown}`,
      'Program data: not*base64!',
      `Program data: ${b64(placed(1n))} ${b64(placed(2n))}`,
      `Program data: ${Buffer.from(encodeEvent(placed(1n))).subarray(0, 20).toString('base64')}`,
      `Program data: ${b64(tick(7))}`,
      `Program ${PROGRAM} success`,
    ];
    const p = parseTransaction(tx(logs), PROGRAM);
    expect(p.invalid.map((i) => [i.index, i.reason])).toEqual([
      [0, 'unknown_discriminator'],
      [1, 'undecodable'],
      [2, 'undecodable'],
      [3, 'undecodable'],
    ]);
    expect(p.events.map((e) => [e.index, e.event])).toEqual([[4, tick(7)]]);
  });

  it('resolves programs from v0 lookup-table addresses and from jsonParsed instructions', () => {
    const raw = tx(
      [`Program ${ROUTER} invoke [1]`, `Program ${PROGRAM} invoke [2]`, `Program ${PROGRAM} success`, `Program ${PROGRAM} invoke [2]`, `Program ${PROGRAM} success`, `Program ${ROUTER} success`],
      [
        {
          index: 0,
          instructions: [
            { programIdIndex: 5, accounts: [1], data: cpiData(tick(1)), stackHeight: 2 },
            { programId: PROGRAM, accounts: [AUTHORITY], data: cpiData(tick(2)), stackHeight: 2 },
          ],
        },
      ],
    );
    raw.transaction.message.accountKeys = [SIGNER, AUTHORITY, TOKEN, ROUTER, SIGNER];
    raw.meta!.loadedAddresses = { writable: [PROGRAM], readonly: [] };
    const p = parseTransaction(raw, PROGRAM);
    expect(p.events.map((e) => e.event)).toEqual([tick(1), tick(2)]);
  });

  // Agave's message processor runs a precompile without an invoke line (svm/src/message_processor.rs
  // `process_precompile`); one rebuilt as an ordinary program logs one. Both place the inner
  // instructions of the program's instruction under its position in the message (D-470).
  const PRECOMPILES = ['Ed25519SigVerify111111111111111111111111111', 'KeccakSecp256k11111111111111111111111111111', 'Secp256r1SigVerify1111111111111111111111111'];
  it.each(PRECOMPILES.flatMap((p) => [[p, 'no invoke line'], [p, 'an invoke line']] as const))('reads emit_cpi events behind a %s precompile that logs %s', (precompile, logged) => {
    const CB = 'ComputeBudget111111111111111111111111111111';
    const keys = [SIGNER, AUTHORITY, PROGRAM, CB, precompile];
    const own = (data: string) => ({ programIdIndex: 2, accounts: [0, 1], data, stackHeight: null });
    const precompileLines = logged === 'an invoke line' ? [`Program ${precompile} invoke [1]`, `Program ${precompile} success`] : [];
    const ownRun = (logEvent: ProgramEvent) => [
      `Program ${PROGRAM} invoke [1]`,
      `Program data: ${b64(logEvent)}`,
      `Program ${PROGRAM} invoke [2]`,
      `Program ${PROGRAM} consumed 1200 of 180000 compute units`,
      `Program ${PROGRAM} success`,
      `Program ${PROGRAM} consumed 9000 of 200000 compute units`,
      `Program ${PROGRAM} success`,
    ];
    const raw = tx(
      [`Program ${CB} invoke [1]`, `Program ${CB} success`, ...precompileLines, ...ownRun(tick(1)), ...precompileLines, ...ownRun(tick(3))],
      [
        { index: 2, instructions: [{ programIdIndex: 2, accounts: [1], data: cpiData(tick(2)), stackHeight: 2 }] },
        { index: 4, instructions: [{ programIdIndex: 2, accounts: [1], data: cpiData(tick(4)), stackHeight: 2 }] },
      ],
    );
    raw.transaction.message = {
      accountKeys: keys,
      // compute budget, precompile, ours, precompile, ours: the positions innerInstructions[].index names.
      instructions: [{ programIdIndex: 3, accounts: [], data: 'K1FDJ7', stackHeight: null }, { programIdIndex: 4, accounts: [], data: '1', stackHeight: null }, own('3Bxs4h24hBtQy9rw'), { programIdIndex: 4, accounts: [], data: '1', stackHeight: null }, own('3Bxs4h24hBtQy9rw')],
    };
    const p = parseTransaction(raw, PROGRAM);
    expect(p.invalid).toEqual([]);
    expect(p.events.map((e) => [e.index, e.via, e.event])).toEqual([
      [0, 'log', tick(1)],
      [1, 'cpi', tick(2)],
      [2, 'log', tick(3)],
      [3, 'cpi', tick(4)],
    ]);
  });

  it('rejects a transaction without a signature or slot', () => {
    const raw = tx([]);
    raw.transaction.signatures = [];
    expect(() => parseTransaction(raw, PROGRAM)).toThrow(TransactionShapeError);
    expect(() => parseTransaction({ ...tx([]), slot: -1 }, PROGRAM)).toThrow(TransactionShapeError);
  });
});

describe('decodeBase64Strict', () => {
  const strict = /^[A-Za-z0-9+/]*={0,2}$/;
  it('accepts exactly the padded standard alphabet, as the regular expression it replaces', () => {
    // Characters Node's lenient decoder treats specially: URL-safe ones, padding, whitespace, others.
    const chars = fc.constantFrom(...'AQZaz09+/=-_ .\n\u00e9\u0000');
    fc.assert(
      fc.property(fc.array(chars, { maxLength: 16 }).map((a) => a.join('')), (s) => {
        const expected = strict.test(s) && s.length % 4 === 0;
        const got = decodeBase64Strict(s);
        expect(got !== undefined).toBe(expected);
        if (got) expect(Buffer.from(got)).toEqual(Buffer.from(s, 'base64'));
      }),
      { numRuns: 20_000 },
    );
    for (const bad of ['QQ=A', 'QQ-_', 'Q===', 'QUJD\n']) expect(decodeBase64Strict(bad)).toBeUndefined();
    expect(Buffer.from(decodeBase64Strict('QUJDRA==')!).toString()).toBe('ABCD');
  });
});
