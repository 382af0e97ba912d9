import { readFileSync } from 'node:fs';
import { Parser } from '@asyncapi/parser';
import YAML from 'yaml';
import { backpressureStep, parseChannel, parseClientMessage, parseResumeFrom, WS_ERRORS } from '../../server/ws/protocol';
import { ASYNCAPI_PATH, assertMatchesAsyncApi } from '../support/ws';
import { CHANNEL_KINDS, PUBLISHED_MARKET_FIELDS } from '../../core/live/channels';

describe('backpressure policy (spec 8)', () => {
  const limits = { maxBufferedBytes: 1024 * 1024, maxSkips: 50 };

  it('sends while the buffer is at most 1 MB and skips above it', () => {
    expect(backpressureStep({ bufferedAmount: 1024 * 1024, skips: 0 }, limits)).toBe('send');
    const over = { bufferedAmount: 1024 * 1024 + 1, skips: 0 };
    expect(backpressureStep(over, limits)).toBe('skip');
    expect(over.skips).toBe(1);
  });

  it('closes on the 50th consecutive skip, and a successful send starts the count again', () => {
    const c = { bufferedAmount: 2e6, skips: 0 };
    const actions: string[] = [];
    for (let i = 0; i < 49; i++) actions.push(backpressureStep(c, limits));
    expect(actions.every((a) => a === 'skip')).toBe(true);
    c.bufferedAmount = 0;
    expect(backpressureStep(c, limits)).toBe('send');
    expect(c.skips).toBe(0);
    c.bufferedAmount = 2e6;
    for (let i = 0; i < 49; i++) backpressureStep(c, limits);
    expect(backpressureStep(c, limits)).toBe('close');
    expect(c.skips).toBe(50);
  });
});

describe('client messages', () => {
  it('parses the channel families and rejects everything else with the 7.3 message', () => {
    expect(parseChannel('market:0')).toEqual({ ok: true, channel: { name: 'market:0', kind: 'market', key: '0' } });
    expect(parseChannel('orderbook:18446744073709551615').ok).toBe(true);
    expect(parseChannel('orderbook:18446744073709551616')).toEqual({ ok: false, error: WS_ERRORS.invalidChannelKey('orderbook:18446744073709551616') });
    expect(parseChannel('positions:11111111111111111111111111111111').ok).toBe(true);
    expect(parseChannel('positions:0OIl').ok).toBe(false);
    expect(parseChannel('market:01')).toEqual({ ok: false, error: WS_ERRORS.invalidChannelKey('market:01') });
    expect(parseChannel('Market:1')).toEqual({ ok: false, error: 'Invalid channel: Market:1. Must start with: market:, orderbook:, positions:' });
    expect(parseChannel(42)).toEqual({ ok: false, error: 'Invalid channel: 42. Must start with: market:, orderbook:, positions:' });
    const long = parseChannel(`x${'y'.repeat(4000)}`);
    expect(!long.ok && long.error.length).toBeLessThan(250);
  });

  it('tells invalid JSON from an unknown type', () => {
    expect(parseClientMessage('')).toEqual({ ok: false, error: 'Invalid JSON' });
    expect(parseClientMessage('null')).toEqual({ ok: false, error: 'Unknown message type' });
    expect(parseClientMessage('"subscribe"')).toEqual({ ok: false, error: 'Unknown message type' });
    expect(parseClientMessage('{"type":"SUBSCRIBE","channel":"market:1"}')).toEqual({ ok: false, error: 'Unknown message type' });
    const ok = parseClientMessage('{"type":"subscribe","channel":"market:1","auth":{"publicKey":5}}');
    expect(ok).toEqual({ ok: true, message: { type: 'subscribe', channel: 'market:1', auth: { publicKey: undefined, signature: undefined, message: undefined }, resumeFrom: undefined } });
  });

  it('accepts resumeFrom only as a non-negative safe integer', () => {
    expect(parseResumeFrom(undefined)).toEqual({ ok: true, value: undefined });
    expect(parseResumeFrom(0)).toEqual({ ok: true, value: 0 });
    for (const bad of [-1, 1.5, '3', 2 ** 53, true]) expect(parseResumeFrom(bad).ok).toBe(false);
  });
});

describe('api-reference/asyncapi.yaml', () => {
  it('is a valid AsyncAPI document for @asyncapi/parser, with no errors or warnings', async () => {
    const { document, diagnostics } = await new Parser().parse(readFileSync(ASYNCAPI_PATH, 'utf8'));
    // Severity 0 is an error, 1 a warning.
    expect(diagnostics.filter((d) => d.severity <= 1).map((d) => `${d.code}: ${d.message} at ${d.path.join('.')}`)).toEqual([]);
    expect(document?.channels().all().map((c) => c.address())).toEqual(['/ws']);
    expect(document?.operations().all()).toHaveLength(5);
  });

  it('lists every error message of spec 7.3 and of the WS_ERRORS table', () => {
    const doc = YAML.parse(readFileSync(ASYNCAPI_PATH, 'utf8'));
    const text: string = doc.components.schemas.Error.properties.message.description.replace(/\s+/g, ' ');
    for (const m of Object.values(WS_ERRORS)) {
      const literal = typeof m === 'function' ? m('{channel}') : m;
      expect(text).toContain(literal);
    }
  });

  it('describes the live-channel contract of core/live/channels.ts: its kinds and the published market fields', () => {
    const schemas = YAML.parse(readFileSync(ASYNCAPI_PATH, 'utf8')).components.schemas;
    const update = (name: string) => schemas[name].allOf[1].properties;
    const kinds = ['MarketUpdate', 'OrderbookUpdate', 'PositionsUpdate'].map((n) => /^\^(\w+):/.exec(update(n).channel.pattern)?.[1]);
    expect(kinds).toEqual([...CHANNEL_KINDS]);
    expect(update('MarketUpdate').data.properties.field.enum).toEqual([...PUBLISHED_MARKET_FIELDS]);
  });

  it('rejects frames that break its schemas (the validator used on every received frame can fail)', () => {
    expect(() => assertMatchesAsyncApi({ type: 'update', channel: 'orderbook:1', data: { marketId: '1', bestBid: 1 }, timestamp: 1, seq: 1, slot: 1 })).toThrow('bestAsk');
    expect(() => assertMatchesAsyncApi({ type: 'connected', message: 'hi' })).toThrow('timestamp');
    expect(() => assertMatchesAsyncApi({ type: 'welcome' })).toThrow('not in asyncapi.yaml');
  });
});
