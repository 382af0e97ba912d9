/**
 * The simulated chain's WebSocket side (Solana's PubSub): `logsSubscribe` and the
 * `logsNotification`s it brings, with the bounds of the API's `/ws` (D-271): a message limit,
 * a connection cap answered with HTTP 503 before the handshake, and backpressure that skips
 * notifications to a subscriber not reading and closes it after a run of skips.
 */
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { BACKPRESSURE_REASON, backpressureStep, CLOSE } from '../server/ws/protocol';
import { parseCall, RPC_CODES, rpcError, type ChainRpcLimits, type RpcCall } from './rpc-request';

export interface ChainPubSub {
  /** Sends one notification to every subscriber (built lazily, once, if anyone gets it). */
  notify(build: (subscription: number) => string): void;
  subscriberCount(): number;
  /** Sockets closed because they stopped reading. */
  backpressureCloses(): number;
  /** Sockets closed because nothing came from them for `idleCloseMs`. */
  idleCloses(): number;
  /** The next `count` logsSubscribe calls are answered with an error (a provider at its subscription cap). */
  refuseSubscriptions(count: number): void;
  /** Every socket open now goes silent: nothing read, answered or sent, nothing closed (a half-open connection). */
  silence(): void;
  close(): Promise<void>;
}

interface Subscriber {
  subscription: number;
  skips: number;
  readonly bufferedAmount: number;
}

const refuseUpgrade = (socket: Duplex, status: number, text: string) => {
  const body = JSON.stringify(rpcError(null, RPC_CODES.invalidRequest, text));
  socket.end([`HTTP/1.1 ${status} ${status === 503 ? 'Service Unavailable' : 'Bad Request'}`, 'Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`, 'Connection: close', 'Retry-After: 1', '', body].join('\r\n'));
};

/** Attaches the PubSub to `server`'s upgrades (not through `ws`'s own `server` option, whose 'error' forwarding made a taken port an unhandled event). */
export function attachChainPubSub(server: http.Server, opts: { programId: string; limits: ChainRpcLimits }): ChainPubSub {
  const { limits } = opts;
  const wss = new WebSocketServer({ noServer: true, maxPayload: limits.maxMessageBytes, perMessageDeflate: false });
  const subscribers = new Map<WebSocket, Subscriber>();
  let nextSubscription = 1;
  let closes = 0;
  let idleCloses = 0;
  let refusals = 0;
  const silenced = new WeakSet<WebSocket>();

  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    if (wss.clients.size >= limits.maxConnections) return refuseUpgrade(socket, 503, `WebSocket connections are at capacity (${limits.maxConnections})`);
    // Without a verifyClient the handshake completes in this turn (a bad one is answered 400
    // by ws), so the client count above is never behind.
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  });

  const send = (ws: WebSocket, value: unknown) => ws.send(JSON.stringify(value));

  function answer(ws: WebSocket, call: RpcCall): unknown {
    switch (call.method) {
      case 'logsSubscribe': {
        if (refusals > 0) {
          refusals -= 1;
          return rpcError(call.id, RPC_CODES.internal, 'Internal error: subscription limit reached');
        }
        const [filter] = call.params;
        const mentions = typeof filter === 'object' && filter !== null ? (filter as { mentions?: unknown }).mentions : undefined;
        if (!Array.isArray(mentions) || !mentions.every((m) => typeof m === 'string')) return rpcError(call.id, RPC_CODES.invalidParams, 'Invalid params: expected { mentions: [address] }');
        if (!mentions.includes(opts.programId)) return rpcError(call.id, RPC_CODES.invalidParams, 'Invalid filter');
        const subscription = nextSubscription++;
        subscribers.set(ws, { subscription, skips: 0, get bufferedAmount() { return ws.bufferedAmount; } });
        return { jsonrpc: '2.0', id: call.id, result: subscription };
      }
      case 'logsUnsubscribe': {
        const had = subscribers.get(ws)?.subscription === call.params[0];
        if (had) subscribers.delete(ws);
        return { jsonrpc: '2.0', id: call.id, result: had };
      }
      default:
        return rpcError(call.id, RPC_CODES.methodNotFound, 'Method not found');
    }
  }

  wss.on('connection', (ws) => {
    // Frames ws refuses (too big: 1009; malformed) arrive here; the socket is closed by ws.
    ws.on('error', () => ws.terminate());
    // Idle: nothing from the client, a message or a ping frame, for idleCloseMs (D-475).
    let idle: NodeJS.Timeout | undefined;
    const heard = () => {
      if (idle) clearTimeout(idle);
      idle = setTimeout(() => {
        if (silenced.has(ws)) return;
        idleCloses += 1;
        ws.close(1000, 'idle');
      }, limits.idleCloseMs);
      idle.unref();
    };
    heard();
    ws.on('ping', heard);
    ws.on('message', (raw, isBinary) => {
      heard();
      let out: unknown;
      try {
        let msg: unknown;
        try {
          msg = JSON.parse(isBinary ? Buffer.from(raw as Buffer).toString() : raw.toString());
        } catch {
          return send(ws, rpcError(null, RPC_CODES.parse, 'Parse error'));
        }
        const parsed = parseCall(msg);
        out = parsed.ok ? answer(ws, parsed.call) : parsed.error;
      } catch {
        // A bug in a handler: the socket gets the specification's answer, not the process's end.
        out = rpcError(null, RPC_CODES.internal, 'Internal error');
      }
      send(ws, out);
    });
    ws.on('close', () => {
      if (idle) clearTimeout(idle);
      subscribers.delete(ws);
    });
  });

  return {
    notify(build) {
      for (const [ws, sub] of subscribers) {
        if (silenced.has(ws)) continue;
        const step = backpressureStep(sub, limits);
        if (step === 'send') ws.send(build(sub.subscription));
        else if (step === 'close') {
          subscribers.delete(ws);
          closes += 1;
          ws.close(CLOSE.policy, BACKPRESSURE_REASON);
          // As the API's /ws: a client that does not read will not answer the close handshake either.
          setTimeout(() => ws.terminate(), 5_000).unref();
        }
      }
    },
    subscriberCount: () => subscribers.size,
    backpressureCloses: () => closes,
    idleCloses: () => idleCloses,
    refuseSubscriptions(count) {
      refusals = count;
    },
    silence() {
      // Neither read (so no pong, no answer) nor written to: what a dropped route looks like.
      for (const ws of wss.clients) {
        silenced.add(ws);
        (ws as unknown as { _socket: import('node:net').Socket })._socket.pause();
      }
    },
    async close() {
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((r) => wss.close(() => r()));
    },
  };
}
