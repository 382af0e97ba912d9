import WebSocket from 'ws';
import type { Json } from '../support/api';
import { WsClient } from '../support/ws';
import { CLOSE } from '../../server/ws/protocol';

/** What the re-index journey (reindex.test.ts) runs beside a projection switch, and how it judges it. */

/**
 * A /ws client as docs/api.md tells an application to handle the stream: when the server closes
 * its socket it reconnects and subscribes each channel again with `resumeFrom` the last seq it
 * has; when the close is `4010` (the projection switched, D-410) it starts over instead: a fresh
 * subscription, whose sequence is the new schema's. Each start-over opens a new generation of
 * seqs, judged on its own.
 */
export function switchingClient(wsUrl: string, channels: string[]) {
  /** Per generation (one per 4010 received, plus the first), per channel, the seqs received. */
  const generations: Map<string, number[]>[] = [new Map(channels.map((c) => [c, []]))];
  const closes: number[] = [];
  const errors: string[] = [];
  let stopped = false;
  let reconnects = 0;
  let failedConnects = 0;
  let socket: WsClient | undefined;
  const current = () => generations[generations.length - 1]!;
  const last = (c: string) => Math.max(0, ...current().get(c)!);
  let subscribed = new Set<string>();

  const connect = async (): Promise<void> => {
    const s = await WsClient.open(wsUrl);
    socket = s;
    const gen = current();
    s.ws.on('message', (raw) => {
      const m = JSON.parse(raw.toString()) as Json;
      // Updates a socket delivers count in the generation it was opened in.
      if (m.type === 'update' && gen.has(m.channel)) gen.get(m.channel)!.push(m.seq as number);
      else if (m.type === 'error') errors.push(String(m.message));
    });
    try {
      await s.next((m) => m.type === 'connected');
      for (const channel of channels) {
        const resuming = subscribed.has(channel);
        const r = await s.request({ type: 'subscribe', channel, ...(resuming ? { resumeFrom: last(channel) } : {}) });
        if (r.type !== 'subscribed') errors.push(`${channel}: ${JSON.stringify(r)}`);
        if (resuming && r.resumed === false) errors.push(`${channel}: not resumable from ${last(channel)} without a switch`);
        subscribed.add(channel);
      }
    } catch (err) {
      s.ws.terminate();
      await s.closed;
      throw err;
    }
    void s.closed.then(({ code }) => {
      if (stopped) return;
      closes.push(code);
      if (code === CLOSE.projectionSwitched) {
        generations.push(new Map(channels.map((c) => [c, []])));
        subscribed = new Set();
      }
      reconnects += 1;
      void reconnect();
    });
  };
  const reconnect = async (): Promise<void> => {
    while (!stopped) {
      try {
        return await connect();
      } catch {
        failedConnects += 1;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  };
  return {
    connect,
    closes,
    errors,
    reconnects: () => reconnects,
    failedConnects: () => failedConnects,
    generations: () => generations.length,
    /** Updates received in the current generation, over all channels. */
    receivedNow: () => [...current().values()].reduce((n, s) => n + s.length, 0),
    open: () => socket?.ws.readyState === WebSocket.OPEN,
    /** Per generation and channel: the same seq twice, seqs missing between the first and the last. */
    tally: () =>
      generations.flatMap((g, i) =>
        [...g].map(([channel, all]) => {
          const unique = new Set(all);
          const span = all.length ? Math.max(...all) - Math.min(...all) + 1 : 0;
          return { generation: i, channel, received: all.length, duplicates: all.length - unique.size, gaps: span - unique.size };
        }),
      ),
    stop() {
      stopped = true;
      socket?.ws.terminate();
    },
  };
}
export type SwitchingClient = ReturnType<typeof switchingClient>;
