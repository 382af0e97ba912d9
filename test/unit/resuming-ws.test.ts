import { WebSocketServer, type WebSocket } from 'ws';
import type { Json } from '../support/api';
import { resumingWsClient } from '../support/resuming-ws';
import { waitFor } from '../support/tables';

/**
 * The reconnecting /ws client the fault suite and the journeys share (the SDK's, D-535), against
 * a scripted server: the first socket is closed with 1001 (a draining replica), the second never
 * answers one subscribe, the third answers everything.
 */
describe('resumingWsClient (a scripted /ws server)', () => {
  let server: WebSocketServer;
  afterEach(async () => {
    server.clients.forEach((c) => c.terminate());
    await new Promise((r) => server.close(r));
  });

  it('ends a socket whose subscribe timed out before it opens the next, and resumes each channel from its last seq', async () => {
    const channels = ['orderbook:1', 'orderbook:2'];
    const sockets: { ws: WebSocket; subscribes: Json[]; open: boolean }[] = [];
    /** For each connection after the first: how many earlier ones the server still had open. */
    const openBefore: number[] = [];
    server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    server.on('connection', (ws) => {
      if (sockets.length) openBefore.push(sockets.filter((s) => s.open).length);
      const conn = { ws, subscribes: [] as Json[], open: true };
      const n = sockets.push(conn);
      ws.on('close', () => (conn.open = false));
      ws.on('message', (raw) => {
        const m = JSON.parse(raw.toString()) as Json;
        conn.subscribes.push(m);
        // The second connection leaves its second subscribe unanswered.
        if (n === 2 && m.channel === channels[1]) return;
        ws.send(JSON.stringify({ type: 'subscribed', channel: m.channel, ...(m.resumeFrom !== undefined ? { resumed: true, replayed: 0, latestSeq: m.resumeFrom } : {}) }));
        if (n !== 1) return;
        const data = { marketId: String(m.channel).split(':')[1], bestBid: 4000, bestAsk: 6000 };
        ws.send(JSON.stringify({ type: 'update', channel: m.channel, seq: m.channel === channels[0] ? 7 : 3, slot: 1, timestamp: Date.now(), data }));
      });
      ws.send(JSON.stringify({ type: 'connected', message: 'hi', timestamp: Date.now() }));
    });
    await new Promise((r) => server.once('listening', r));
    const { port } = server.address() as { port: number };

    const client = resumingWsClient(`ws://127.0.0.1:${port}/ws`, channels, { subscribeTimeoutMs: 300 });
    try {
      await client.connect();
      await waitFor('both updates', async () => client.last(channels[1]!) === 3 && client.last(channels[0]!) === 7);
      sockets[0]!.ws.close(1001, 'going away');
      await waitFor('the third connection subscribed', async () => client.resumes() === 2 && sockets[2]?.subscribes.length === 2);

      expect(sockets.map((s) => s.subscribes.length)).toEqual([2, 2, 2]);
      // The timed-out socket was ended (it would otherwise read orderbook:1 a second time).
      await waitFor('the timed-out socket closed at the server', async () => !sockets[1]!.open);
      expect(openBefore[0]).toBe(0);
      expect(client.overlaps()).toBe(0);
      expect(sockets[2]!.subscribes).toEqual([
        { type: 'subscribe', channel: channels[0], resumeFrom: 7 },
        { type: 'subscribe', channel: channels[1], resumeFrom: 3 },
      ]);
      // The server's 1001, then the client's own end of the socket that stopped answering.
      expect({ closes: client.closes, failedConnects: client.failedConnects(), errors: client.errors }).toEqual({ closes: [1001, 4000], failedConnects: 0, errors: [] });
    } finally {
      await client.stop();
    }
  });

  it('subscribes afresh after a 4010 (the projection switched), and resumes after any other close', async () => {
    const subscribes: Json[][] = [];
    server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    server.on('connection', (ws) => {
      const mine: Json[] = [];
      subscribes.push(mine);
      ws.on('message', (raw) => {
        const m = JSON.parse(raw.toString()) as Json;
        mine.push(m);
        ws.send(JSON.stringify({ type: 'subscribed', channel: m.channel, ...(m.resumeFrom !== undefined ? { resumed: true, replayed: 0, latestSeq: m.resumeFrom } : {}) }));
        ws.send(JSON.stringify({ type: 'update', channel: m.channel, seq: 5, slot: 1, timestamp: Date.now(), data: { marketId: '1', bestBid: 4000, bestAsk: 6000 } }));
      });
      ws.send(JSON.stringify({ type: 'connected', message: 'hi', timestamp: Date.now() }));
    });
    await new Promise((r) => server.once('listening', r));
    const { port } = server.address() as { port: number };
    const resets: string[] = [];
    const client = resumingWsClient(`ws://127.0.0.1:${port}/ws`, ['orderbook:1'], { onReset: (_, reason) => resets.push(reason) });
    try {
      await client.connect();
      await waitFor('the first update', async () => client.last('orderbook:1') === 5);
      [...server.clients][0]!.close(4010, 'Projection switched');
      await waitFor('the second connection subscribed', async () => subscribes.length === 2 && subscribes[1]!.length === 1 && client.last('orderbook:1') === 5);
      [...server.clients].find((c) => c.readyState === 1)!.close(1001, 'going away');
      await waitFor('the third connection subscribed', async () => subscribes.length === 3 && subscribes[2]!.length === 1);
      expect(subscribes.map((x) => x[0])).toEqual([
        { type: 'subscribe', channel: 'orderbook:1' },
        { type: 'subscribe', channel: 'orderbook:1' },
        { type: 'subscribe', channel: 'orderbook:1', resumeFrom: 5 },
      ]);
      expect({ closes: client.closes, errors: client.errors, resets }).toEqual({ closes: [4010, 1001], errors: [], resets: ['projection-switched'] });
    } finally {
      await client.stop();
    }
  });
});
