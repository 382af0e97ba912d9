import path from 'node:path';
import { MessageChannel, Worker, receiveMessageOnPort } from 'node:worker_threads';
import WebSocketClient from 'ws';
import type { HttpAnswer, HttpCall } from './http-helper';

/**
 * The k6 API subset the scripts of loadtest/k6 use, for the k6 test adapter (test support: it
 * runs those scripts in Jest against a live service; it is not a k6 replacement). Semantics
 * follow k6: requests are synchronous for the VU, response header names are Go-canonical,
 * `check` records a `checks` sample per condition and returns whether all held, `sleep` blocks
 * the VU, the iteration ends once its sockets and timers are done.
 */

export type MetricType = 'counter' | 'gauge' | 'rate' | 'trend';
export type Tags = Record<string, string>;
export type Sample = { kind: 'sample'; metric: string; type: MetricType; isTime: boolean; value: number; tags: Tags };
export type CheckSample = { kind: 'check'; name: string; group: string; ok: boolean };
export type Emit = (s: Sample | CheckSample) => void;

/** Go's textproto.CanonicalMIMEHeaderKey: what k6 shows as response header names. */
export function canonicalHeader(name: string): string {
  return name
    .toLowerCase()
    .split('-')
    .map((p) => (p ? p[0]!.toUpperCase() + p.slice(1) : p))
    .join('-');
}

const str = (tags: Record<string, unknown> | undefined): Tags => Object.fromEntries(Object.entries(tags ?? {}).map(([k, v]) => [k, String(v)]));

/**
 * A worker thread running a TypeScript file: workers do not get the `--import tsx` of their
 * process applied to their entry file, so the entry is registered through tsx's require hook.
 */
export function tsWorker(file: string, opts: ConstructorParameters<typeof Worker>[1] = {}): Worker {
  return new Worker(`require('tsx/cjs'); require(${JSON.stringify(file)});`, { ...opts, eval: true });
}

/** What the event loop of a VU still waits for: an iteration ends when this drains. */
export interface Pending {
  count: number;
}

