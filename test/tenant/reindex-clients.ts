import WebSocket from 'ws';
import { resumingWsClient } from '../support/resuming-ws';
import { CLOSE } from '../../server/ws/protocol';

/** What the re-index journey (reindex.test.ts) runs beside a projection switch, and how it judges it. */

/**
 * A /ws client as docs/api.md tells an application to handle the stream: when the server closes
 * its socket it reconnects and subscribes each channel again with `resumeFrom` the last seq it
 * has; when the close is `4010` (the projection switched, D-410) it starts over instead: a fresh
 * subscription, whose sequence is the new schema's. Each start-over opens a new generation of
 * seqs, judged on its own. The reconnect loop is the shared one (test/support/resuming-ws.ts).
 */
export function switchingClient(wsUrl: string, channels: string[]) {
  /** Per generation (one per 4010 received, plus the first), per channel, the seqs received. */
  const generations: Map<string, number[]>[] = [new Map(channels.map((c) => [c, []]))];
  const current = () => generations[generations.length - 1]!;
  const client = resumingWsClient(wsUrl, channels, {
    // A closed socket delivers nothing more, so updates go to the generation current when they arrive.
    onMessage: (m) => {
      if (m.type === 'update' && current().has(m.channel)) current().get(m.channel)!.push(m.seq as number);
    },
    onClose: (code) => {
      if (code !== CLOSE.projectionSwitched) return 'resume';
      generations.push(new Map(channels.map((c) => [c, []])));
      return 'start-over';
    },
  });
  return {
    connect: client.connect,
    closes: client.closes,
    errors: client.errors,
    reconnects: client.reconnects,
    failedConnects: client.failedConnects,
    generations: () => generations.length,
    /** Updates received in the current generation, over all channels. */
    receivedNow: () => [...current().values()].reduce((n, s) => n + s.length, 0),
    open: () => client.sockets[client.sockets.length - 1]?.ws.readyState === WebSocket.OPEN,
    /** Per generation and channel: the same seq twice, seqs missing between the first and the last. */
    tally: () =>
      generations.flatMap((g, i) =>
        [...g].map(([channel, all]) => {
          const unique = new Set(all);
          const span = all.length ? Math.max(...all) - Math.min(...all) + 1 : 0;
          return { generation: i, channel, received: all.length, duplicates: all.length - unique.size, gaps: span - unique.size };
        }),
      ),
    stop: client.stop,
  };
}
export type SwitchingClient = ReturnType<typeof switchingClient>;
