import type { Socket } from 'node:net';
import { WebSocket } from 'ws';

/**
 * A server-to-client text frame (RFC 6455 5.2: FIN, opcode 1, no mask, no extension bits)
 * around `payload`, header and payload in one buffer. Server frames are not masked, so the
 * same bytes are valid on every connection.
 */
export function textFrame(payload: Buffer): Buffer {
  const n = payload.length;
  const header = n < 126 ? 2 : n < 65_536 ? 4 : 10;
  const frame = Buffer.allocUnsafe(header + n);
  frame[0] = 0x81;
  if (header === 2) frame[1] = n;
  else if (header === 4) {
    frame[1] = 126;
    frame.writeUInt16BE(n, 2);
  } else {
    frame[1] = 127;
    frame.writeUInt32BE(Math.floor(n / 2 ** 32), 2);
    frame.writeUInt32BE(n >>> 0, 6);
  }
  payload.copy(frame, header);
  return frame;
}

/** The parts of ws's WebSocket the fast path reads (ws 8: `_socket`, `_sender._state`). */
interface WsInternals {
  _socket?: Socket | null;
  _sender?: { _state: number } | null;
}
/** ws's Sender state when nothing is queued behind a compression or a Blob read. */
const SENDER_IDLE = 0;

/**
 * The update send path of `/ws` (issue 25). One update goes to thousands of sockets, so the
 * per-socket work is what counts: `ws.send` builds an options object and a header buffer and
 * makes two writes per socket; here the frame is built once per payload (the hub hands the
 * same Buffer to every subscriber, so a one-entry cache finds it) and each socket gets one
 * write. Frames written to a socket during one event-loop turn (Redis hands over many messages
 * per read under load) leave in one writev: the socket is corked on its first write and
 * uncorked on the next tick. A socket that is not open, or whose ws Sender has something
 * queued (compression and Blobs, which `/ws` does not use), goes through `ws.send`, so the
 * order of frames and ws's send-after-close handling stay ws's own.
 */
export function createFrameSender() {
  let lastPayload: Buffer | undefined;
  let lastFrame: Buffer | undefined;
  const corked: Socket[] = [];
  const uncorkAll = () => {
    for (let i = 0; i < corked.length; i++) corked[i]!.uncork();
    corked.length = 0;
  };
  const frameOf = (payload: Buffer): Buffer => {
    if (payload !== lastPayload) {
      lastFrame = textFrame(payload);
      lastPayload = payload;
    }
    return lastFrame!;
  };
  return (ws: WebSocket, payload: Buffer): void => {
    const { _socket: socket, _sender: sender } = ws as unknown as WsInternals;
    if (!socket || !sender || sender._state !== SENDER_IDLE || ws.readyState !== WebSocket.OPEN) {
      ws.send(payload, { binary: false });
      return;
    }
    if (socket.writableCorked === 0) {
      socket.cork();
      if (corked.push(socket) === 1) process.nextTick(uncorkAll);
    }
    socket.write(frameOf(payload));
  };
}
