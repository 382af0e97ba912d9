// The ceiling for `npm run bench -- ws`: a bare `ws` server in its own process that takes the
// same Redis hop as the API and writes each message, already serialized by the publisher, to
// every client: no parsing, routing, sequencing or backpressure. With RAW_CORK=1 it also
// batches a burst of frames into one write per socket, as the API does.
import type { Socket } from 'node:net';
import Redis from 'ioredis';
import { WebSocketServer, type WebSocket } from 'ws';

const cork = process.env.RAW_CORK === '1';
const clients = new Set<WebSocket>();
const corked: Socket[] = [];
const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false, clientTracking: false });
wss.on('connection', (ws) => {
  clients.add(ws);
  ws.on('close', () => clients.delete(ws));
  ws.on('error', () => {});
});
const sub = new Redis(process.env.REDIS_URL!);
sub.on('messageBuffer', (_channel: Buffer, frame: Buffer) => {
  for (const ws of clients) {
    if (cork) {
      const s = (ws as unknown as { _socket: Socket })._socket;
      if (s.writableCorked === 0) {
        s.cork();
        if (corked.push(s) === 1) process.nextTick(() => corked.splice(0).forEach((x) => x.uncork()));
      }
    }
    ws.send(frame, { binary: false });
  }
});
void sub.subscribe(process.env.RAW_CHANNEL!).then(() => {
  const report = () => process.send?.({ type: 'listening', port: (wss.address() as { port: number }).port });
  if (wss.address()) report();
  else wss.on('listening', report);
});
process.on('disconnect', () => process.exit(0));
