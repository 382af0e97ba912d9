import type { AddressInfo } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import { createFrameSender, textFrame } from '../../server/ws/frame-sender';

/** ws's own frame parser as a client runs it (exported by ws, untyped by @types/ws). */
const { Receiver } = WebSocket as unknown as {
  Receiver: new (o: { isServer: boolean; maxPayload: number }) => NodeJS.WritableStream & { on(e: string, f: (...a: never[]) => void): void };
};

function decode(frame: Buffer): Promise<{ text: string; binary: boolean }> {
  return new Promise((resolve, reject) => {
    const r = new Receiver({ isServer: false, maxPayload: 0 });
    r.on('message', (data: Buffer, binary: boolean) => resolve({ text: data.toString(), binary }));
    r.on('error', reject);
    r.write(frame);
  });
}

describe('the /ws update send path', () => {
  it.each([0, 1, 125, 126, 65_535, 65_536, 70_000])('frames a %d-byte payload as one unmasked text frame ws decodes', async (n) => {
    const payload = Buffer.from('x'.repeat(n));
    const frame = textFrame(payload);
    expect(frame.length).toBe(n + (n < 126 ? 2 : n < 65_536 ? 4 : 10));
    await expect(decode(frame)).resolves.toEqual({ text: payload.toString(), binary: false });
  });

  it('keeps the order of updates and other frames on a connection, and sends nothing after the close', async () => {
    const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false });
    try {
      const accepted = new Promise<WebSocket>((resolve) => wss.once('connection', resolve));
      await new Promise((resolve) => wss.once('listening', resolve));
      const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`);
      const got: { text: string; binary: boolean }[] = [];
      client.on('message', (data: Buffer, binary: boolean) => got.push({ text: data.toString(), binary }));
      const closed = new Promise<number>((resolve) => client.once('close', resolve));
      const server = await accepted;
      // What reaches the socket: one write per update, the whole frame (ws.send makes two).
      const socket = (server as unknown as { _socket: { write: (chunk: Buffer, ...rest: unknown[]) => boolean } })._socket;
      const writes: number[] = [];
      const write = socket.write.bind(socket);
      socket.write = (chunk: Buffer, ...rest: unknown[]) => {
        writes.push(chunk.length);
        return write(chunk, ...rest);
      };
      const send = createFrameSender();
      const a = Buffer.from('{"seq":1}');
      const big = Buffer.from(JSON.stringify({ seq: 2, pad: 'y'.repeat(70_000) }));
      send(server, a);
      expect(writes).toEqual([a.length + 2]);
      server.send('{"type":"subscribed"}', { binary: false });
      send(server, a); // the same payload again: the cached frame
      send(server, big);
      server.close(1001, 'bye');
      send(server, a); // closing: handed to ws, which drops it
      expect(await closed).toBe(1001);
      expect(got).toEqual([
        { text: '{"seq":1}', binary: false },
        { text: '{"type":"subscribed"}', binary: false },
        { text: '{"seq":1}', binary: false },
        { text: big.toString(), binary: false },
      ]);
    } finally {
      await new Promise((resolve) => wss.close(resolve));
    }
  });
});
