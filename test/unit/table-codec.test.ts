import fc from 'fast-check';
import { col, createDecoder, createPayload, defineTable, nullable } from '../../core/db/table';
import { trade } from '../../server/read/serialize';

/** The codecs every projected table's loader and payloads derive from (core/db/table.ts). */
const sample = defineTable(
  'sample',
  { id: col.int8, amount: col.numeric, maybeAmount: nullable(col.numeric), at: col.timestamptz, maybeAt: nullable(col.timestamptz), day: col.date, flag: col.bool, small: col.int2 },
  { key: ['id'] },
);

describe('table descriptors: derived names, decoder and payloads', () => {
  it('names each column the snake_case of its property, in declaration order', () => {
    expect(sample.props.map((p) => sample.columnOf[p])).toEqual(['id', 'amount', 'maybe_amount', 'at', 'maybe_at', 'day', 'flag', 'small']);
  });

  it('decodes what pg returns (BIGINT and NUMERIC as strings, DATE as local midnight) into in-memory values', () => {
    const at = new Date('2026-03-01T12:00:00Z');
    const row = createDecoder(sample)({ id: '42', amount: '18446744073709551615', maybe_amount: null, at, maybe_at: null, day: new Date(2026, 2, 1), flag: true, small: 3 });
    expect(row).toEqual({ id: 42, amount: 18446744073709551615n, maybeAmount: null, at, maybeAt: null, day: '2026-03-01', flag: true, small: 3 });
  });

  it('keeps every u64 and signed amount exact through the decoder', () => {
    const decode = createDecoder(sample);
    fc.assert(
      fc.property(fc.bigInt(-(2n ** 130n), 2n ** 130n), (n) => decode({ id: '1', amount: n.toString(), maybe_amount: n.toString(), at: new Date(0), maybe_at: null, day: '2026-01-01', flag: false, small: 0 }).maybeAmount === n),
    );
  });

  it('writes payload fields in the order asked, in their wire form, with null kept', () => {
    const camel = createPayload(sample, ['maybeAt', 'amount', 'id', 'maybeAmount', 'at'], 'camel');
    const r = { id: '7', amount: '100', maybe_amount: null, at: new Date('2026-01-02T03:04:05.006Z'), maybe_at: null };
    expect(Object.entries(camel(r))).toEqual([
      ['maybeAt', null],
      ['amount', '100'],
      ['id', 7],
      ['maybeAmount', null],
      ['at', '2026-01-02T03:04:05.006Z'],
    ]);
    expect(createPayload(sample, ['maybeAmount', 'small'], 'snake')({ maybe_amount: '5', small: 1 })).toEqual({ maybe_amount: '5', small: 1 });
  });

  it("a trade payload carries the spec's alias fields beside the fields they repeat", () => {
    const r = {
      id: '9', market_address: 'M', maker_order_id: '1', taker_order_id: '2', maker: 'A', taker: 'B', price_bps: 5500, quantity: '10',
      maker_side: 0, taker_side: 1, taker_fee: '3', fee_protocol: '1', fee_creator: '1', fee_referral: '1', protocol_treasury_index: 4,
      referrer: null, tx_signature: 'sig', event_index: 0, slot: '123', executed_at: new Date('2026-01-01T00:00:00Z'),
    };
    expect(Object.keys(trade(r))).toEqual([
      'id', 'market_address', 'maker_order_id', 'taker_order_id', 'maker', 'taker', 'price_bps', 'quantity', 'maker_side', 'taker_fee',
      'fee_protocol', 'fee_creator', 'fee_referral', 'protocol_treasury_index', 'treasury_index', 'tx_signature', 'signature', 'slot', 'executed_at',
    ]);
    expect(trade(r)).toMatchObject({ id: 9, treasury_index: 4, protocol_treasury_index: 4, signature: 'sig', slot: 123, executed_at: '2026-01-01T00:00:00.000Z', quantity: '10' });
  });
});
