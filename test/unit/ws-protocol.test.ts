import { readFileSync } from 'node:fs';
import { Parser } from '@asyncapi/parser';
import YAML from 'yaml';
import { backpressureStep, LEGACY_WS_ERRORS, parseChannel, parseClientMessage, parseLegacyClientMessage, parseResumeFrom, WS_ERRORS } from '../../server/ws/protocol';
import { API_PLANS } from '../../core/plans';
import { LEGACY_ERROR_STATUS } from '../../server/routes/legacy/envelope';
import { ASYNCAPI_LEGACY_PATH, ASYNCAPI_PATH, assertMatchesAsyncApi, assertMatchesLegacyAsyncApi, asyncApiSchemaCheck } from '../support/ws';
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
      const literal = typeof m !== 'function' ? m : m === WS_ERRORS.unknownMarket ? m('{marketId}') : m('{channel}');
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

describe('the appendix variant\'s client messages (D-162)', () => {
  it('reads { channel: "market.update", marketId } as market:<marketId>, resumeFrom kept', () => {
    expect(parseLegacyClientMessage(JSON.stringify({ type: 'subscribe', channel: 'market.update', marketId: 42, resumeFrom: 3 }))).toEqual({
      ok: true,
      message: { type: 'subscribe', channel: 'market:42', auth: undefined, resumeFrom: 3 },
    });
    expect(parseLegacyClientMessage(JSON.stringify({ type: 'unsubscribe', channel: 'market.update', marketId: '18446744073709551615' }))).toEqual({
      ok: true,
      message: { type: 'unsubscribe', channel: 'market:18446744073709551615' },
    });
  });

  it("refuses v1's channel names, a missing or bad marketId, and keeps v1's JSON and type errors", () => {
    const error = (m: unknown) => {
      const r = parseLegacyClientMessage(typeof m === 'string' ? m : JSON.stringify(m));
      return r.ok ? 'accepted' : r.error;
    };
    expect(error({ type: 'subscribe', channel: 'orderbook:1' })).toBe(LEGACY_WS_ERRORS.channel('orderbook:1'));
    expect(error({ type: 'subscribe', channel: 'market:1' })).toBe(LEGACY_WS_ERRORS.channel('market:1'));
    expect(error({ type: 'unsubscribe', channel: 7 })).toBe(LEGACY_WS_ERRORS.channel('7'));
    for (const marketId of [undefined, -1, 1.5, 2 ** 53, 'abc', '01', '18446744073709551616', null]) {
      expect([marketId, error({ type: 'subscribe', channel: 'market.update', marketId })]).toEqual([marketId, LEGACY_WS_ERRORS.marketId]);
    }
    expect(error('{')).toBe(WS_ERRORS.invalidJson);
    expect(error({ type: 'ping' })).toBe(WS_ERRORS.unknownType);
  });
});

describe('api-reference/asyncapi-legacy.yaml (the appendix variant, D-160)', () => {
  const text = readFileSync(ASYNCAPI_LEGACY_PATH, 'utf8');
  const doc = YAML.parse(text);

  it('is a valid AsyncAPI document for @asyncapi/parser, with no errors or warnings', async () => {
    const { document, diagnostics } = await new Parser().parse(text);
    expect(diagnostics.filter((d) => d.severity <= 1).map((d) => `${d.code}: ${d.message} at ${d.path.join('.')}`)).toEqual([]);
    expect(document?.channels().all().map((c) => c.address())).toEqual(['/ws']);
    expect(document?.operations().all()).toHaveLength(5);
  });

  it('lists the plan connection limits of core/plans.ts, every plan and no other', () => {
    const rows = [...String(doc.info.description).matchAll(/^\| (\w+) \| (\d+) \|$/gm)].map((m) => [m[1], Number(m[2])]);
    expect(rows).toEqual(API_PLANS.map((p) => [p.name, p.wsConnections]));
  });

  it('names only real error messages and codes: WS_ERRORS literals, the variant codes of D-156, the published market fields', () => {
    const messages = String(doc.components.schemas.Error.properties.message.description).replace(/\s+/g, ' ');
    const quoted = [...messages.matchAll(/`([^`]+)`/g)].map((m) => m[1]!).filter((q) => !/^(channel|orderbook:…|positions:…)$/.test(q));
    const literal = (m: string | ((c: string) => string)) => (typeof m !== 'function' ? m : m === WS_ERRORS.unknownMarket ? m('{marketId}') : m('{channel}'));
    const known = [...Object.values(WS_ERRORS), ...Object.values(LEGACY_WS_ERRORS)].map(literal);
    expect(quoted.filter((q) => !known.includes(q))).toEqual([]);
    // Every message of the variant's own is documented.
    for (const m of Object.values(LEGACY_WS_ERRORS)) expect(quoted).toContain(literal(m));
    expect(quoted.length).toBeGreaterThanOrEqual(7);
    for (const code of doc.components.schemas.UpgradeRefusal.properties.error.properties.code.enum) expect(Object.keys(LEGACY_ERROR_STATUS)).toContain(code);
    expect(doc.components.schemas.MarketUpdate.properties.data.properties.field.enum).toEqual([...PUBLISHED_MARKET_FIELDS]);
  });

  it('rejects frames that break its schemas, and v1 forms the variant does not document', () => {
    expect(() => assertMatchesLegacyAsyncApi({ type: 'subscribe', channel: 'market.update', marketId: 7 })).not.toThrow();
    expect(() => assertMatchesLegacyAsyncApi({ type: 'subscribe', channel: 'market.update' })).toThrow('marketId');
    expect(() => assertMatchesLegacyAsyncApi({ type: 'subscribe', channel: 'market:7' })).toThrow('subscribe does not match asyncapi-legacy.yaml');
    expect(() => assertMatchesLegacyAsyncApi({ type: 'update', channel: 'orderbook:1', data: { marketId: '1', bestBid: 1, bestAsk: 2 }, timestamp: 1, seq: 1, slot: 1 })).toThrow(
      'not in asyncapi-legacy.yaml',
    );
    expect(() => assertMatchesLegacyAsyncApi({ type: 'update', channel: 'market:1', data: { marketId: '1', field: 'state', value: 'Open' }, timestamp: 1, seq: 0, slot: 1 })).toThrow('seq');
    const refusal = asyncApiSchemaCheck(ASYNCAPI_LEGACY_PATH, 'UpgradeRefusal');
    expect(() => refusal({ success: false, error: { code: 'RATE_LIMITED', message: 'x' }, timestamp: 1 })).not.toThrow();
    expect(() => refusal({ error: 'Too many', code: 'RATE_LIMITED' })).toThrow('UpgradeRefusal');
  });
});
