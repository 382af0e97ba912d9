// The receiving clients of `npm run bench -- ws`, in their own process (the bench starts
// BENCH_CLIENT_PROCS of them), so that the clients of one run can use more than the one core
// of the bench's own event loop: with 4,000 clients in one process, that process, not the
// server, capped the delivered rate. Each client records, per seq, how many clients got it
// and when the last one did; the bench asks over IPC. After its handshake and subscription a
// client parses its frames itself (readFrames).
import type { Socket } from 'node:net';
import WebSocket from 'ws';

export type ClientsRequest =
  | { type: 'connect'; url: string; subscribe: boolean; count: number; channel: string }
  | { type: 'reset' }
  | { type: 'progress' }
  | { type: 'collect' };
export type ClientsReply =
  | { type: 'connect' }
  | { type: 'reset' }
  | { type: 'progress'; delivered: number }
  /** [seq, clients that got it, absolute ms when the last one did]. */
  | { type: 'collect'; seqs: [number, number, number][] };

const count = new Map<number, number>();
const last = new Map<number, number>();
const sockets: WebSocket[] = [];
let delivered = 0;

const UPDATE = Buffer.from('{"type":"update"');
const SEQ = Buffer.from('"seq":');

/** The seq of an update frame without a JSON.parse or a string: the clients must stay cheap. */
function seqOf(data: Buffer): number | undefined {
  if (data.length < UPDATE.length || data.compare(UPDATE, 0, UPDATE.length, 0, UPDATE.length) !== 0) return undefined;
  let i = data.indexOf(SEQ);
  if (i < 0) return undefined;
  let seq = 0;
  for (i += SEQ.length; i < data.length && data[i]! >= 48 && data[i]! <= 57; i++) seq = seq * 10 + data[i]! - 48;
  return seq;
}

const record = (seq: number) => {
  count.set(seq, (count.get(seq) ?? 0) + 1);
  last.set(seq, performance.timeOrigin + performance.now());
  delivered += 1;
};

/**
 * Once subscribed, a client reads its socket itself instead of through ws's Receiver: server
 * frames are unmasked and small, so a loop over each read costs a fraction of ws's per-message
 * work (events, a Buffer per message), and the clients stay cheaper than the server they
 * measure. Text frames are counted, pings answered (a masked pong with a zero key), anything
 * else ignored; a frame split across reads waits for its end.
 */
function readFrames(socket: Socket): void {
  let rest: Buffer | undefined;
  socket.on('data', (chunk: Buffer) => {
    const buf = rest ? Buffer.concat([rest, chunk]) : chunk;
    rest = undefined;
    let i = 0;
    while (buf.length - i >= 2) {
      const opcode = buf[i]! & 0x0f;
      let len = buf[i + 1]! & 0x7f;
      let at = i + 2;
      if (len === 126) {
        if (buf.length - i < 4) break;
        len = buf.readUInt16BE(i + 2);
        at = i + 4;
      } else if (len === 127) {
        if (buf.length - i < 10) break;
        len = buf.readUInt32BE(i + 2) * 2 ** 32 + buf.readUInt32BE(i + 6);
        at = i + 10;
      }
      if (buf.length - at < len) break;
      const payload = buf.subarray(at, at + len);
      if (opcode === 1) {
        const seq = seqOf(payload);
        if (seq !== undefined) record(seq);
      } else if (opcode === 9 && len < 126) {
        socket.write(Buffer.concat([Buffer.from([0x8a, 0x80 | len, 0, 0, 0, 0]), payload]));
      }
      i = at + len;
    }
    if (i < buf.length) rest = buf.subarray(i);
  });
}

async function connect(url: string, subscribe: boolean, n: number, channel: string): Promise<void> {
  const open = async () => {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    if (subscribe) {
      const subscribed = new Promise<void>((resolve) => ws.on('message', (d: Buffer) => d.toString().includes('"subscribed"') && resolve()));
      ws.send(JSON.stringify({ type: 'subscribe', channel }));
      await subscribed;
    }
    // From here on this process reads the socket (no update is published while clients connect).
    const socket = (ws as unknown as { _socket: Socket })._socket;
    socket.removeAllListeners('data');
    readFrames(socket);
    sockets.push(ws);
  };
  for (let i = 0; i < n; i += 50) await Promise.all(Array.from({ length: Math.min(50, n - i) }, open));
}

const reply = (m: ClientsReply) => process.send!(m);
process.on('message', (m: ClientsRequest) => {
  switch (m.type) {
    case 'connect':
      void connect(m.url, m.subscribe, m.count, m.channel).then(() => reply({ type: 'connect' }));
      return;
    case 'reset':
      count.clear();
      last.clear();
      delivered = 0;
      return reply({ type: 'reset' });
    case 'progress':
      return reply({ type: 'progress', delivered });
    case 'collect':
      return reply({ type: 'collect', seqs: [...count].map(([s, n]) => [s, n, last.get(s)!]) });
  }
});
process.on('disconnect', () => process.exit(0));
process.send!({ type: 'listening', port: 1 });