export function createModules(opts: { emit: Emit; pending: Pending; groupPath: () => string; setGroup: (g: string) => void }) {
  const { emit, pending } = opts;
  const sample = (metric: string, type: MetricType, value: number, tags: Tags, isTime = false) =>
    emit({ kind: 'sample', metric, type, isTime, value, tags: { ...tags, ...(opts.groupPath() ? { group: opts.groupPath() } : {}) } });

  // --- k6 ---------------------------------------------------------------------------------
  const sleepFlag = new Int32Array(new SharedArrayBuffer(4));
  const k6 = {
    check<T>(value: T, sets: Record<string, (v: T) => unknown>, tags?: Record<string, unknown>): boolean {
      let all = true;
      for (const [name, fn] of Object.entries(sets)) {
        let ok: boolean;
        try {
          ok = Boolean(fn(value));
        } catch {
          ok = false;
        }
        all &&= ok;
        emit({ kind: 'check', name, group: opts.groupPath(), ok });
        sample('checks', 'rate', ok ? 1 : 0, { check: name, ...str(tags) });
      }
      return all;
    },
    group<T>(name: string, fn: () => T): T {
      const outer = opts.groupPath();
      opts.setGroup(`${outer}::${name}`);
      try {
        return fn();
      } finally {
        opts.setGroup(outer);
      }
    },
    sleep(seconds: number): void {
      if (seconds > 0) Atomics.wait(sleepFlag, 0, 0, seconds * 1000);
    },
    fail(message?: string): never {
      throw new Error(message ?? 'fail');
    },
  };

  // --- k6/http: synchronous for the VU through a network thread ----------------------------
  const channel = new MessageChannel();
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const helper = tsWorker(path.join(__dirname, 'http-helper.ts'), { workerData: { port: channel.port2, flag }, transferList: [channel.port2] });
  helper.unref();
  type Expected = (status: number) => boolean;
  let expected: Expected = (s) => s >= 200 && s < 400;

  class Response {
    constructor(
      readonly url: string,
      readonly request: { method: string; url: string },
      readonly status: number,
      readonly headers: Record<string, string>,
      readonly body: string,
      readonly timings: { duration: number },
      readonly error: string,
      readonly error_code: number,
    ) {}
    json(selector?: string): unknown {
      if (selector !== undefined) throw new Error('the k6 test adapter does not implement json(selector)');
      return JSON.parse(this.body);
    }
  }

  function request(method: string, url: string, body?: string | null, params: { headers?: Record<string, string>; tags?: Record<string, unknown>; timeout?: string | number } = {}) {
    const call: HttpCall = { method: method.toUpperCase(), url, headers: { 'User-Agent': 'k6-test-adapter', ...(params.headers ?? {}) }, body: body ?? null, timeoutMs: 60_000 };
    Atomics.store(flag, 0, 0);
    channel.port1.postMessage(call);
    Atomics.wait(flag, 0, 0);
    const answer = receiveMessageOnPort(channel.port1)?.message as HttpAnswer;
    const headers: Record<string, string> = {};
    for (const [k, v] of answer.headers) {
      const name = canonicalHeader(k);
      headers[name] = headers[name] === undefined ? v : `${headers[name]}, ${v}`;
    }
    const tags = { method: call.method, url, name: url, status: String(answer.status), ...str(params.tags) };
    sample('http_reqs', 'counter', 1, tags);
    sample('http_req_duration', 'trend', answer.durationMs, tags, true);
    sample('http_req_failed', 'rate', expected(answer.status) ? 0 : 1, tags);
    return new Response(url, { method: call.method, url }, answer.status, headers, answer.body, { duration: answer.durationMs }, answer.error, answer.error ? 1000 : 0);
  }

  const http = {
    request,
    get: (url: string, params?: Parameters<typeof request>[3]) => request('GET', url, null, params),
    head: (url: string, params?: Parameters<typeof request>[3]) => request('HEAD', url, null, params),
    post: (url: string, body?: string | null, params?: Parameters<typeof request>[3]) => request('POST', url, body, params),
    put: (url: string, body?: string | null, params?: Parameters<typeof request>[3]) => request('PUT', url, body, params),
    patch: (url: string, body?: string | null, params?: Parameters<typeof request>[3]) => request('PATCH', url, body, params),
    del: (url: string, body?: string | null, params?: Parameters<typeof request>[3]) => request('DELETE', url, body, params),
    expectedStatuses(...args: (number | { min: number; max: number })[]): Expected {
      return (s) => args.some((a) => (typeof a === 'number' ? s === a : s >= a.min && s <= a.max));
    },
    setResponseCallback(cb: Expected | null): void {
      expected = cb ?? (() => true);
    },
  };

  // --- k6/metrics --------------------------------------------------------------------------
  const metric = (type: MetricType) =>
    class {
      constructor(
        readonly name: string,
        readonly isTime = false,
      ) {}
      add(value: number | boolean, tags?: Record<string, unknown>): void {
        sample(this.name, type, typeof value === 'boolean' ? (value ? 1 : 0) : value, str(tags), this.isTime);
      }
    };
  const metrics = { Counter: metric('counter'), Gauge: metric('gauge'), Rate: metric('rate'), Trend: metric('trend') };

  // --- k6/timers: they keep the iteration alive until they fire or are cleared ---------------
  let nextId = 1;
  const ids = new Map<number, NodeJS.Timeout>();
  const timers = {
    setTimeout(fn: (...a: unknown[]) => void, ms: number, ...args: unknown[]): number {
      const id = nextId++;
      pending.count += 1;
      const h = setTimeout(() => {
        ids.delete(id);
        pending.count -= 1;
        fn(...args);
      }, ms);
      ids.set(id, h);
      return id;
    },
    clearTimeout(id: number): void {
      const h = ids.get(id);
      if (!h) return;
      clearTimeout(h);
      ids.delete(id);
      pending.count -= 1;
    },
    setInterval(fn: (...a: unknown[]) => void, ms: number, ...args: unknown[]): number {
      const id = nextId++;
      pending.count += 1;
      ids.set(id, setInterval(() => fn(...args), ms));
      return id;
    },
    clearInterval(id: number): void {
      const h = ids.get(id);
      if (!h) return;
      clearInterval(h);
      ids.delete(id);
      pending.count -= 1;
    },
  };

  // --- k6/websockets: the event API over the `ws` client -------------------------------------
  type Listener = (e: Record<string, unknown>) => void;
  class WebSocket {
    static readonly CONNECTING = 0;
    static readonly OPEN = 1;
    static readonly CLOSING = 2;
    static readonly CLOSED = 3;
    readonly CONNECTING = 0;
    readonly OPEN = 1;
    readonly CLOSING = 2;
    readonly CLOSED = 3;
    onopen: (() => void) | null = null;
    onmessage: Listener | null = null;
    onerror: Listener | null = null;
    onclose: Listener | null = null;
    private listeners: Record<string, Listener[]> = {};
    private socket: WebSocketClient;
    private done = false;

    constructor(
      readonly url: string,
      _protocols?: null,
      params: { headers?: Record<string, string>; tags?: Record<string, unknown> } | null = {},
    ) {
      pending.count += 1;
      const tags = { url, ...str(params?.tags) };
      const started = performance.now();
      this.socket = new WebSocketClient(url, { headers: params?.headers, perMessageDeflate: false, localAddress: process.env.K6_LOCAL_IPS || undefined });
      let opened = false;
      this.socket.on('open', () => {
        opened = true;
        sample('ws_sessions', 'counter', 1, tags);
        sample('ws_connecting', 'trend', performance.now() - started, tags, true);
        this.dispatch('open', {});
      });
      this.socket.on('message', (data: WebSocketClient.RawData, isBinary: boolean) => {
        sample('ws_msgs_received', 'counter', 1, tags);
        const buf = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
        this.dispatch('message', { data: isBinary ? buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) : buf.toString('utf8') });
      });
      // A refused handshake: k6 reports an error event, then the close.
      this.socket.on('error', (err: Error) => this.dispatch('error', { error: opened ? err.message : `websocket: bad handshake (${err.message})` }));
      this.socket.on('close', (code: number, reason: Buffer) => {
        if (this.done) return;
        this.done = true;
        if (opened) sample('ws_session_duration', 'trend', performance.now() - started, tags, true);
        this.dispatch('close', { code, reason: reason.toString('utf8') });
        pending.count -= 1;
      });
    }

    get readyState(): number {
      return this.socket.readyState;
    }

    get bufferedAmount(): number {
      return this.socket.bufferedAmount;
    }

    send(data: string | ArrayBuffer): void {
      if (this.socket.readyState !== WebSocketClient.OPEN) throw new Error('InvalidStateError');
      this.socket.send(typeof data === 'string' ? data : Buffer.from(data), { binary: typeof data !== 'string' });
    }

    close(code?: number, reason?: string): void {
      if (this.socket.readyState === WebSocketClient.CLOSING || this.socket.readyState === WebSocketClient.CLOSED) return;
      this.socket.close(code ?? 1000, reason);
    }

    ping(): void {
      this.socket.ping();
    }

    addEventListener(event: string, fn: Listener): void {
      (this.listeners[event] ??= []).push(fn);
    }

    private dispatch(type: string, fields: Record<string, unknown>): void {
      const event = { type, timestamp: Date.now(), ...fields };
      const prop = (this as unknown as Record<string, unknown>)[`on${type}`];
      if (typeof prop === 'function') (prop as Listener)(event);
      for (const fn of this.listeners[type] ?? []) fn(event);
    }
  }

  return {
    k6,
    'k6/http': http,
    'k6/metrics': metrics,
    'k6/timers': timers,
    'k6/websockets': { WebSocket },
    close: () => helper.terminate(),
  };
}
