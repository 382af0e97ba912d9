import { resumingWsClient } from '../support/resuming-ws';

/** What the re-index journey (reindex.test.ts) runs beside a projection switch, and how it judges it. */

/**
 * A /ws client as docs/api.md tells an application to handle the stream, the SDK's
 * (test/support/resuming-ws.ts, D-535): when the server closes its socket it reconnects and
 * subscribes each channel again with `resumeFrom` the last seq it has; after `4010` (the
 * projection switched, D-410) it starts over instead: a fresh subscription, whose sequence is the
 * new schema's, announced on each channel by a `projection-switched` reset. Each reset opens a
 * new generation of that channel's seqs, judged on its own.
 */
export function switchingClient(wsUrl: string, channels: string[]) {
  /** Per generation (one per 4010 received, plus the first), per channel, the seqs received. */
  const generations: Map<string, number[]>[] = [new Map(channels.map((c) => [c, []]))];
  /** Each channel's generation: the SDK yields its reset in order, between the old sequence's updates and the new one's. */
  const generationOf = new Map(channels.map((c) => [c, 0]));
  const current = () => generations[generations.length - 1]!;
  const client = resumingWsClient(wsUrl, channels, {
    onUpdate: (u) => generations[generationOf.get(u.channel)!]!.get(u.channel)!.push(u.seq),
    // The SDK drops a seq it has had; the tally counts it as the same seq twice.
    onDuplicate: (channel, seq) => generations[generationOf.get(channel)!]!.get(channel)!.push(seq),
    onReset: (channel, reason) => {
      if (reason !== 'projection-switched') return;
      const g = generationOf.get(channel)! + 1;
      generationOf.set(channel, g);
      if (!generations[g]) generations.push(new Map(channels.map((c) => [c, []])));
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
    open: client.open,
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
