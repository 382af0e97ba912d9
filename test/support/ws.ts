import { readFileSync } from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import Ajv, { type ValidateFunction } from 'ajv';
import WebSocket from 'ws';
import YAML from 'yaml';
import { walletHeaders, type Json, type SignOptions } from './api';

export const ASYNCAPI_PATH = path.resolve(__dirname, '../../api-reference/asyncapi.yaml');
/** The appendix variant's stream (API_VARIANT=legacy). */
export const ASYNCAPI_LEGACY_PATH = path.resolve(__dirname, '../../api-reference/asyncapi-legacy.yaml');

/** Which documented message a server frame claims to be. */
function messageName(m: Json): string {
  if (m.type === 'update') {
    const prefix = String(m.channel).split(':')[0];
    return `${prefix}Update`;
  }
  return String(m.type);
}

export type FrameCheck = (m: Json) => void;

/** A check of frames against one AsyncAPI document: throws naming the message and the rule broken. */
export function asyncApiCheck(file: string): FrameCheck {
  const doc = YAML.parse(readFileSync(file, 'utf8')) as Json;
  const name = path.basename(file);
  // AsyncAPI schemas are JSON Schema draft-07 (plus keywords Ajv ignores without strict mode).
  const ajv = new Ajv({ strict: false, allErrors: true });
  ajv.addSchema(doc, 'asyncapi');
  const validators = new Map<string, ValidateFunction>();
  function validatorFor(message: string): ValidateFunction {
    let v = validators.get(message);
    if (!v) validators.set(message, (v = ajv.compile({ $ref: `asyncapi#/components/messages/${message}/payload` })));
    return v;
  }
  return (m) => {
    const message = messageName(m);
    if (!doc.components.messages[message]) throw new Error(`message ${message} is not in ${name}: ${JSON.stringify(m).slice(0, 300)}`);
    const validate = validatorFor(message);
    if (!validate(m)) throw new Error(`${message} does not match ${name}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(m).slice(0, 500)}`);
  };
}

/** Checks a received (or sent) frame against api-reference/asyncapi.yaml. */
export const assertMatchesAsyncApi: FrameCheck = asyncApiCheck(ASYNCAPI_PATH);
/** Checks a frame of the appendix variant against api-reference/asyncapi-legacy.yaml. */
export const assertMatchesLegacyAsyncApi: FrameCheck = asyncApiCheck(ASYNCAPI_LEGACY_PATH);

/** A schema of `components.schemas` of an AsyncAPI document, as a validator (e.g. the legacy upgrade refusal body). */
export function asyncApiSchemaCheck(file: string, schema: string): FrameCheck {
  const doc = YAML.parse(readFileSync(file, 'utf8')) as Json;
  const ajv = new Ajv({ strict: false, allErrors: true });
  ajv.addSchema(doc, 'asyncapi');
  const validate = ajv.compile({ $ref: `asyncapi#/components/schemas/${schema}` });
  return (m) => {
    if (!validate(m)) throw new Error(`${schema} does not match ${path.basename(file)}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(m).slice(0, 500)}`);
  };
}

export interface Closed {
  code: number;
  reason: string;
}

/**
 * A real `ws` client that records every frame, validates it against the AsyncAPI document, and
 * lets a test wait for the next frame matching a predicate (the wait is bounded only so a
 * broken server fails the test instead of hanging it).
 */
export class WsClient {
  readonly received: Json[] = [];
  readonly closed: Promise<Closed>;
  private cursor = 0;
  private waiters: (() => void)[] = [];
  private errors: Error[] = [];

  private constructor(
    readonly ws: WebSocket,
    private readonly check: FrameCheck,
  ) {
    ws.on('message', (data) => {
      const m = JSON.parse(data.toString()) as Json;
      try {
        check(m);
      } catch (err) {
        this.errors.push(err as Error);
      }
      this.received.push(m);
      this.wake();
    });
    this.closed = new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    void this.closed.then(() => this.wake());
  }

  /** `check`: the document frames are validated against (v1's `asyncapi.yaml` by default). */
  static open(url: string, opts: WebSocket.ClientOptions = {}, check: FrameCheck = assertMatchesAsyncApi): Promise<WsClient> {
    const ws = new WebSocket(url, opts);
    const client = new WsClient(ws, check);
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(client));
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res: http.IncomingMessage) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
    });
  }

  private wake() {
    const w = this.waiters;
    this.waiters = [];
    w.forEach((f) => f());
  }

  /** Frames failing the AsyncAPI check make the test fail here. */
  assertValid(): void {
    if (this.errors.length) throw this.errors[0];
  }

  /** Consumes frames up to and including the first one matching `pred`. */
  async next(pred: (m: Json) => boolean = () => true, timeoutMs = 15_000): Promise<Json> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      this.assertValid();
      while (this.cursor < this.received.length) {
        const m = this.received[this.cursor++]!;
        if (pred(m)) return m;
      }
      if (this.ws.readyState === WebSocket.CLOSED) throw new Error(`socket closed while waiting; got ${JSON.stringify(this.received.slice(-3))}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no matching frame within ${timeoutMs} ms; last: ${JSON.stringify(this.received.slice(-3))}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  /** The reply to one client message: the next non-update frame. */
  async request(msg: Json | string, timeoutMs?: number): Promise<Json> {
    this.send(msg);
    return this.next((m) => m.type !== 'update', timeoutMs);
  }

  send(msg: Json | string): void {
    if (typeof msg !== 'string') this.check(msg);
    this.ws.send(typeof msg === 'string' ? msg : JSON.stringify(msg));
  }

  close(): Promise<Closed> {
    this.ws.close();
    return this.closed;
  }
}

/**
 * An upgrade the server refuses: its HTTP status, headers and JSON body. `opts` offers
 * subprotocols, or sends from a chosen local address (127.0.0.x) for per-address limits.
 */
export function refusedUpgrade(url: string, opts: { protocols?: string[]; localAddress?: string } = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Json }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, opts.protocols ?? [], opts.localAddress ? { localAddress: opts.localAddress } : {});
    ws.once('open', () => {
      ws.close();
      reject(new Error('the upgrade was accepted'));
    });
    ws.once('unexpected-response', (_req, res: http.IncomingMessage) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(text) as Json }));
    });
    ws.once('error', () => {});
  });
}

/** The `auth` object of a positions subscription, signed like the HTTP headers. */
export function wsAuth(key: { address: string; secretKey: Uint8Array }, action: string, o: SignOptions = {}) {
  const h = walletHeaders(key, action, o);
  return { publicKey: h['x-wallet-pubkey']!, signature: h['x-wallet-signature']!, message: h['x-wallet-message']! };
}
